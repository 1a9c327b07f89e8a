"""The largest ``k`` the worst-case engines accept (Martin et al. 2007, section 3): a limit of
the parameters, shared by the criteria's declarations, the registry and the engines without
their importing one another."""

from __future__ import annotations

from typing import Final

#: Largest ``k`` accepted for (c,k)-safety and negation-safety. The engines clamp ``k`` to
#: the saturation point (``worst_case.saturation_point``: fewest distinct values in a group,
#: minus one), beyond which more knowledge cannot raise the disclosure, so any ``k`` is cheap;
#: a ``k`` above a billion pieces of knowledge is a typo, refused before anything is read.
MAX_K: Final[int] = 10**9

#: Largest ``k_max`` of the disclosure curve (``worst_case.disclosure_curve``), which returns
#: one point per ``k``: the curve is flat beyond the saturation point, at most the number of
#: distinct sensitive values, so longer curves only repeat its last point. 10^5 points took
#: 526 MB and 5 s on a 12-record release (the fuzz harness's limits stopped it).
MAX_K_CURVE: Final[int] = 10_000

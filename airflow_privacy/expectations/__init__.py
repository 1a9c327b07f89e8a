"""Great Expectations (1.x) custom expectations for privacy-gated releases.

Importing this package registers the expectations and their metrics with GX:

* :class:`ExpectReleaseToBeCKSafe` (batch): the release's maximum disclosure against k basic
  implications is below c (Martin et al. 2007), computed by the core engine.
* :class:`ExpectColumnValuesToNotBeDirectIdentifiers` (column map): no e-mail address,
  phone number, US social security or payment card number; failing rows are listed.
* :class:`ExpectRowsToBeInGroupsOfAtLeastK` (multicolumn map): every row's QI-group has at
  least k rows (k-anonymity, row by row, so the offending rows are reported).

GX is called directly (``great_expectations`` 1.x), not through its Airflow provider, which
does not install beside Airflow 3.3.
"""

from airflow_privacy.expectations.direct_identifiers import (
    ExpectColumnValuesToNotBeDirectIdentifiers,
)
from airflow_privacy.expectations.group_size import (
    ExpectColumnValuesToBeInGroupsOfAtLeastK,
    ExpectRowsToBeInGroupsOfAtLeastK,
)
from airflow_privacy.expectations.safety import ExpectReleaseToBeCKSafe

__all__ = [
    "ExpectColumnValuesToBeInGroupsOfAtLeastK",
    "ExpectColumnValuesToNotBeDirectIdentifiers",
    "ExpectReleaseToBeCKSafe",
    "ExpectRowsToBeInGroupsOfAtLeastK",
]

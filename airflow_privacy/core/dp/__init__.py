"""Differentially private releases of counts (issue: when k-anonymous releases cannot
compose).

Ganta, Kasiviswanathan and Smith, "Composition attacks and auxiliary information in data
privacy", KDD 2008, section 4: partition-based releases (k-anonymity, l-diversity, ...) leak
when intersected, while differential privacy composes and resists arbitrary side
information (their Theorem 15: epsilon-DP implies (e^epsilon - 1)-semantic privacy;
Proposition 17 for (epsilon, delta)-DP).

* :mod:`~airflow_privacy.core.dp.marginals`: the public key set of each declared marginal
  and its count vector from per-combination counts (the only read of the data, done where
  the data lives, with each person's rows bounded);
* :mod:`~airflow_privacy.core.dp.noise`: the mechanism (discrete Gaussian under zCDP, or
  discrete Laplace under pure DP), its scale for a budget, the noise itself and the
  accounting, all from OpenDP; the exact spread of the noise for the report.

No Airflow here, and no data: the engines take counts and return dataclasses.
"""

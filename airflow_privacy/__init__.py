"""airflow-privacy: gate scheduled data releases on worst-case privacy guarantees.

The pure engines live in :mod:`airflow_privacy.core` and never import Airflow; the
Airflow provider, CLI and UI are thin layers over them.
"""

__version__ = "0.1.0"

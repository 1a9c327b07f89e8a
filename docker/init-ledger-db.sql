-- Runs once when the PostgreSQL volume is created: a separate database for the privacy
-- ledger, so release records never share tables with Airflow's metadata database.
CREATE DATABASE privacy_ledger;
GRANT ALL PRIVILEGES ON DATABASE privacy_ledger TO airflow;

"""Storage: records ⇄ SQLite, JSON Lines (and later PostgreSQL, Parquet)."""

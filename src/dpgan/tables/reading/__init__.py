"""Reading private tables (CSV cell by cell as text, Parquet in record batches) and mapping them into
their public schema row by row (conform); writing released tables."""

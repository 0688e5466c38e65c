"""Tables as a data kind: the public schema and its DP inference, the reader (CSV and Parquet, cell
by cell), the conform rules, the encoder, conditions, the pre-training releases and the label
models (post-processors of a fitted generator's output). Nothing is imported here, so a module of
the kind loads only what it needs."""

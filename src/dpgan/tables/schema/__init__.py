"""A table's public metadata: the columns' kinds and domains (columns, the schema), the rule that says
what a cell holds (cells), and a schema to fill in from a header alone (template). Nothing here reads
private values for free: a schema is written by the curator or bought with DP (dpgan.tables.inference)."""

"""A schema for a table that came without one: public hints first, the rest bought with DP (two
Gaussian histograms per column; dpgan.tables.inference.infer has the argument), and the same counts
gathered over record batches (stream_counts)."""

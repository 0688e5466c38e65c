"""The table's fit, read by read: the kind in the fit pipeline (in memory: kind; Parquet in record
batches: streamed), the plan (plan), the public arguments checked (options), the private reads before
training (preparation, stream_preparation), the plug-ins' releases (plugins), the public warm start's
table, checkpoint selection, resume, and the report's words (describe)."""

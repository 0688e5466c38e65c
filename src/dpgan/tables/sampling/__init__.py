"""Rows from a released table model: chunked generation with wanted values (rows), and the label
models, post-processors that redraw the target of sampled rows (label_model: DP-SGD;
table_label_model: read off the released 2-way tables, no ε of its own)."""

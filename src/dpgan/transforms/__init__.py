"""Column transforms: encode rows for the networks, decode generated rows (from public specs only)."""

"""DP statistics released before (or instead of) a GAN, for any data kind: public bases and the
per-label DP Gaussian of flat vectors (series' days, images' pixels), and the tables' one-way and
2-way marginals with the label weights read off them (tables/). The flat-vector models read their
units as one array or in blocks (blocks.py: sums per block and over ranks, the noise once). Imports
only dpgan.privacy, dpgan.errors and the generator's output layout (dpgan.models.output_spans,
public spans and no network; tests/test_import_rules.py), so every kind reads the same mechanism."""

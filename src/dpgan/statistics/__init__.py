"""DP statistics released before (or instead of) a GAN, for any data kind: public bases and the
per-label DP Gaussian of flat vectors (series' days, images' pixels). Imports only dpgan.privacy
and dpgan.errors (tests/test_import_rules.py), so every kind reads the same mechanism."""

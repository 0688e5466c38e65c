"""Fixed-length series as a data kind: the public schema and the codec (long table or array ↔ units).

Its names load on first use (dpgan.lazy)."""

from dpgan.lazy import lazy_names

_PLACES = {
    "SequenceSchema": "dpgan.sequences.schema",
    "ValueColumn": "dpgan.sequences.schema",
}
__getattr__ = lazy_names(__name__, _PLACES)
__all__ = sorted(_PLACES)

"""Fixed-length series as a data kind: the public schema and the codec (long table or array ↔ units)."""

from dpgan.sequences.schema import SequenceSchema, ValueColumn

__all__ = ["SequenceSchema", "ValueColumn"]

"""The codec, from the public schema alone: one column to and from its block of the generator's
output (column_transforms, geo), the table's encoder, and the condition column (conditioning)."""

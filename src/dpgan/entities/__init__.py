"""People with histories as a data kind, "entity": a parent table (one row per entity) and an events
table whose rows name their entity by a key column, protected as one unit (the entity with its parent
row and all its events).

schema.py (the public facts: the key, the two tables' columns, the time column, k = max_events),
columns.py (a column's public cells: each value to a cell of its domain and back), reader.py (the
unit rule on two tables), blocks.py and parquet.py (Parquet tables read in buckets of entities, the
releases summed over them and over torchrun's ranks), statistics.py (the DP statistics model and
its "independent" baseline), fit_kind.py (the kind in the fit pipeline), facade.py
(EntitySynthesizer), commands.py (its command line), settings.py (its settings and models),
registration.py ("entity" in the kind registry).
"""

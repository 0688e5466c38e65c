"""The entity kind's evaluation (issue 52): synthetic entities (a parent row with its events) against
real ones, in the entity's words.

frames.py (two tables read for scoring: keys, typed columns, times), integrity.py (referential
integrity), summaries.py (an entity as one row: its parent row and its events' aggregates),
distributions.py (events per entity, each table's marginals), two_sample.py (can a classifier tell
real entities from synthetic ones?), membership.py (distance to the closest synthetic entity as a
membership attack on whole entities), headline.py (the headline quality score), metrics.py
(`evaluate_entities`: all of it, and the parent-level TSTR), report.py (the HTML page).
"""

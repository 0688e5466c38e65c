"""The names every accountant and entry shares: accountants, PLD grid, RDP orders, samplings.

A module of constants alone, so that the entries (ledger_entry.py), the general events
(events.py) and the composition (composition.py) share them without importing one another: the
entries import dp-accounting's events only on demand, and no module imports back.
"""

from __future__ import annotations

EVENT_MECHANISM = "dp_event"  # the "mechanism" of a saved EventEntry (a LedgerEntry's is "gaussian")

ACCOUNTANTS = ("pld", "rdp", "rdp-classic")
DEFAULT_ACCOUNTANT = "pld"
PLD_DISCRETIZATION = 1e-4
# TF-Privacy's 2019 order grid; with Mironov's Prop. 3 conversion it reproduces the seed papers'
# printed ε (1.26, 9.6, 3.7). Offered for comparison only: it is valid but looser.
CLASSIC_2019_ORDERS = tuple([1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64)))
# RdpAccountant's default orders (kept explicit so two accountants' curves can be added)
RDP_ORDERS = tuple([1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024])
POISSON = "poisson"
# one of N_d disjoint shards chosen uniformly per step (dtgan-g): the binomial mixture of the
# docstring of dpgan.privacy.accounting. Never the Poisson add/remove model, which is only a lower bound here.
ONE_OF_SHARDS = "one-of-shards"
SAMPLINGS = (POISSON, ONE_OF_SHARDS)
# RDP mixture over n: buckets (a, b] are charged δ_b; width 1 up to n = 1/BUCKET_WIDTH, then
# BUCKET_WIDTH·n; the binomial mass above the last bucket, at most BINOMIAL_TAIL·δ, is charged 1.
BUCKET_WIDTH = 1e-3
BINOMIAL_TAIL = 1e-6

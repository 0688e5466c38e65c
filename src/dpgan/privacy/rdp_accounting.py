"""The ledger's RDP side: each entry's RDP curve from dp-accounting (cached per step), the
conversion to δ(ε) vectorised over curves, and the binomial mixture over a one-of-shards entry's
selections (accounting.py's docstring)."""

from __future__ import annotations

import contextlib
import functools
import logging
import math
from collections.abc import Iterator, Sequence

import numpy as np
from dp_accounting import dp_event
from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon as rdp_to_epsilon
from scipy import optimize, stats

from dpgan.privacy.events import EventEntry, event_rdp
from dpgan.privacy.ledger_entry import BINOMIAL_TAIL, BUCKET_WIDTH, Entry, LedgerEntry, accounted


def rdp_curve(event: dp_event.DpEvent, orders: Sequence[float]) -> np.ndarray:
    """RDP of `event` at `orders`, computed by dp-accounting's RdpAccountant (events.event_rdp)."""
    return event_rdp(event, orders)


@contextlib.contextmanager
def quiet_rdp_orders() -> Iterator[None]:
    """dp-accounting logs a warning for every RDP order it drops as non-convergent (small σ).

    Dropping an order keeps ε a valid upper bound (it is a minimum over the remaining orders);
    the warnings would flood a user's terminal during calibration, so they are held back here.
    """
    logger = logging.getLogger("absl")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


@functools.lru_cache(maxsize=256)
def step_rdp(noise_multiplier: float, sampling_rate: float, orders: tuple[float, ...]) -> np.ndarray:
    """dp-accounting's RDP curve of one (Poisson-subsampled) Gaussian step."""
    event: dp_event.DpEvent = dp_event.GaussianDpEvent(noise_multiplier)
    if sampling_rate < 1.0:
        event = dp_event.PoissonSampledDpEvent(sampling_rate, event)
    curve = rdp_curve(event, orders)
    curve.setflags(write=False)
    return curve


def regular_rdp(entries: tuple[Entry, ...], orders: tuple[float, ...]) -> np.ndarray:
    """RDP curve of add/remove entries: count × the step curve, summed in order (as RdpAccountant
    composes a SelfComposedDpEvent); a general entry's step curve is RdpAccountant's own."""
    rdp = np.zeros(len(orders))
    for e in entries:
        if isinstance(e, EventEntry):
            rdp += e.count * accounted(e, _event_rdp, e.event, orders)
        else:
            rdp += e.count * step_rdp(e.noise_multiplier, e.sampling_rate, orders)
    return rdp


@functools.lru_cache(maxsize=256)
def _event_rdp(event: dp_event.DpEvent, orders: tuple[float, ...]) -> np.ndarray:
    curve = event_rdp(event, orders)
    curve.setflags(write=False)
    return curve


def rdp_log_delta(orders: Sequence[float], rdp: np.ndarray, epsilon: float, classic: bool = False) -> np.ndarray:
    """log δ(ε) for each row of `rdp` (shape (..., orders)), vectorised.

    classic=False is dp-accounting's `compute_delta` (Balle et al. 2020 Prop. 12, with the KL
    bound for α near 1), row by row; classic=True is Mironov's Prop. 3, min_α (α−1)(RDP(α) − ε).
    The per-n RDP mixture needs it for hundreds of curves per ε, which the library's loop over
    orders makes too slow for calibration; tests check it equals `compute_delta`."""
    a = np.asarray(orders, dtype=np.float64)
    rdp = np.asarray(rdp, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if classic:
            return np.min((a - 1.0) * (rdp - epsilon), axis=-1)
        kl = np.where(rdp > 0, 0.5 * np.log1p(-np.exp(-rdp)), -np.inf)
        bound = np.where(a > 1.01, (a - 1.0) * (rdp - epsilon + np.log1p(-1.0 / a)) - np.log(a), np.inf)
        return np.min(np.minimum(kl, bound), axis=-1)


@functools.lru_cache(maxsize=64)
def binomial_buckets(trials: int, rate: float, tail: float) -> tuple[np.ndarray, np.ndarray, float]:
    """Buckets of n ~ Binomial(trials, rate) for a mixture whose terms grow with n.

    Returns (tops, weights, mass_above): bucket i holds the n in (tops[i-1], tops[i]] (the first
    [0, tops[0]]) with probability weights[i], and is charged at its top; mass_above ≤ `tail` is
    the probability of n > tops[-1], to be charged at most 1. Buckets have width 1 up to
    n = 1/BUCKET_WIDTH and then BUCKET_WIDTH·n."""
    if rate >= 1.0:
        return np.array([trials], dtype=np.int64), np.array([1.0]), 0.0
    dist = stats.binom(trials, rate)
    low = int(max(0, dist.ppf(tail) - 1))
    high = int(min(trials, dist.isf(tail)))
    while high < trials and dist.sf(high) > tail:
        high += 1
    unit = int(1.0 / BUCKET_WIDTH)
    tops = np.arange(low, min(high, unit) + 1, dtype=np.int64)
    if high > unit:
        start = max(low, unit)
        k = np.arange(int(math.ceil(math.log(high / start) / math.log1p(BUCKET_WIDTH))) + 2)
        wide = np.unique(np.ceil(start * (1.0 + BUCKET_WIDTH) ** k).astype(np.int64))
        tops = np.unique(np.concatenate([tops, np.minimum(wide, high)]))
    below = dist.cdf(tops)
    above = dist.sf(tops)
    # P(prev < n ≤ top), from whichever tail keeps it accurate
    mean = trials * rate
    prev_below = np.concatenate([[0.0], below[:-1]])
    prev_above = np.concatenate([[1.0], above[:-1]])
    weights = np.where(tops <= mean, below - prev_below, prev_above - above)
    weights = np.maximum(weights, 0.0)
    return tops, weights, float(above[-1])


def rdp_epsilon(
    orders: tuple[float, ...], base: np.ndarray, shard: LedgerEntry | None, delta: float, accountant: str
) -> float:
    """ε at δ for the RDP curve `base` of the add/remove events, mixed over the shard entry's n.

    Without a shard entry it is dp-accounting's conversion of `base` (Mironov's for rdp-classic).
    With one, δ(ε) = Σ_buckets P(bucket)·δ(base + n_top·α/(2σ²); ε) + P(n above the buckets),
    solved for ε (module docstring)."""
    classic = accountant == "rdp-classic"
    if shard is None:
        if classic:
            return float(np.min(base + math.log(1.0 / delta) / (np.asarray(orders) - 1.0)))
        return float(rdp_to_epsilon(orders, base, delta)[0])
    unit = step_rdp(shard.noise_multiplier, 1.0, orders)
    tops, weights, above = binomial_buckets(int(shard.count), shard.sampling_rate, BINOMIAL_TAIL * delta)
    curves = base[None, :] + tops[:, None].astype(np.float64) * unit[None, :]

    def excess(epsilon: float) -> float:
        deltas = np.minimum(np.exp(rdp_log_delta(orders, curves, epsilon, classic)), 1.0)
        return float(weights @ deltas) + above - delta

    if excess(0.0) <= 0:
        return 0.0
    high = 1.0
    while excess(high) > 0:
        high *= 2.0
        if high > 1e7:
            return math.inf
    return float(optimize.brentq(excess, 0.0, high, xtol=1e-12, rtol=1e-10))

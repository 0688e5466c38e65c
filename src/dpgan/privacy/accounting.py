"""ε(δ) of the privacy ledger: every read of private data as a dp-accounting event, composed.

dp-accounting (Google) is the source of truth for every ε dpgan prints, saves or reports. The
list of events is dpgan.privacy.ledger's (re-exported here: this module is the one interface);
this module turns each into dp-accounting's RDP curve or PLD, composes them and converts to ε.
The neighbouring relation is add/remove-one record throughout.

Two kinds of entry
------------------
- `LedgerEntry`: a Gaussian mechanism, Poisson-subsampled or one-of-shards, repeated `count`
  times. It is the fast path: calibration searches σ over thousands of compositions of it and the
  progress bar composes it step by step, so its PLD (σ/√c for unsampled repeats, FFT
  self-composition, cached prefixes, a grid widened at small σ) and its RDP curve (cached per
  (σ, q)) are built directly from dp-accounting's Gaussian primitives, exactly as PLDAccountant
  and RdpAccountant build them (tests check both against those accountants).
- `EventEntry` (dpgan.privacy.events): any other dp-accounting `DpEvent` (Laplace, a selection
  by RepeatAndSelect, zCDP, a mixture of Gaussians, ...) with a label, note, count and extra δ.
  Its PLD or RDP curve comes from dp-accounting's PLDAccountant / RdpAccountant themselves (add/
  remove-one, on the ledger's grid and orders), so a new mechanism needs no change here. An entry
  that no accountant supports under add/remove-one (replace-one sampling, non-private events) is
  refused when built; one that the asked accountant cannot account (RDP-only events under "pld")
  is refused by `epsilon_of` and by a budgeted ledger's `add` / `reserve`, naming the entry.
Both compose with each other and with the one-of-shards mixture below (the mixture's "A" is the
composition of every other entry, of either kind).

One-of-shards events (dtgan-g, `sampling="one-of-shards"`)
-----------------------------------------------------------
dtgan-g trains N_d critics WITHOUT noise, critic j on shard j only; a record's shard is a keyed
hash of its content, so neighbouring tables D, D' (one record x added or removed) differ in
exactly one shard k. Each of the T generator steps picks a critic J_t uniformly, independently of
the data, and releases the B clipped gradients at G's output plus Gaussian noise of std σ·2C√B
(`noise_multiplier` = σ: the step's L2 sensitivity is 2C√B, dpgan.training.dp_generator).

Claim. With A the composition of the ledger's other (add/remove) events and G(s) one Gaussian
mechanism of noise multiplier s (G(∞): nothing released), the whole ledger satisfies, for all ε,

    δ(ε) ≤ Σ_{n=0..T} Binomial(n; T, 1/N_d) · δ_{A ∘ G(σ/√n)}(ε).

Proof. Let J = (J_1..J_T) be the selections and R every other random draw except the Gaussian
noise of the releases (critic initialisations and minibatches, G's inputs and conditions, the
shard key). (J, R) is independent of the data; with ideal randomness, one random stream shared by
all of these is equal in law to one independent tape per consumer, so conditioning on (J, R) is
well defined. Fix (J, R) and the outputs of the events in A (they are released before training and
only enter it as inputs). Then critic j's state at any step (weights, Adam moments) is a
deterministic function of shard j, R and the released history (G's trajectory is a function of the
released noisy gradients and of R), and so is the changed shard k = hash_key(x). At a step with
J_t ≠ k the release is f_t(history) + noise with the same f_t under D and D': the same conditional
law. At a step with J_t = k it is h_t(D, history) + N(0, (σ·2C√B)² I) where h_t takes values in B
rows of norm ≤ C, so ‖h_t(D, ·) − h_t(D', ·)‖ ≤ 2C√B whatever the critic's hidden state: a
Gaussian mechanism of noise multiplier σ, chosen adaptively. So, given (J, R), the ledger is an
adaptive composition of A and n = #{t : J_t = k} Gaussian mechanisms of multiplier σ, which is
dominated by A ∘ G(σ/√n) (adaptively composed Gaussian mechanisms are dominated by one Gaussian
with 1/s² = Σ 1/σ_i²: μ-GDP composes as μ² = Σ μ_i², Dong, Roth and Su 2022; dominating pairs
compose adaptively, Zhu, Dong and Wang 2022). The output's law under D is the (J, R)-mixture of
these conditional laws, with the same mixing law under D'. The hockey-stick divergence is jointly
convex, so δ(ε) ≤ E_{J,R}[δ_{A ∘ G(σ/√n)}(ε)], and n ~ Binomial(T, 1/N_d) because the J_t are
independent and uniform and k is fixed. ∎

The argument needs nothing about the critics that were not selected; that is why it replaces
the Wang–Balle–Kasiviswanathan (2019) per-step amplification bound used before (sampling one of
N_d items without replacement, replace-one), which needs the unselected shards' contributions to
have the same law under both neighbours given the released history. Here the hidden critic state
makes that fail: no theorem covered it. The Poisson add/remove model at rate 1/N_d is a realisable
lower bound (privacy README §2 vii) and is never used.

Computation.
- PLD: δ(ε) is linear in the privacy-loss distribution and composition is convolution, so by the
  binomial theorem for convolution powers Σ_n Bin(n; T, q)·PLD(G(σ))^{⊛n} =
  ((1−q)·PLD(∅) + q·PLD(G(σ)))^{⊛T}, and PLD(G(σ))^{⊛n} = PLD(G(σ/√n)). The shard entry is
  therefore dp-accounting's pessimistic Gaussian PLD mixed with the identity at weight q = 1/N_d
  (`compute_mixture`; a mixture of pessimistic PLDs is pessimistic), self-composed T times by FFT
  and composed with A's PLD: the bound above, with no truncation of the binomial beyond
  dp-accounting's own pessimistic 1e-15 tail. Checked against the closed-form Gaussian mixture
  to 1e-4 (measured ≤ 2e-7) in tests/privacy/test_accounting.py.
- RDP: per n, RDP_n(α) = RDP_A(α) + n·α/(2σ²) (the curves add; the Gaussian curve from
  dp-accounting), converted to δ_n(ε) by dp-accounting's conversion (Balle et al. 2020;
  rdp-classic: Mironov's min_α exp((α−1)(RDP_n(α) − ε))) and mixed over the binomial. δ_n grows
  with n, so n is grouped into buckets each charged at its largest n (width 1 up to n = 1000,
  then 0.1% of n; the lowest bucket is [0, n_lo] with P(n ≤ n_lo) ≤ 1e-6·δ); the binomial's mass
  above the last bucket (≤ 1e-6·δ) is charged δ_n = 1.
  Converting per n and then mixing is tighter than converting the mixed curve
  (1/(α−1))·log E exp((α−1)·RDP_n(α)) (also valid), since each n gets its own order.
A ledger may hold one kind of shard event (one σ and N_d; several entries of that kind are one
entry with the summed count: each of their steps picks the changed shard independently with
probability 1/N_d). Two kinds would need a
joint distribution of two counts; nothing in dpgan builds such a ledger, so it is refused.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from dpgan.privacy.ledger import Budget, PrivacyLedger, Reservation, epsilon_of
from dpgan.privacy.ledger_entry import (
    ACCOUNTANTS,
    BINOMIAL_TAIL,
    BUCKET_WIDTH,
    CLASSIC_2019_ORDERS,
    DEFAULT_ACCOUNTANT,
    ONE_OF_SHARDS,
    PLD_DISCRETIZATION,
    POISSON,
    RDP_ORDERS,
    Entry,
    LedgerEntry,
    check_accountant,
    check_epsilon_delta,
    composed_event,
    entry_from_dict,
)

if TYPE_CHECKING:
    from dpgan.privacy.composition import IncrementalAccountant
    from dpgan.privacy.events import EventEntry
    from dpgan.privacy.pld_accounting import composed_pld, entry_pld, pld_discretization, prefix_pld, step_pld
    from dpgan.privacy.rdp_accounting import binomial_buckets, rdp_epsilon, rdp_log_delta, regular_rdp, step_rdp

# The composition (dp-accounting, scipy: about a second of imports) loads on first use, so that a
# saved model loads and samples without it; these names are this interface's all the same (PEP 562;
# written out rather than dpgan.lazy's, since privacy/ imports nothing outside itself).
_LAZY_NAMES = {
    "IncrementalAccountant": "dpgan.privacy.composition",
    "EventEntry": "dpgan.privacy.events",
    **{
        name: "dpgan.privacy.pld_accounting"
        for name in ("composed_pld", "entry_pld", "pld_discretization", "prefix_pld", "step_pld")
    },
    **{
        name: "dpgan.privacy.rdp_accounting"
        for name in ("binomial_buckets", "rdp_epsilon", "rdp_log_delta", "regular_rdp", "step_rdp")
    },
}


def __getattr__(name: str) -> object:
    if name not in _LAZY_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_LAZY_NAMES[name]), name)


# one interface: the ledger, ε(δ), and the entries and accountant sides it is built from
__all__ = [
    "ACCOUNTANTS",
    "BINOMIAL_TAIL",
    "BUCKET_WIDTH",
    "CLASSIC_2019_ORDERS",
    "DEFAULT_ACCOUNTANT",
    "ONE_OF_SHARDS",
    "PLD_DISCRETIZATION",
    "POISSON",
    "RDP_ORDERS",
    "Budget",
    "Entry",
    "EventEntry",
    "IncrementalAccountant",
    "LedgerEntry",
    "PrivacyLedger",
    "Reservation",
    "binomial_buckets",
    "check_accountant",
    "check_epsilon_delta",
    "composed_event",
    "composed_pld",
    "entry_from_dict",
    "entry_pld",
    "epsilon_of",
    "pld_discretization",
    "prefix_pld",
    "rdp_epsilon",
    "rdp_log_delta",
    "regular_rdp",
    "step_pld",
    "step_rdp",
]

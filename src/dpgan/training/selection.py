"""DP checkpoint selection (Boob et al.'s option): keep G at K points, release the best by a DP choice.

Where the private data enters, and what each part costs:
- The held-out split. Before training, each record goes to the held-out part with a public
  probability h, decided by a keyed BLAKE2b hash of the record's own encoding (the key is drawn per
  fit from the fit's RNG and never saved), so adding or removing one record leaves every other
  record on its side (`heldout_mask`). The GAN and the DP extras train on the other part only.
- The snapshots. G's released average is copied at K evenly spaced steps of training
  (`SnapshotKeeper`): each copy is post-processing of the training's DP releases, already charged.
- The scores. Each candidate g draws `samples` rows from public noise (post-processing) and
  estimates the cell probabilities p_g of every 2-way marginal of the discretised columns (each
  softmax span of the encoding: a category, a numeric column's bins and point masses, a null flag).
  A held-out record x scores s_g(x) = mean over span pairs of [2·p_g(cell(x)) − Σ_c p_g(c)²], the
  quadratic (Brier) proper scoring rule. Since Σ_c p_g(c)² ≥ p_g(cell(x))², each term is at most
  2p − p² = 1 − (1 − p)² ≤ 1, and at least 0 − 1 = −1: s_g(x) ∈ [−1, 1] for every g.
- The choice. u_g = Σ_{x held out} s_g(x). Adding or removing one record moves every u_g by its
  s_g(x), inside the one interval [−1, 1] of width R = 2, so the exponential mechanism
  P(g) ∝ exp(ε_sel·u_g / 2) is ε_sel-DP (dpgan.privacy.mechanisms.exponential_probabilities), drawn
  as report-noisy-max with Gumbel noise. The top Q: Q rounds at ε_sel/Q each, without replacement.
  The ledger records Q pure (ε_sel/Q)-DP events (dpgan.privacy.events.pure_dp_event), reserved
  before the GAN's σ is calibrated so that training, selection and everything else land on ε.
Composition is sequential over the whole table (sound). The training part and the held-out part
are disjoint, so parallel composition would allow max(ε_train, ε_sel) instead of their
composition; dpgan does not claim it (the split's per-record hash and the shared noisy row count
would need their own argument).
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Sequence

import numpy as np
import torch

from dpgan.models.output_spans import TANH, OutputSpan
from dpgan.privacy.mechanisms import exponential_top
from dpgan.training.checkpoint import Snapshot
from dpgan.training.conditions import ConditionPrior

SELECTION_EVENT = "DP checkpoint selection (exponential mechanism)"
# the width of the interval every record's score lies in (module docstring): s_g(x) ∈ [−1, 1]
SCORE_RANGE = 2.0
SNAPSHOT_PREFIX = "kept"


def heldout_mask(encoded: np.ndarray, rate: float, key: bytes) -> np.ndarray:
    """True for the records that go to the held-out part: a keyed hash of each record's own
    encoding, mapped to [0, 1) and compared with the public `rate`. A record's side depends on it
    and the key only, never on the other records."""
    rows = np.ascontiguousarray(encoded, dtype=np.float32)
    mask = np.empty(rows.shape[0], dtype=bool)
    for i in range(rows.shape[0]):
        digest = hashlib.blake2b(rows[i].tobytes(), key=key, digest_size=8).digest()
        mask[i] = int.from_bytes(digest, "little") / 2.0**64 < rate
    return mask


def snapshot_steps(steps: int, count: int) -> list[int]:
    """K evenly spaced steps ending at the last one: round(T·k/K), k = 1..K, without repeats."""
    return sorted({max(1, round(steps * k / count)) for k in range(1, count + 1)}) if steps > 0 else []


class SnapshotKeeper:
    """Copies of G's released average at fixed steps (fixed before training: public)."""

    def __init__(self, count: int, steps: Sequence[int] = ()) -> None:
        self.count = count  # snapshots to keep, evenly spaced once the fit's steps are known (`plan`)
        self.steps = list(steps)
        self.states: dict[int, dict[str, torch.Tensor]] = {}

    def __call__(self, steps_done: int, released: torch.nn.Module) -> None:
        if steps_done in self.steps:
            self.states[steps_done] = {k: v.detach().clone() for k, v in released.state_dict().items()}

    def save_to(self, snapshot: Snapshot) -> None:
        for step, state in self.states.items():
            for key, tensor in state.items():
                snapshot.tensors[f"{SNAPSHOT_PREFIX}/{step}/{key}"] = tensor.contiguous()

    def restore_from(self, snapshot: Snapshot) -> None:
        self.states = {}
        for name, tensor in snapshot.tensors.items():
            prefix, _, rest = name.partition("/")
            if prefix != SNAPSHOT_PREFIX:
                continue
            step, _, key = rest.partition("/")
            self.states.setdefault(int(step), {})[key] = tensor

    def candidates(self) -> list[tuple[int, dict[str, torch.Tensor]]]:
        """(step, state) of every snapshot, in step order; all K must be there."""
        missing = [s for s in self.steps if s not in self.states]
        if missing:
            raise RuntimeError(f"internal error: no snapshot of G at steps {missing}")
        return [(s, self.states[s]) for s in self.steps]


def score_variables(spans: Sequence[OutputSpan]) -> list[OutputSpan]:
    """The discretised variables a score reads: every softmax span of the encoding."""
    return [s for s in spans if s.activation != TANH]


def codes_of(encoded: torch.Tensor | np.ndarray, variables: Sequence[OutputSpan]) -> np.ndarray:
    """Each row's cell in every variable (the argmax of its span): rows × variables."""
    array = encoded.detach().cpu().numpy() if isinstance(encoded, torch.Tensor) else np.asarray(encoded)
    if not variables:
        return np.zeros((array.shape[0], 0), dtype=np.int64)
    return np.stack([array[:, v.start : v.stop].argmax(axis=1) for v in variables], axis=1).astype(np.int64)


def variable_pairs(variables: Sequence[OutputSpan]) -> list[tuple[int, ...]]:
    """Pairs of variables of different columns (2-way marginals); single variables when there are none."""
    pairs = [
        (i, j)
        for i, j in itertools.combinations(range(len(variables)), 2)
        if variables[i].column != variables[j].column
    ]
    return pairs or [(i,) for i in range(len(variables))]


def brier_scores(
    sample_codes: np.ndarray, row_codes: np.ndarray, widths: Sequence[int], marginals: Sequence[tuple[int, ...]]
) -> np.ndarray:
    """s(x) for every row: mean over the marginals of 2·p(cell(x)) − Σ_c p(c)², with p the cell
    frequencies of the candidate's samples. Each term is in [−1, 1] (module docstring)."""
    scores = np.zeros(row_codes.shape[0])
    if not marginals or sample_codes.shape[0] == 0:
        return scores
    for marginal in marginals:
        size = int(np.prod([widths[v] for v in marginal]))
        sample_cells = np.zeros(sample_codes.shape[0], dtype=np.int64)
        row_cells = np.zeros(row_codes.shape[0], dtype=np.int64)
        for v in marginal:
            sample_cells = sample_cells * widths[v] + sample_codes[:, v]
            row_cells = row_cells * widths[v] + row_codes[:, v]
        p = np.bincount(sample_cells, minlength=size) / sample_codes.shape[0]
        scores += 2.0 * p[row_cells] - float(p @ p)
    return scores / len(marginals)


def candidate_samples(
    G: torch.nn.Module,
    count: int,
    noise_dim: int,
    condition: ConditionPrior | None,
    generator: torch.Generator,
) -> torch.Tensor:
    """`count` encoded rows of a candidate from public noise (conditions from the unflattened prior)."""
    z = torch.randn(count, noise_dim, generator=generator, device=generator.device)
    onehot = None if condition is None else condition.one_hot(condition.draw(count, generator, False))
    G.eval()
    with torch.no_grad():
        return G.sample_encoded(z, onehot)


def select_snapshots(
    candidates: Sequence[dict[str, torch.Tensor]],
    build: Callable[[], torch.nn.Module],
    heldout: torch.Tensor,
    spans: Sequence[OutputSpan],
    *,
    epsilon: float,
    top: int,
    samples: int,
    noise_dim: int,
    condition: ConditionPrior | None,
    generator: torch.Generator,
    rng: np.random.Generator,
) -> list[int]:
    """The indices of the `top` candidates chosen by the exponential mechanism at ε (in Q rounds of
    ε/Q), from their utilities on the held-out rows. The caller charges the ledger (Q pure events);
    the utilities never leave this function."""
    variables = score_variables(spans)
    widths = [v.width for v in variables]
    marginals = variable_pairs(variables)
    heldout_codes = codes_of(heldout, variables)
    utilities = np.zeros(len(candidates))
    for k, state in enumerate(candidates):
        G = build()
        G.load_state_dict(state, strict=True)
        sample_codes = codes_of(candidate_samples(G, samples, noise_dim, condition, generator), variables)
        utilities[k] = brier_scores(sample_codes, heldout_codes, widths, marginals).sum()
    return exponential_top(utilities, epsilon, SCORE_RANGE, top, rng)


class GeneratorMixture(torch.nn.Module):
    """The union of Q generators' samples (Boob et al.'s top-Q variant): row i of a draw comes from
    member i mod Q, so n rows are n/Q rows of each chosen generator."""

    def __init__(self, members: Sequence[torch.nn.Module]) -> None:
        super().__init__()
        self.members = torch.nn.ModuleList(members)

    def sample_encoded(self, z: torch.Tensor, condition: torch.Tensor | None = None) -> torch.Tensor:
        rows = torch.arange(z.shape[0])
        out: torch.Tensor | None = None
        for k, member in enumerate(self.members):
            index = rows[rows % len(self.members) == k]
            if index.numel() == 0:
                continue
            block = member.sample_encoded(z[index], None if condition is None else condition[index])
            if out is None:
                out = block.new_empty((z.shape[0], block.shape[1]))
            out[index] = block
        assert out is not None
        return out


def released_generator(
    chosen: Sequence[int], candidates: Sequence[dict[str, torch.Tensor]], build: Callable[[], torch.nn.Module]
) -> torch.nn.Module:
    """The chosen candidate, or for Q > 1 the mixture of the chosen ones (in the order chosen)."""
    members = []
    for k in chosen:
        G = build()
        G.load_state_dict(candidates[k], strict=True)
        G.eval()
        members.append(G)
    return members[0] if len(members) == 1 else GeneratorMixture(members).eval()

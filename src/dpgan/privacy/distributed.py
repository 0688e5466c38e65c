"""Data-parallel DP-SGD over torch.distributed: K processes compute one release together.

The privacy argument is that nothing about a release changes with K: the K processes ("ranks")
run in lockstep and only the expensive, noise-free part of a step is split.

- One seed. Rank 0 draws the fit's seed (OS entropy, or the user's) and broadcasts it, so every
  rank's NumPy and torch generators are identical. Every draw — the DP preprocessing's noise,
  the Poisson mask over all N units, the penalty partners and α, G's noise, the release's noise —
  is then the same number on every rank: one release made K times over, not K releases (each
  rank "samples its shard with the same q": its shard is the batch positions it owns).
- Split sums. In a release, rank r clips and sums only its share of the batch (`shard_positions`:
  positions r, r+K, ...; with microbatches, the microbatches whose id ≡ r mod K, so no clipped
  unit is cut in two). Σ_r Σ_{i ∈ share r} clip(g_i) = Σ_{i ∈ B} clip(g_i), so `all_reduce_sum`
  gives every rank the single-process clipped sum (up to the order of float additions), whose
  sensitivity is still C.
- Noise once. The Gaussian noise is added AFTER the reduce, with the single-process std, from the
  shared generator: every rank adds the same draw to the same sum, so every rank holds the same
  noisy sum and its variance is the single-process one. Noise added per rank before the reduce
  would be K draws (variance K·σ²C², or σ²C²/K if each were scaled down: an unaccounted release).
- Split fakes. The terms that read no private record (the critic's fake-only term, G's step) are
  split the same way over the fake batch's positions, each rank's share summed ÷ the whole batch
  size and all-reduced: every rank still draws the whole batch's inputs, so the streams stay in
  lockstep. No noise and no ledger event belong to them, split or not.
- One ledger. Every rank reserves and charges the same events in the same order (nothing in the
  ledger depends on the rank), so each holds the single-process ledger; only rank 0 writes files.

Each rank reads the whole in-memory table here; sharding the table itself is the streaming step's.
This module imports nothing of dpgan but errors (the engine's import rule).
"""

from __future__ import annotations

import os
import secrets
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from dpgan.errors import DPGanWarning, InputError

Tensors = dict[str, torch.Tensor]
SEED_BITS = 63  # a seed fits a signed int64 tensor for the broadcast


@dataclass(frozen=True)
class ProcessGroupContext:
    """The fit's view of its process group: `world_size` K, this process's `rank`, and the
    collectives a lockstep fit needs. `world_size` 1 is the single process: every call is the
    identity (no torch.distributed call at all), so one code path serves both."""

    world_size: int = 1
    rank: int = 0
    device: str = "cpu"  # where the collectives' buffers live (cuda for NCCL)

    def __post_init__(self) -> None:
        if self.world_size < 1 or not 0 <= self.rank < self.world_size:
            raise InputError(f"rank {self.rank} is not in a process group of size {self.world_size}")

    @property
    def is_main(self) -> bool:
        """Rank 0: the only process that prints, writes the model and writes checkpoints."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    def owned(self, blocks: int) -> range:
        """This rank's share of `blocks` numbered blocks (Parquet buckets, a file's blocks, a
        stream's batches): block b is rank b mod K's. Public: the count, the rank and K decide it,
        never what a block holds; on one process every block."""
        return range(self.rank, blocks, self.world_size)

    def owns(self, block: int) -> bool:
        """Whether block number `block` is this rank's (`owned`), when the count is not known ahead."""
        return block % self.world_size == self.rank

    def all_reduce_sum(self, tensors: Mapping[str, torch.Tensor]) -> Tensors:
        """Σ over ranks of each tensor (same keys, shapes and order on every rank), in ONE
        collective: the tensors travel as one flat buffer of their common dtype and come back in
        their own dtypes and devices. Sums only: never pass noise through it (module docstring)."""
        if not self.distributed or not tensors:
            return dict(tensors)
        import torch.distributed as dist

        dtype = _common_dtype(tensors.values())
        flat = torch.cat([t.detach().reshape(-1).to(dtype) for t in tensors.values()]).to(self.device)
        dist.all_reduce(flat, op=dist.ReduceOp.SUM)
        out: Tensors = {}
        offset = 0
        for name, tensor in tensors.items():
            n = tensor.numel()
            out[name] = flat[offset : offset + n].reshape(tensor.shape).to(dtype=tensor.dtype, device=tensor.device)
            offset += n
        return out

    def all_reduce_grads(self, module: torch.nn.Module) -> None:
        """Replace each parameter's .grad by its Σ over ranks (one collective; a missing .grad
        counts as zeros). For gradients of terms that read no private record (a rank's share of
        the fake rows), scaled so that the sum is the single-process mean: no noise belongs here."""
        if not self.distributed:
            return
        params = dict(module.named_parameters())
        summed = self.all_reduce_sum(
            {name: p.grad if p.grad is not None else torch.zeros_like(p) for name, p in params.items()}
        )
        for name, p in params.items():
            p.grad = summed[name]

    def barrier(self) -> None:
        """Wait for every rank (e.g. before rank 0 deletes a checkpoint the others may still read)."""
        if self.distributed:
            import torch.distributed as dist

            dist.barrier()

    def shared_seed(self, seed: int | None) -> int:
        """The fit's seed, the same on every rank: `seed` if given, else fresh OS entropy, both
        taken from rank 0 (a seed given per rank that differs would break the lockstep)."""
        value = secrets.randbits(SEED_BITS) if seed is None else int(seed)
        if not self.distributed:
            return value
        import torch.distributed as dist

        buffer = torch.tensor([value if self.is_main else 0], dtype=torch.int64, device=self.device)
        dist.broadcast(buffer, src=0)
        return int(buffer.item())

    def agree(self, digest: int) -> bool:
        """Whether every rank holds the same `digest` (e.g. of its copy of the table): rank 0's is
        broadcast and each rank's verdict all-reduced, so all ranks answer the same (and can refuse
        together instead of one of them waiting forever in a collective)."""
        if not self.distributed:
            return True
        import torch.distributed as dist

        mine = torch.tensor([digest % 2**SEED_BITS], dtype=torch.int64, device=self.device)
        theirs = mine.clone()
        dist.broadcast(theirs, src=0)
        differs = (theirs != mine).to(torch.int64)
        dist.all_reduce(differs, op=dist.ReduceOp.SUM)
        return int(differs.item()) == 0

    def lockstep_seed(self, digest: int, what: str, seed: int | None) -> int:
        """The seed every rank of a data-parallel fit uses (rank 0's: the user's, the checkpoint's or
        fresh OS entropy), after checking that every rank holds the same data (`digest`): a rank with
        other data would make other releases and leave the others waiting in a collective. The digest
        is compared between the processes only; it is not released."""
        if not self.agree(digest):
            raise InputError(f"the ranks of a distributed fit were given different {what}: give each the same data")
        return self.shared_seed(seed)


SINGLE_PROCESS = ProcessGroupContext()


@contextmanager
def rank_session(device: str = "cpu") -> Iterator[ProcessGroupContext]:
    """A command's fit on this process or this torchrun rank: the process group's context (joined
    from the environment, `process_group_context`), the DP warnings silenced on every rank but 0
    (rank 0 alone prints, and writes: the caller's part), and the group destroyed at the end,
    whatever happened."""
    context = process_group_context(device=device)
    if not context.is_main:
        warnings.simplefilter("ignore", DPGanWarning)
    try:
        yield context
    finally:
        if context.distributed:
            import torch.distributed as dist

            dist.destroy_process_group()


def shard_positions(size: int, rank: int, world_size: int, groups: torch.Tensor | None = None) -> torch.Tensor:
    """The batch positions rank `rank` of `world_size` clips and sums: r, r+K, ... (a balanced
    share), or with microbatch ids `groups` every unit of the microbatches g ≡ r mod K, so each
    microbatch's mean is clipped whole on one rank. The shares partition range(size)."""
    if groups is not None:
        return torch.nonzero(groups.long() % world_size == rank, as_tuple=True)[0]
    return torch.arange(rank, size, world_size)


def process_group_context(*, init_from_env: bool = True, device: str = "cpu") -> ProcessGroupContext:
    """The current process group's context: an initialized torch.distributed default group, else
    (under torchrun: RANK, WORLD_SIZE, MASTER_ADDR in the environment, WORLD_SIZE > 1 and
    `init_from_env`) one initialized here — gloo on CPU, NCCL when `device` is cuda — else the
    single process."""
    import torch.distributed as dist

    if not dist.is_available():
        return SINGLE_PROCESS
    if not dist.is_initialized():
        world = _env_int("WORLD_SIZE")
        if not init_from_env or world is None or world <= 1:
            return SINGLE_PROCESS
        if "MASTER_ADDR" not in os.environ or _env_int("RANK") is None:
            raise InputError("WORLD_SIZE > 1 needs RANK and MASTER_ADDR too: start the fit with torchrun")
        cuda = str(device).startswith("cuda")
        if cuda:
            torch.cuda.set_device(_env_int("LOCAL_RANK") or 0)
        dist.init_process_group(backend="nccl" if cuda else "gloo")
    world, rank = dist.get_world_size(), dist.get_rank()
    if world == 1:
        return SINGLE_PROCESS
    on_cuda = dist.get_backend() == "nccl"
    return ProcessGroupContext(world, rank, f"cuda:{torch.cuda.current_device()}" if on_cuda else "cpu")


def _env_int(name: str) -> int | None:
    value = os.environ.get(name)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise InputError(f"the environment variable {name} must be an integer") from None


def _common_dtype(tensors) -> torch.dtype:  # noqa: ANN001
    dtype = torch.float32
    for tensor in tensors:
        dtype = torch.promote_types(dtype, tensor.dtype)
    return dtype


__all__ = ["SINGLE_PROCESS", "ProcessGroupContext", "process_group_context", "rank_session", "shard_positions"]

"""Poisson sampling drawn step by step from its own generator, so that the next K steps' batches
can be known before the rows are read (a streamed fit gathers them in one pass over the data).

Why this is still Poisson sampling per step, exactly as the ledger accounts it:
1. Per step, the Bernoulli mask "each of the N rows joins with probability q, independently" and
   the two-stage draw "k ~ Binomial(N, q), then a uniform k-subset of the N rows, without
   replacement" are the same distribution over subsets: under the mask a given subset S of size
   k has probability q^k (1-q)^(N-k) = P(Binomial = k) / C(N, k), which is the two-stage
   probability. The two-stage draw costs O(qN) instead of O(N).
2. Each step's draw reads only the sampler's own generator, never the data, the model or the
   noise: the steps' subsets are independent of each other and of everything the training does.
   So drawing steps t+1..t+K before step t+1 runs (prefetching a block) gives the same joint
   distribution, indeed the same subsets, as drawing each when it runs. How many steps are
   prefetched (set by a memory budget) changes when the rows are read, never which rows.
3. The rows are indexed once, in the order every pass reads them (dpgan.tables.reading.parquet_source), and the
   batch of a step is exactly the rows its subset names: nothing is added, dropped or reordered
   because of memory limits.
Empty batches (k = 0) are legal, as everywhere in dpgan (dpgan.privacy.sampling).
"""

from __future__ import annotations

from collections import deque

import numpy as np
import torch


def poisson_subset(num_rows: int, sample_rate: float, rng: np.random.Generator) -> np.ndarray:
    """One step's batch, sorted: |B| ~ Binomial(N, q), then B uniform among the |B|-subsets."""
    size = int(rng.binomial(num_rows, sample_rate)) if num_rows > 0 else 0
    if size == 0:
        return np.zeros(0, dtype=np.int64)
    return np.sort(rng.choice(num_rows, size=size, replace=False).astype(np.int64))


class BlockPoissonSampler:
    """Poisson batches over `num_rows` rows at rate q, from `rng` alone (module docstring).

    `sample()` gives the next step's indices; `ahead(max_rows)` draws (and queues) the batches of
    the next steps up to about `max_rows` rows in all (at least one step), which `sample()` then
    returns in order: prefetching changes nothing that `sample()` returns."""

    def __init__(self, num_rows: int, sample_rate: float, rng: np.random.Generator) -> None:
        if num_rows < 0:
            raise ValueError("num_rows must be non-negative")
        if not 0.0 < sample_rate <= 1.0:
            raise ValueError("sample_rate must be in (0, 1]")
        self.num_rows, self.sample_rate, self.rng = num_rows, sample_rate, rng
        self._queue: deque[np.ndarray] = deque()

    @property
    def expected_batch_size(self) -> float:
        return self.sample_rate * self.num_rows

    def _draw(self) -> np.ndarray:
        return poisson_subset(self.num_rows, self.sample_rate, self.rng)

    def ahead(self, max_rows: int, max_steps: int = 10_000) -> list[np.ndarray]:
        """The queued batches, drawing more until the next one would pass `max_rows` rows in all
        or `max_steps` steps (the first is always included). They stay queued for `sample()`."""
        if not self._queue:
            self._queue.append(self._draw())
        block = [self._queue[0]]
        total = len(block[0])
        position = 1
        while len(block) < max_steps:
            if position == len(self._queue):
                self._queue.append(self._draw())
            candidate = self._queue[position]
            if total + len(candidate) > max_rows:
                return block
            block.append(candidate)
            total += len(candidate)
            position += 1
        return block

    def sample(self) -> torch.Tensor:
        batch = self._queue.popleft() if self._queue else self._draw()
        return torch.from_numpy(batch)

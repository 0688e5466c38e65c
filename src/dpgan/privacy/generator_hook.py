"""dtgan-g's private release (dpgan.training.dp_generator): a hook on the generated rows' output gradient.

The release is the upstream gradient ∂L/∂x̃ of the B generated rows at G's output, each row
clipped to C, through one critic picked uniformly from N_d shards. One record can change that
critic arbitrarily and all B rows go through it: sensitivity 2C√B, noise std σ·2C√B, event
one-of-shards(σ, N_d) (the binomial mixture of dpgan.privacy.accounting). Its steps are reserved
and charged like every private step's (dpgan.privacy.step_charge).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from dpgan.errors import InputError
from dpgan.privacy.accounting import ONE_OF_SHARDS, PrivacyLedger
from dpgan.privacy.noise import add_gaussian_tensor
from dpgan.privacy.step_charge import Recorder, StepCharge, reserve_steps


class GeneratorHookStep:
    """dtgan-g's release (module docstring): a hook on the generated rows' output gradient.

    `sample()` picks the shard whose critic this step backpropagates through; `hook()` gives the
    tensor hook that clips each row of ∂L/∂x̃ to C and adds N(0, (σ·2C√B)²) once, charging one step.
    """

    def __init__(
        self,
        *,
        num_shards: int,
        batch_size: int,
        noise_multiplier: float,
        max_norm: float,
        steps: int,
        ledger: PrivacyLedger | None,
        label: str,
        note: str = "",
        generator: torch.Generator,
        recorder: Recorder | None = None,
    ) -> None:
        if num_shards < 1 or batch_size < 1:
            raise InputError("the generator hook needs at least one shard and one row")
        self.num_shards, self.batch_size = num_shards, batch_size
        self.noise_multiplier, self.max_norm, self.generator = noise_multiplier, max_norm, generator
        entry = {"name": label, "noise_multiplier": noise_multiplier, "sampling_rate": 1.0 / num_shards, "note": note}
        self._charge = StepCharge(reserve_steps(ledger, {**entry, "sampling": ONE_OF_SHARDS}, steps), recorder)

    @staticmethod
    def sensitivity(max_norm: float, batch: int) -> float:
        """L2 sensitivity of one step: B rows through one critic, each clipped row can move by 2C."""
        return 2.0 * max_norm * math.sqrt(batch)

    @property
    def releases(self) -> int:
        return self._charge.releases

    def restore(self, releases: int) -> None:
        """Resume after `releases` releases of a checkpointed fit (dpgan.training.checkpoint)."""
        self._charge.restore(releases)

    def sample(self) -> int:
        """The shard (critic) of this step, uniform and independent of the data."""
        return int(torch.randint(self.num_shards, (1,), generator=self.generator, device=self.generator.device))

    def hook(self) -> Callable[[torch.Tensor], torch.Tensor]:
        """A tensor hook for G's output of one step (register it on that step's rows only)."""
        std = self.noise_multiplier * self.sensitivity(self.max_norm, self.batch_size) if self.noise_multiplier else 0.0

        def clip_and_noise(grad: torch.Tensor) -> torch.Tensor:
            if grad.shape[0] != self.batch_size:
                raise InputError(f"the hook was reserved for {self.batch_size} rows, got {grad.shape[0]}")
            norms = grad.norm(dim=1, keepdim=True)
            clipped = grad * torch.clamp(self.max_norm / (norms + 1e-12), max=1.0)
            self._charge({"units": grad.shape[0], "clipped": {"rows": clipped}, "noise_std": std, "divisor": 1.0})
            return add_gaussian_tensor(clipped, std, self.generator)

        return clip_and_noise


__all__ = ["GeneratorHookStep"]

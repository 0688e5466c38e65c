"""The GAN loop's settings in one serialisable record (networks, optimiser, loss, clipping, schedule);
recipes (dpgan.recipes) fill in their papers' values. A data kind's own settings (a table's codec
and plug-ins: dpgan.tables.settings; a series' or an image set's networks) live with the kind."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from dpgan.errors import InputError
from dpgan.setting import setting

LOSSES = ("wgan-gp", "wgan", "bce")
OPTIMIZERS = ("adam", "rmsprop")
INTERPOLATIONS = ("linear", "spherical")
CLIPPING_GROUPS = ("none", "per-layer")


@dataclass
class TrainingConfig:
    """Network and optimisation settings; none of them is read from private data.

    The network and schedule defaults were first chosen on Adult at ε=3 with learning curves scored
    on Adult's test split (bench/tune_curve.py, RESULTS §2: test data chose them, which this project
    no longer does). The sample-rate cap was chosen on validation
    splits of five tables with the test splits unread (bench/csv_only.py, RESULTS §10); the test
    splits were scored once, after they were frozen.
    """

    batch_size: int = 1024
    # the expected batch is at most this share of the table (q ≤ max_sample_rate: training.schedule).
    # 0.05 gives a small table more, smaller steps: chosen on the validation splits of hmda, chile,
    # churn, flchain and Adult's training file (bench/RESULTS.md §10; Adult's q is below it anyway)
    max_sample_rate: float = 0.05
    epochs: float = 60.0
    # at most this many private steps whatever `epochs` asks (0: no cap; training.schedule.capped_steps)
    max_steps: int = 0
    # at most this many per-example gradients in expectation, T ≤ ⌈max_examples / L⌉ (0: no cap): a
    # compute budget that leaves the batch free, so a larger batch means fewer steps (training.schedule)
    max_examples: int = 0
    n_critic: int = 2
    gp_weight: float = 10.0
    # Penalise only ‖∇D‖ > 1 (WGAN-LP). The two-sided penalty spends most of each record's
    # clipping budget pushing ‖∇D‖ up towards 1 early on, leaving little for the real term.
    one_sided_penalty: bool = True
    max_grad_norm: float = 1.0
    clip_decay: float = 1.0
    # Grouped clipping (dpgan.privacy.grouped_clipping): "per-layer" clips each critic layer (and the
    # information loss's feature vector) to C/√k with noise σC each; the event stays Gaussian(σ)
    clipping_groups: str = setting(
        "none", "per-layer: clip each critic layer to C/sqrt(k) with its own noise (same ε)", choices=CLIPPING_GROUPS
    )
    # Adaptive clipping (dpgan.privacy.adaptive_clipping, Andrew et al. 2021): C moves towards this
    # quantile of the records' norms from a noisy count in the same event (0 = off; exclusive with
    # clip_decay), at rate adaptive_clip_lr; the count's noise σ_b (0 = expected batch / 20)
    adaptive_clip_quantile: float = setting(
        0.0,
        "move the clipping norm towards this quantile of the records' gradient norms, from a noisy count inside "
        "each step's ε (Andrew et al. 2021; 0: off)",
        metavar="Q",
    )
    adaptive_clip_lr: float = 0.2
    adaptive_clip_count_noise: float = 0.0
    # Clip the fake term's per-example gradients to C too (free: it reads no private data) so
    # that the real and fake sides of the critic's update carry comparable weight.
    clip_fake_term: bool = True
    # Release an exponential moving average of G's weights (post-processing: free), which damps
    # the oscillation that noisy critics cause; 0 releases the last iterate.
    ema_decay: float = 0.995
    noise_dim: int = 64
    generator_hidden: tuple[int, ...] = (256, 256)
    critic_hidden: tuple[int, ...] = (128, 128)
    generator_lr: float = 5e-4
    critic_lr: float = 5e-4
    betas: tuple[float, float] = (0.5, 0.9)
    categorical_activation: str = "gumbel"
    gumbel_tau: float = 0.2
    # --- recipe choices (dpgan.recipes sets these per paper; defaults are the dp-gan recipe) ---
    # critic loss: "wgan-gp" (gradient penalty), "wgan" (weight clipping, Xie et al.), "bce" (vanilla GAN)
    loss: str = "wgan-gp"
    optimizer: str = "adam"  # or "rmsprop" (Xie et al.)
    weight_clip: float = 0.01  # |θ_D| bound for loss="wgan"
    # DP-CGAN microbatches per expected batch; 0 = per-example clipping (m = B)
    microbatches: int = 0
    interpolation: str = "linear"  # gradient-penalty point: "linear" or "spherical"
    # CTGAN training-by-sampling: fake conditions from the log-flattened prior, real rows
    # importance-weighted to match (both from public/DP frequencies only)
    training_by_sampling: bool = False
    info_loss_weight: float = 0.0  # DTGAN/CTAB-GAN information loss on critic features
    # scale β of the critic features clipped jointly with each record's gradient (info loss)
    info_feature_scale: float = 0.01
    # DTGAN_G / GS-WGAN: number of non-private discriminators on disjoint shards
    num_discriminators: int = 1
    # pad each Poisson batch of the critic's private step to one public size with a 0/1 mask
    # (dpgan.privacy.padded_batches): the same release (within float rounding), every step the same
    # shapes, which a GPU's captured or compiled kernels need; on a CPU it only adds padded rows
    static_shapes: bool = False

    def check(self) -> None:
        """Reject settings no recipe can run, with a message that names the setting."""
        choices = {
            "loss": LOSSES,
            "optimizer": OPTIMIZERS,
            "interpolation": INTERPOLATIONS,
            "clipping_groups": CLIPPING_GROUPS,
        }
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise InputError(f"{name} must be one of {', '.join(allowed)}, not {getattr(self, name)!r}")
        for name in ("max_steps", "max_examples"):
            cap = getattr(self, name)
            if isinstance(cap, bool) or not isinstance(cap, int) or cap < 0:
                raise InputError(f"{name} must be a whole number ≥ 0 (0: no cap)")
        if self.n_critic < 1 or self.num_discriminators < 1 or self.microbatches < 0:
            raise InputError("n_critic and num_discriminators must be ≥ 1, microbatches ≥ 0")
        if not 0.0 < self.max_sample_rate <= 1.0:
            raise InputError("max_sample_rate must be in (0, 1]")
        if not 0.0 <= self.ema_decay < 1.0:
            raise InputError("ema_decay must be in [0, 1)")
        if not (self.info_feature_scale > 0 and self.weight_clip > 0):
            raise InputError("info_feature_scale and weight_clip must be positive")
        if self.microbatches and self.static_shapes:
            raise InputError("static_shapes pads per-record units: it does not work with microbatches")
        if self.microbatches and (self.loss == "wgan-gp" or self.info_loss_weight > 0):
            # the microbatch path clips mean gradients of the real term only
            raise InputError("microbatches work with loss='bce' or 'wgan' and no information loss")
        self._check_clipping()

    def _check_clipping(self) -> None:
        if not 0.0 <= self.adaptive_clip_quantile < 1.0:
            raise InputError("adaptive_clip_quantile must be in [0, 1) (0 turns adaptive clipping off)")
        if not (self.adaptive_clip_lr > 0 and self.adaptive_clip_count_noise >= 0):
            raise InputError("adaptive_clip_lr must be positive and adaptive_clip_count_noise ≥ 0")
        if self.microbatches and (self.clipping_groups != "none" or self.adaptive_clip_quantile > 0):
            raise InputError("grouped and adaptive clipping clip per record: they do not work with microbatches")
        if self.adaptive_clip_quantile > 0 and self.clip_decay != 1.0:
            raise InputError("adaptive clipping moves C itself: use clip_decay = 1 with adaptive_clip_quantile")

    def to_dict(self) -> dict:
        """Every setting, except the clipping options, step caps and static shapes while they are off: a model
        saved before they existed re-saves unchanged, and `from_dict` fills them in as off."""
        data = asdict(self)
        if self.clipping_groups == "none":
            del data["clipping_groups"]
        for key in ("max_steps", "max_examples", "static_shapes"):
            if not data[key]:
                del data[key]
        if self.adaptive_clip_quantile == 0.0:
            for key in ("adaptive_clip_quantile", "adaptive_clip_lr", "adaptive_clip_count_noise"):
                del data[key]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "TrainingConfig":
        """The loop's settings of a saved record (a model file's flat "config" record holds a data
        kind's settings too: dpgan.tables.settings.loop_config takes the loop's part of it)."""
        data = dict(data)
        for key in ("generator_hidden", "critic_hidden", "betas"):
            if key in data:
                data[key] = tuple(data[key])
        try:
            return cls(**data)
        except TypeError:
            raise InputError("the model's training settings name a setting this version does not know") from None

"""Every training setting in one serialisable record; recipes (dpgan.recipes) fill in their papers' values."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from dpgan.errors import InputError
from dpgan.models.output_spans import OutputSpan
from dpgan.models.tabular import TabularGenerator

LOSSES = ("wgan-gp", "wgan", "bce")
OPTIMIZERS = ("adam", "rmsprop")
INTERPOLATIONS = ("linear", "spherical")
CLIPPING_GROUPS = ("none", "per-layer")
LABEL_MODEL_KINDS = ("auto", "dp-sgd", "pair-tables")
SELECTION_KEYS = (
    "select_checkpoints",
    "selection_budget_fraction",
    "select_top",
    "selection_holdout",
    "selection_samples",
)


@dataclass
class TrainingConfig:
    """Network and optimisation settings; none of them is read from private data.

    The network and schedule defaults were first chosen on Adult at ε=3 with learning curves scored
    on Adult's test split (bench/tune_curve.py, RESULTS §2: test data chose them, which this project
    no longer does). The sample-rate cap and the label model's share were chosen on validation
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
    clipping_groups: str = "none"
    # Adaptive clipping (dpgan.privacy.adaptive_clipping, Andrew et al. 2021): C moves towards this
    # quantile of the records' norms from a noisy count in the same event (0 = off; exclusive with
    # clip_decay), at rate adaptive_clip_lr; the count's noise σ_b (0 = expected batch / 20)
    adaptive_clip_quantile: float = 0.0
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
    # Boob et al.'s binary codes: every integer column of at most 16 public levels (except the
    # target and the condition) coded as ±1 bits (dpgan.tables.schema.binary_coded). Off: RESULTS §14
    binary_codes: bool = False
    # Boob et al.'s geo columns: (latitude, longitude) column pairs coded as one 2-D column
    # (dpgan.tables.geo.GeoTransform); added to the public schema at fit time (dpgan.tables.schema.with_geo)
    geo_pairs: tuple[tuple[str, str], ...] = ()
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
    classifier_loss_weight: float = 0.0  # DTGAN auxiliary-classifier loss (classifier is DP-SGD)
    classifier_epochs: float = 3.0
    classifier_budget_fraction: float = 0.1  # share of ε for the auxiliary classifier
    # DTGAN_G / GS-WGAN: number of non-private discriminators on disjoint shards
    num_discriminators: int = 1
    # DP one-way statistics of G's outputs (dpgan.training.marginals): G is warm-started on them
    # and a penalty keeps its statistics near them (any recipe). On for dtgan-g, whose noisy
    # generator steps do not learn marginals; off elsewhere (it helps there too: RESULTS §9).
    marginal_anchor: bool = False
    marginal_budget_fraction: float = 0.05
    marginal_warmup_steps: int = 300
    # against a step's noise the penalty needs weight: on Adult at ε=1 (dtgan-g, one seed) weight 1
    # left mean JSD 0.082 and WD 0.040, weight 10 gave 0.010 and 0.012 (RESULTS §8)
    marginal_weight: float = 10.0
    # DP 2-way tables of G's outputs (dpgan.training.pair_marginals): every pair of columns'
    # categories/bins measured once, G warm-started on them and kept near them. On by default:
    # at ε = 1 on the validation splits of adult, hmda, chile, churn and flchain it lowered JSD,
    # WD and the association difference on all five and the accuracy gap on all five (RESULTS §14)
    pair_anchor: bool = True
    pair_budget_fraction: float = 0.3
    pair_warmup_steps: int = 300
    pair_weight: float = 10.0
    # --- DP checkpoint selection (dpgan.training.selection; Boob et al.): G's average is kept at
    # this many evenly spaced steps (0 = off), each scored on a held-out share of the rows (each
    # record held out with probability selection_holdout, by a keyed hash of the record) by the
    # Brier score of its 2-way marginals, and the best select_top released by the exponential
    # mechanism at selection_budget_fraction of ε (select_top > 1: the union of their samples)
    select_checkpoints: int = 0
    selection_budget_fraction: float = 0.05
    select_top: int = 1
    selection_holdout: float = 0.1
    selection_samples: int = 2000
    # --- label model (dpgan.tables.label_model): a DP-SGD classifier of the schema's target
    # redraws that column in every sampled row (its own share of ε; off for tables without a
    # categorical target). A linear model by default: on Adult it beat an MLP at the same ε.
    label_model: bool = True
    # "dp-sgd": a classifier trained with DP-SGD on label_model_budget_fraction of ε; "pair-tables":
    # naive Bayes read off the 2-way anchor's DP tables (dpgan.tables.table_label_model), no ε of its
    # own; "auto": pair-tables when the 2-way anchor measures the target, else dp-sgd. "auto" is the
    # default: on the validation splits of adult, hmda, chile, churn and flchain, at ε = 1 and 3, the
    # tables' naive Bayes had the smaller AUC gap on all five tables at both ε (RESULTS §14)
    label_model_kind: str = "auto"
    # 0.25 (was 0.1): better TSTR on every validation table, Adult's included (bench/RESULTS.md §10)
    label_model_budget_fraction: float = 0.25
    label_model_hidden: tuple[int, ...] = ()
    label_model_epochs: float = 10.0
    label_model_batch_size: int = 2048
    label_model_max_sample_rate: float = 1.0
    label_model_lr: float = 3e-2
    label_model_max_grad_norm: float = 4.0

    def check(self) -> None:
        """Reject settings no recipe can run, with a message that names the setting."""
        choices = {
            "label_model_kind": LABEL_MODEL_KINDS,
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
        for name in ("classifier_budget_fraction", "label_model_budget_fraction", "marginal_budget_fraction"):
            if not 0.0 < getattr(self, name) < 0.5:
                raise InputError(f"{name} must be in (0, 0.5)")
        if not (self.label_model_epochs > 0 and self.label_model_lr > 0 and self.label_model_max_grad_norm > 0):
            raise InputError("label_model_epochs, label_model_lr and label_model_max_grad_norm must be positive")
        if self.label_model_batch_size < 1 or any(width < 1 for width in self.label_model_hidden):
            raise InputError("label_model_batch_size and label_model_hidden widths must be ≥ 1")
        if not (0.0 < self.max_sample_rate <= 1.0 and 0.0 < self.label_model_max_sample_rate <= 1.0):
            raise InputError("max_sample_rate and label_model_max_sample_rate must be in (0, 1]")
        if self.marginal_warmup_steps < 0 or not self.marginal_weight >= 0:
            raise InputError("marginal_warmup_steps and marginal_weight must be ≥ 0")
        if not 0.0 < self.pair_budget_fraction < 0.9:
            raise InputError("pair_budget_fraction must be in (0, 0.9)")
        if self.pair_warmup_steps < 0 or not self.pair_weight >= 0:
            raise InputError("pair_warmup_steps and pair_weight must be ≥ 0")
        if not 0.0 <= self.ema_decay < 1.0:
            raise InputError("ema_decay must be in [0, 1)")
        if not (self.info_feature_scale > 0 and self.weight_clip > 0):
            raise InputError("info_feature_scale and weight_clip must be positive")
        if self.microbatches and (self.loss == "wgan-gp" or self.info_loss_weight > 0):
            # the microbatch path clips mean gradients of the real term only
            raise InputError("microbatches work with loss='bce' or 'wgan' and no information loss")
        self._check_clipping()
        self._check_selection()
        if self.label_model and self.label_model_kind == "pair-tables" and not self.pair_anchor:
            raise InputError("label_model_kind='pair-tables' reads the 2-way anchor's tables: keep pair_anchor on")
        pairs = self.geo_pairs
        if isinstance(pairs, (str, bytes)) or not all(
            isinstance(p, (tuple, list)) and len(p) == 2 and all(isinstance(c, str) for c in p) for p in pairs
        ):
            raise InputError("geo_pairs must be (latitude, longitude) pairs of column names")
        self.geo_pairs = tuple(tuple(p) for p in pairs)  # type: ignore[misc]

    def _check_selection(self) -> None:
        if self.select_checkpoints < 0 or self.select_checkpoints == 1:
            raise InputError("select_checkpoints must be 0 (off) or at least 2")
        if self.select_checkpoints and not 1 <= self.select_top < self.select_checkpoints:
            raise InputError("select_top must be at least 1 and below select_checkpoints")
        if not 0.0 < self.selection_budget_fraction < 0.5 or not 0.0 < self.selection_holdout < 0.5:
            raise InputError("selection_budget_fraction and selection_holdout must be in (0, 0.5)")
        if self.selection_samples < 100:
            raise InputError("selection_samples must be at least 100")

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
        """Every setting, except the clipping, 2-way anchor, step caps and selection options while they are off: a
        model saved before they existed re-saves unchanged, and `from_dict` fills them in as off."""
        data = asdict(self)
        if not self.pair_anchor:
            for key in ("pair_anchor", "pair_budget_fraction", "pair_warmup_steps", "pair_weight"):
                del data[key]
        if self.clipping_groups == "none":
            del data["clipping_groups"]
        if not self.binary_codes:
            del data["binary_codes"]
        if self.label_model_kind == "dp-sgd":
            del data["label_model_kind"]
        for key in ("max_steps", "max_examples"):
            if not data[key]:
                del data[key]
        if not self.geo_pairs:
            del data["geo_pairs"]
        else:
            data["geo_pairs"] = [list(pair) for pair in self.geo_pairs]
        if self.adaptive_clip_quantile == 0.0:
            for key in ("adaptive_clip_quantile", "adaptive_clip_lr", "adaptive_clip_count_noise"):
                del data[key]
        if self.select_checkpoints == 0:
            for key in SELECTION_KEYS:
                del data[key]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "TrainingConfig":
        data = dict(data)
        # a model saved before the 2-way anchor existed (or with it off) has no key: it was off
        data.setdefault("pair_anchor", False)
        data.setdefault("label_model_kind", "dp-sgd")  # likewise: before it existed, every label model was
        for key in ("generator_hidden", "critic_hidden", "betas", "label_model_hidden"):
            if key in data:
                data[key] = tuple(data[key])
        if "geo_pairs" in data:
            data["geo_pairs"] = tuple(tuple(pair) for pair in data["geo_pairs"])
        return cls(**data)


def build_generator(
    config: TrainingConfig, spans: list[OutputSpan], condition_slice: tuple[int, int] | None = None
) -> TabularGenerator:
    return TabularGenerator(
        config.noise_dim,
        config.generator_hidden,
        spans,
        config.categorical_activation,
        config.gumbel_tau,
        condition_slice=condition_slice,
    )

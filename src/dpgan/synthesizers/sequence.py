"""SequenceSynthesizer: DP synthetic fixed-length series (Frigerio et al.'s dp-GAN for time series).

The flow, each private read charged to one ledger:
1. the series are read with the schema's column roles by the unit rule (dpgan.sequences.reader): each
   series is kept or dropped (with a reason) by its own cells, its readings ordered by its own times;
   nothing about one series is refused or decides how another is read;
2. what the schema leaves unknown (value bounds, the label set) is released with DP
   (dpgan.sequences.dp_schema: minima/maxima histograms, Gaussian partition selection), then the
   series are scaled with the completed schema, clipped to its bounds, and those whose label was not
   released are dropped;
3. one Gaussian release of the unit counts (units kept, units dropped per reason, after 1-2): adding
   or removing one unit (a series, or an entity with all its series) changes one count by 1, so
   sensitivity 1 (dpgan.privacy.unit_rule). The kept count N̂ sets the Poisson rate q = L/N̂ and the
   step count; the dropped counts are the report's. A fit on no readable series still runs (warned);
4. units are built: one series each, or, with an entity column, `max_series_per_entity` series
   drawn at random (with replacement when an entity has fewer) from each entity's complete series,
   so one entity is one unit however many series it owns: the accountant's neighbour is one entity;
5. WGAN-GP with DP-SGD on the critic through the engine (dpgan.training.dp_critic): Poisson
   sampling of units, the real term and the gradient penalty clipped together per unit, Gaussian
   noise, one ledger event per critic step; an LSTM generator, an MLP (default) or LSTM critic.
The generator (its average) is released; sampling from it is post-processing.

With `gaussian_base`, step 5 is preceded by the DP Gaussian's release (dpgan.sequences.baseline's
mechanism, charged at `gaussian_base_fraction` of ε) and G's series are draws of it plus a gated LSTM
residual (dpgan.models.sequence_units); the critic's DP-SGD gets the rest of ε. Measured on the water
days at ε = 3 (bench/results/sequences_water_gaussian_base.jsonl), it does not beat the Gaussian fitted
on all of ε, so it stays off.
"""

from __future__ import annotations

import secrets
import warnings
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from dpgan.api import Synthesizer
from dpgan.devices import on_device, released_on_cpu, seeded_generator, to_device
from dpgan.errors import BudgetError, DPGanWarning, InputError, ModelFileError
from dpgan.models.sequence_units import CRITICS, SeriesUnitCritic, SeriesUnitGenerator
from dpgan.privacy.accounting import Budget, PrivacyLedger
from dpgan.privacy.calibration import BudgetShares, ShareTarget
from dpgan.privacy.unit_rule import REPORT_SIGMAS, ReleasedTally, release_tally
from dpgan.sequences.anchor import MomentAnchorHook, StepStatisticsHook, measure_step_statistics
from dpgan.sequences.baseline import DPGaussianSeries
from dpgan.sequences.codec import (
    SeriesSet,
    encode,
    label_names,
    read_array_raw,
    read_long_raw,
    unscale,
    write_long,
)
from dpgan.sequences.dp_schema import complete_schema
from dpgan.sequences.label_guide import LabelGuideHook
from dpgan.sequences.schema import DP, SequenceSchema, schema_for_array
from dpgan.serialization import check_model_destination, read_model_dir, write_model_dir
from dpgan.synthesizers.critic_fit import critic_config, fit_dp_critic
from dpgan.threads import fit_threads
from dpgan.training.aux_classifier import GUIDE_EVENT, fit_private_classifier
from dpgan.training.config import TrainingConfig
from dpgan.training.progress import FitProgressFn

KIND = "sequence"
COUNT_EVENT = "unit count (kept, dropped per reason)"
COUNT_SHARE = 0.01  # of ε, for the counts
MAX_SAMPLE = 1_000_000


@dataclass(frozen=True)
class SequenceSettings:
    """The sequence networks' shapes and the step-statistics anchor (the loop's settings stay in
    TrainingConfig)."""

    critic: str = "mlp"
    critic_hidden: tuple[int, ...] = (128, 128)
    generator_hidden: int = 64
    generator_layers: int = 1
    step_noise: int = 4
    series_noise: int = 0  # a series-wide latent of this size beside the per-step noise
    # the label enters the MLP critic as a projection term instead of input channels
    label_projection: bool = False
    # G draws labels from the released label shares and adds the released per-label, per-step mean
    # profile (the step statistics, at step_anchor_fraction of ε) to its LSTM's read-out
    label_profile: bool = False
    profile_offset: bool = True  # False: only the label shares
    # a DP-SGD classifier of the label (at label_guide_fraction of ε) guides G (series unit only)
    label_guide: bool = False
    label_guide_fraction: float = 0.1
    label_guide_weight: float = 1.0
    label_guide_epochs: float = 5.0
    # DP per-label, per-step means and spreads as a generator plug-in (dpgan.sequences.anchor)
    step_anchor: bool = False
    step_anchor_fraction: float = 0.2
    step_anchor_warmup: int = 300
    step_anchor_weight: float = 10.0
    # the DP Gaussian's per-label mean and covariance (dpgan.sequences.baseline) as a generator
    # plug-in, at step_anchor_fraction of ε, with the same warm start and weight (series unit only)
    moment_anchor: bool = False
    # G = a draw of the DP Gaussian (dpgan.sequences.baseline, released at gaussian_base_fraction of
    # ε) plus the LSTM's residual times a learned gate that starts at gaussian_base_gate (series unit)
    gaussian_base: bool = False
    gaussian_base_fraction: float = 0.6
    gaussian_base_gate: float = 0.0
    critic_differences: bool = False  # the critic also reads the first differences of the values

    def check(self) -> None:
        if self.critic not in CRITICS:
            raise InputError(f"critic must be one of {', '.join(CRITICS)}, not {self.critic!r}")
        sizes = (*self.critic_hidden, self.generator_hidden, self.generator_layers, self.step_noise)
        if not all(isinstance(s, int) and not isinstance(s, bool) and 1 <= s <= 4096 for s in sizes):
            raise InputError("network sizes must be whole numbers from 1 to 4096")
        if not 0.0 < self.step_anchor_fraction < 0.5:
            raise InputError("step_anchor_fraction must be in (0, 0.5)")
        if self.label_projection and self.critic != "mlp":
            raise InputError("label_projection needs the mlp critic")
        if (
            isinstance(self.series_noise, bool)
            or not isinstance(self.series_noise, int)
            or not 0 <= self.series_noise <= 4096
        ):
            raise InputError("series_noise must be a whole number from 0 to 4096")
        if not 0.0 < self.label_guide_fraction < 0.5 or not self.label_guide_epochs > 0:
            raise InputError("label_guide_fraction must be in (0, 0.5) and label_guide_epochs > 0")
        if self.step_anchor_warmup < 0 or not self.step_anchor_weight >= 0 or not self.label_guide_weight >= 0:
            raise InputError("step_anchor_warmup and the plug-ins' weights must be ≥ 0")
        if self.gaussian_base:
            if not 0.0 < self.gaussian_base_fraction <= 0.85:
                raise InputError("gaussian_base_fraction must be in (0, 0.85]: the critic needs the rest of ε")
            if not -10.0 <= self.gaussian_base_gate <= 10.0:
                raise InputError("gaussian_base_gate must be in [-10, 10]")
            if self.label_profile or self.step_anchor or self.moment_anchor or self.label_guide:
                raise InputError("gaussian_base takes none of label_profile, step_anchor, moment_anchor, label_guide")


# dp-GAN's loop on series: the tabular defaults with a smaller batch cap (a few thousand series)
SEQUENCE_DEFAULTS = {"batch_size": 256, "epochs": 60.0, "ema_decay": 0.99}


def _coerce_schema(schema: SequenceSchema | dict | str | Path) -> SequenceSchema:
    if isinstance(schema, SequenceSchema):
        return schema
    if isinstance(schema, dict):
        return SequenceSchema.from_dict(schema)
    if isinstance(schema, (str, Path)):
        return SequenceSchema.from_json(schema)
    raise InputError("schema must be a SequenceSchema, a dict or a path to a JSON file")


class SequenceSynthesizer(Synthesizer):
    """Fit on fixed-length series (a long table or an (N, T[, F]) array), sample new ones."""

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float = 1e-5,
        accountant: str = "pld",
        seed: int | None = None,
        noise_multiplier: float | None = None,
        critic: str = "mlp",
        device: str | torch.device = "cpu",
        threads: int | None = None,
        **settings: Any,
    ) -> None:
        super().__init__(
            epsilon=epsilon,
            delta=delta,
            accountant=accountant,
            seed=seed,
            noise_multiplier=noise_multiplier,
            device=device,
            threads=threads,
        )
        network_keys = {k: settings.pop(k) for k in list(settings) if k in SequenceSettings.__dataclass_fields__}
        self.networks = SequenceSettings(critic=critic, **network_keys)
        self.networks.check()
        self.config = critic_config(SEQUENCE_DEFAULTS, settings)
        self.schema: SequenceSchema | None = None
        self.input_form = "long"

    # ------------------------------------------------------------------ fit
    def fit(
        self,
        data: pd.DataFrame | np.ndarray,
        schema: SequenceSchema | dict | str | Path | None = None,
        *,
        labels: np.ndarray | None = None,
        progress: FitProgressFn | None = None,
    ) -> SequenceSynthesizer:
        """Train on `data` (a long table with the schema's columns, or an (N, T[, F]) array with
        optional `labels`; an array needs no schema: its T and F are public, its value columns are
        named value_0, ... and their bounds and the label set are estimated with DP); spends at most
        (ε, δ), all of it recorded in `self.ledger`. Trains on
        `self.device`; the fitted generator is on the CPU (dpgan.devices). `progress` is called with
        (step, total, ε spent so far), as for tables."""
        with on_device(self.device), fit_threads(self.threads):
            self._fit(data, schema, labels, progress)
        released_on_cpu(self.generator)
        return self

    def _fit(
        self,
        data: pd.DataFrame | np.ndarray,
        schema: SequenceSchema | dict | str | Path | None,
        labels: np.ndarray | None,
        progress: FitProgressFn | None,
    ) -> None:
        if schema is None:  # an array's T and F are public; bounds and labels are bought with DP
            if not isinstance(data, np.ndarray):
                raise InputError("a long table needs its schema (the id, time and value columns, the length)")
            schema = schema_for_array(data.shape, labels is not None)
        schema = _coerce_schema(schema)
        if isinstance(data, pd.DataFrame):
            raw, form = read_long_raw(data, schema), "long"
        elif isinstance(data, np.ndarray):
            raw, form = read_array_raw(data, labels, schema), "array"
        else:
            raise InputError("data must be a pandas DataFrame (long table) or a numpy array of series")
        rng = np.random.default_rng(self.seed if self.seed is not None else secrets.randbits(64))
        if self.seed is not None:
            torch.manual_seed(self.seed)
        ledger = PrivacyLedger(budget=Budget(self.epsilon, self.delta, self.accountant))
        shares = BudgetShares(self.epsilon, self.delta, self.accountant)
        released = complete_schema(raw, schema, shares=shares, ledger=ledger, rng=rng)
        schema, spent_share = released.schema, released.share + COUNT_SHARE
        series = encode(raw, schema)
        del raw
        tally = self._count_units(series, schema, ledger, rng, shares.at(spent_share))
        kept = tally.estimated_units
        units = to_device(self._units(series, schema, rng))  # read from NumPy on the CPU: onto the fit's device
        G, D = self._networks(schema)
        config = replace(self.config, noise_dim=G.noise_dim)
        hooks = ()
        net = self.networks
        if net.step_anchor or net.label_profile:
            stats = measure_step_statistics(
                units,
                len(schema.values),
                len(schema.categories) if schema.label is not None else 0,
                share=shares.at(spent_share + net.step_anchor_fraction),
                ledger=ledger,
                rng=rng,
            )
            if net.label_profile:
                G.set_profile(stats.shares, stats.mean)
            if net.step_anchor:
                hooks = (StepStatisticsHook(stats, len(schema.values), net.step_anchor_warmup, net.step_anchor_weight),)
        if net.gaussian_base:
            self._gaussian_base(G, series, schema, ledger, rng, spent_share)
        if self.networks.moment_anchor:
            hooks = (*hooks, self._moment_anchor(series, schema, ledger, rng, spent_share))
        if net.label_guide:
            hooks = (*hooks, self._label_guide(units, schema, kept, ledger, rng, spent_share))
        fitted = fit_dp_critic(
            self,
            units,
            config,
            rows=kept,
            ledger=ledger,
            rng=rng,
            critic=D,
            generator_net=G,
            hooks=hooks,
            progress=progress,
        )
        result, schedule, budget = fitted.result, fitted.schedule, fitted.budget
        spent = ledger.epsilon(self.delta, self.accountant)
        if spent > self.epsilon * (1 + 1e-9):
            raise BudgetError(f"internal error: the ledger spent ε={spent:.4f} > target {self.epsilon}")
        self.schema, self.ledger, self.generator, self.input_form = schema, ledger, result.generator, form
        self.training = {
            "unit": schema.unit,
            "max_series_per_entity": schema.max_series_per_entity if schema.entity else None,
            "estimated_units": kept,
            "estimated_dropped_units": tally.estimated_dropped,
            "units": tally.to_dict(),
            "dropped_policy": _dropped_policy(schema),
            "clipping": "values outside the value columns' bounds are clipped to them"
            + (f" (bounds estimated with DP: {', '.join(_dp_bounds(schema))})" if _dp_bounds(schema) else ""),
            "noise_multiplier": budget.noise_multiplier,
            "sample_rate": schedule.sample_rate,
            "expected_batch_size": schedule.expected_batch_size,
            "steps": result.steps,
            **({"gaussian_base_gate": float(result.generator.gate.detach())} if net.gaussian_base else {}),
            "seeded": self.seed is not None,
        }

    def _count_units(
        self,
        series: SeriesSet,
        schema: SequenceSchema,
        ledger: PrivacyLedger,
        rng: np.random.Generator,
        target: ShareTarget,
    ) -> ReleasedTally:
        """One sensitivity-1 Gaussian release of (units kept, units dropped per reason), COUNT_SHARE
        of ε after the schema's releases (dpgan.privacy.unit_rule). The fit runs whatever it says:
        a warning, not a refusal, when the kept count does not clear its noise."""
        released, _ = release_tally(
            series.tally, unit=schema.unit, units=schema.units, event=COUNT_EVENT, target=target, ledger=ledger, rng=rng
        )
        if released.kept < REPORT_SIGMAS * released.noise_multiplier:
            warnings.warn(
                f"the DP count of readable {schema.units} (about {max(released.kept, 0.0):.0f}, noise std "
                f"{released.noise_multiplier:.0f}) is indistinguishable from none: few {schema.units} for this ε, "
                "or few could be read (check the column roles and the length: each series needs exactly "
                "`length` readings)",
                DPGanWarning,
                stacklevel=3,
            )
        return released

    def _moment_anchor(
        self,
        series: SeriesSet,
        schema: SequenceSchema,
        ledger: PrivacyLedger,
        rng: np.random.Generator,
        spent_share: float,
    ) -> MomentAnchorHook:
        """The DP Gaussian's release (sensitivities for one series per unit) as G's plug-in."""
        if schema.entity is not None:
            raise InputError("moment_anchor measures one series per unit: it does not take an entity column")
        net = self.networks
        spent = spent_share + net.step_anchor_fraction * (1 + int(net.step_anchor or net.label_profile))
        share = BudgetShares(self.epsilon, self.delta, self.accountant).at(spent)
        labels = len(schema.categories) if schema.label is not None else 0
        gauss = DPGaussianSeries(self.epsilon, self.delta, self.accountant).fit(
            series, labels, rng, ledger=ledger, share=share
        )
        shares = np.maximum(gauss.shares, 1e-3)
        as_tensor = lambda a: torch.tensor(np.asarray(a), dtype=torch.float32)  # noqa: E731
        return MomentAnchorHook(
            as_tensor(shares / shares.sum()),
            as_tensor(np.stack(gauss.means)),
            as_tensor(np.stack(gauss.covariances())),
            len(schema.values),
            net.step_anchor_warmup,
            net.step_anchor_weight,
        )

    def _gaussian_base(
        self,
        G: SeriesUnitGenerator,
        series: SeriesSet,
        schema: SequenceSchema,
        ledger: PrivacyLedger,
        rng: np.random.Generator,
        spent_share: float,
    ) -> None:
        """The DP Gaussian's release (the baseline's mechanism and sensitivities, one series per
        unit), calibrated so that the ledger reaches spent_share + gaussian_base_fraction of ε, set
        as G's base. G's draws from it are post-processing; the critic's steps get the rest of ε."""
        if schema.entity is not None:
            raise InputError("gaussian_base measures one series per unit: it does not take an entity column")
        share = BudgetShares(self.epsilon, self.delta, self.accountant).at(
            spent_share + self.networks.gaussian_base_fraction
        )
        labels = len(schema.categories) if schema.label is not None else 0
        gauss = DPGaussianSeries(self.epsilon, self.delta, self.accountant).fit(
            series, labels, rng, ledger=ledger, share=share
        )
        shares = np.maximum(gauss.shares, 1e-3)
        as_tensor = lambda a: torch.tensor(np.asarray(a), dtype=torch.float32)  # noqa: E731
        G.set_base(
            as_tensor(shares / shares.sum()), as_tensor(np.stack(gauss.means)), as_tensor(np.stack(gauss.factors))
        )

    def _spent_before_guide(self, spent_share: float) -> float:
        """The ε fraction the releases before the label guide reach (schema, counts, statistics, moments)."""
        net = self.networks
        spent = spent_share + net.step_anchor_fraction * (int(net.step_anchor or net.label_profile))
        return spent + net.step_anchor_fraction * int(net.moment_anchor)

    def _label_guide(
        self,
        units: torch.Tensor,
        schema: SequenceSchema,
        kept: float,
        ledger: PrivacyLedger,
        rng: np.random.Generator,
        spent_share: float,
    ) -> LabelGuideHook:
        """A DP-SGD classifier of the label from the values, trained on the series (one record
        each), at label_guide_fraction of ε; G's plug-in (dpgan.sequences.label_guide)."""
        if schema.label is None or schema.entity is not None:
            raise InputError("label_guide needs a label column and the series unit (no entity column)")
        net, n_values = self.networks, len(schema.values)
        share = BudgetShares(self.epsilon, self.delta, self.accountant).at(
            self._spent_before_guide(spent_share) + net.label_guide_fraction
        )
        values = units[:, 0, :, :n_values].reshape(units.shape[0], -1)
        labels = units[:, 0, 0, n_values:].argmax(dim=1)
        classifier = fit_private_classifier(
            values,
            labels,
            len(schema.categories),
            rows=max(int(round(kept)), 1),
            epochs=net.label_guide_epochs,
            batch_size=self.config.batch_size,
            max_sample_rate=self.config.max_sample_rate,
            lr=1e-3,
            hidden=(128,),
            max_grad_norm=self.config.max_grad_norm,
            share=share,
            ledger=ledger,
            generator=seeded_generator(int(rng.integers(0, 2**63 - 1))),
            mechanism=GUIDE_EVENT,
            note="Poisson; each series' cross-entropy gradient clipped",
        )
        return LabelGuideHook(classifier, n_values, net.label_guide_weight)

    def _units(self, series: SeriesSet, schema: SequenceSchema, rng: np.random.Generator) -> torch.Tensor:
        """(units, k, T, C): the values and the label one-hot along time; k series per entity."""
        channels = series.values
        if schema.label is not None and series.labels is not None:
            one_hot = np.eye(len(schema.categories), dtype=np.float32)[series.labels]
            channels = np.concatenate([channels, np.repeat(one_hot[:, None, :], schema.length, axis=1)], axis=2)
        if schema.entity is None or series.entities is None:
            return torch.from_numpy(channels[:, None])
        k = schema.max_series_per_entity
        chosen = []
        for entity in np.unique(series.entities):
            owned = np.flatnonzero(series.entities == entity)
            chosen.append(rng.choice(owned, size=k, replace=len(owned) < k))
        return torch.from_numpy(channels[np.stack(chosen)])

    def _networks(self, schema: SequenceSchema) -> tuple[SeriesUnitGenerator, SeriesUnitCritic]:
        labels = len(schema.categories) if schema.label is not None else 0
        k = schema.max_series_per_entity if schema.entity is not None else 1
        net = self.networks
        G = SeriesUnitGenerator(
            length=schema.length,
            n_values=len(schema.values),
            n_labels=labels,
            per_unit=k,
            step_noise=net.step_noise,
            hidden_size=net.generator_hidden,
            num_layers=net.generator_layers,
            profile=net.label_profile,
            offset=net.profile_offset,
            series_noise=net.series_noise,
            base=net.gaussian_base,
            gate=net.gaussian_base_gate,
        )
        D = SeriesUnitCritic(
            length=schema.length,
            channels=len(schema.values) + labels,
            kind=net.critic,
            hidden=net.critic_hidden,
            n_labels=labels,
            projection=net.label_projection and labels >= 2,
            differences=net.critic_differences,
        )
        return G, D

    # --------------------------------------------------------------- sample
    def sample(
        self, n: int, *, seed: int | None = None, label: Any = None
    ) -> pd.DataFrame | tuple[np.ndarray, np.ndarray | None]:
        """n new series, in the form the model was fitted on: a long table with the input's columns,
        or (array (n, T, F), labels or None). `label` fixes every series' label (conditional)."""
        self._require_fitted()
        assert self.schema is not None and isinstance(self.generator, SeriesUnitGenerator)
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_SAMPLE:
            raise InputError(f"n must be a whole number from 1 to {MAX_SAMPLE:,}")
        imposed = None
        if label is not None:
            if self.schema.label is None:
                raise InputError("this model has no label column: it cannot generate by label")
            names = [str(c) for c in self.schema.categories]
            if str(label) not in names:
                raise InputError(f"{label!r} is not a label of this model; choose one of {', '.join(names)}")
            imposed = torch.full((int(n),), names.index(str(label)), dtype=torch.long)
        generator = torch.Generator(device="cpu").manual_seed(seed if seed is not None else secrets.randbits(63))
        values, codes = self.generator.sample(int(n), generator, imposed)
        values_np = values.cpu().numpy()
        codes_np = None if codes is None else codes.cpu().numpy()
        if self.input_form == "array":
            return unscale(values_np, self.schema), label_names(codes_np, self.schema)
        return write_long(values_np, codes_np, self.schema)

    # ------------------------------------------------------------ report, save, load
    def unit_summary(self) -> str:
        """One line: the DP counts of the units kept and dropped (per reason), as a person reads them."""
        self._require_fitted()
        assert self.schema is not None
        if "units" not in self.training:  # a model saved before the per-reason counts
            return f"about {self.training['estimated_dropped_units']:.0f} {self.schema.units} dropped"
        return ReleasedTally.from_dict(self.training["units"]).describe()

    def _repr_details(self) -> dict[str, Any]:
        """The critic (series have one recipe) and, once fitted, the unit of privacy."""
        details: dict[str, Any] = {"critic": self.networks.critic}
        if self.schema is not None:
            details["unit"] = self.schema.unit
        return details

    def _report_details(self) -> dict[str, Any]:
        assert self.schema is not None
        unit = self.schema.unit
        protected = (
            "one series (add or remove one series)"
            if unit == "series"
            else f"one {self.schema.entity!r} entity with all its series (at most "
            f"{self.schema.max_series_per_entity} of them used, clipped as one unit)"
        )
        return {
            "kind": KIND,
            "unit_of_privacy": protected,
            "input_rule": _dropped_policy(self.schema),
            "schema_source": _schema_source(self.schema),
            "dp_schema": _dp_items(self.schema),
        }

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        self._require_fitted()
        assert self.schema is not None and self.generator is not None
        check_model_destination(path, overwrite)
        metadata = {
            "kind": KIND,
            "epsilon_target": self.epsilon,
            "epsilon": self.ledger.epsilon(self.delta, self.accountant),
            "delta": self.delta,
            "accountant": self.accountant,
            "schema": self.schema.to_dict(),
            "config": self.config.to_dict(),
            "networks": asdict(self.networks),
            "input_form": self.input_form,
            "ledger": self.ledger.to_dict(),
            "training": self.training,
        }
        return write_model_dir(path, self.generator.state_dict(), metadata, overwrite=overwrite)

    @classmethod
    def load(cls, path: str | Path) -> SequenceSynthesizer:
        tensors, meta = read_model_dir(path)
        if meta.get("kind") != KIND:
            raise ModelFileError(f"{path} is not a sequence model")
        try:
            networks = dict(meta["networks"])
            networks["critic_hidden"] = tuple(networks["critic_hidden"])
            synth = cls(epsilon=meta["epsilon_target"], delta=meta["delta"], accountant=meta["accountant"], **networks)
            synth.config = TrainingConfig.from_dict(meta["config"])
            synth.schema = SequenceSchema.from_dict(meta["schema"])
            synth.ledger = PrivacyLedger.from_dict(meta["ledger"])
            synth.training = dict(meta["training"])
            synth.input_form = str(meta["input_form"])
            G, _ = synth._networks(synth.schema)
            G.load_state_dict(tensors, strict=True)
            G.eval()
            synth.generator = G
        except (KeyError, TypeError, ValueError, RuntimeError, InputError) as exc:
            raise ModelFileError(f"{path} holds an inconsistent model: {exc}") from None
        return synth


def _dp_bounds(schema: SequenceSchema) -> list[str]:
    return [v.name for v in schema.values if v.source == DP]


def _dropped_policy(schema: SequenceSchema) -> str:
    policy = (
        "each series is kept or dropped by its own cells: dropped when its times are missing, unreadable or "
        "of mixed kinds, when it has not exactly `length` readings at distinct times, a missing or "
        "non-numeric value, or not one label"
    )
    if schema.label is not None:
        source = "DP-released" if schema.categories_source == DP else "public"
        policy += f", or a label outside the {source} label set"
    if schema.entity is not None:
        policy += f"; an {schema.entity!r} entity is dropped when none of its series is kept"
    return policy + "; the dropped are counted with DP, per reason"


def _dp_items(schema: SequenceSchema) -> dict[str, Any]:
    """What the fit estimated with DP (in the ledger), as released: bounds by column, the label set."""
    out: dict[str, Any] = {}
    bounds = {v.name: [v.min, v.max] for v in schema.values if v.source == DP}
    if bounds:
        out["bounds"] = bounds
    if schema.categories_source == DP:
        out["labels"] = {str(schema.label): list(schema.categories)}
    return out


def _schema_source(schema: SequenceSchema) -> str:
    """One line: which parts of the schema are public and which are DP estimates in the ledger."""
    dp = [f"bounds of {name!r}" for name in _dp_bounds(schema)]
    if schema.categories_source == DP:
        dp.append(f"the label set of {schema.label!r}")
    if not dp:
        return schema.source
    public = [f"bounds of {v.name!r}" for v in schema.values if v.source != DP]
    if schema.label is not None and schema.categories_source != DP:
        public.append(f"the label set of {schema.label!r}")
    line = f"{schema.source}; estimated with DP (in the ledger): {', '.join(dp)}"
    return line + (f"; public: {', '.join(public)}" if public else "")


__all__ = ["SequenceSettings", "SequenceSynthesizer"]

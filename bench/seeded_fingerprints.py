"""Fingerprints of seeded fits of every recipe and kind, for refactors that must change nothing.

Each case fits a tiny seeded model (a slice of the bundled data, a few private steps, one CPU
thread), saves it and samples from it with a seed; the fingerprint is the SHA-256 of the saved
files (model.json, the weights) and of the sample's bytes. Run it before a pure move, save the
JSON, run it after: every fingerprint must match (issue 32: "seeded samples and model-file bytes
of every recipe and kind equal before and after").

    DPGAN_THREADS=1 PYTHONPATH=src python bench/seeded_fingerprints.py --out /tmp/before.json
    DPGAN_THREADS=1 PYTHONPATH=src python bench/seeded_fingerprints.py --compare /tmp/before.json
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

os.environ.setdefault("DPGAN_THREADS", "1")

from dpgan import ImageSynthesizer, Schema, SequenceSynthesizer, TabularSynthesizer, datasets  # noqa: E402
from dpgan.sequences import SequenceSchema, ValueColumn  # noqa: E402
from dpgan.sequences.settings import RELEASED_MODELS  # noqa: E402

TABLE_RECIPES = ("dp-gan", "dp-wgan", "dp-cgan", "dtgan-d", "dtgan-g")
IMAGE_RECIPES = ("dcgan", "dp-cgan", "noise-layer", "noise-layer-sound", "gaussian")


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _files(folder: Path) -> dict[str, str]:
    return {p.name: _digest(p.read_bytes()) for p in sorted(folder.iterdir()) if p.is_file()}


def _table_case(recipe: str, **settings: object) -> Callable[[Path], dict]:
    def run(folder: Path) -> dict:
        train, _ = datasets.load_adult()
        data = train.sample(600, random_state=0).reset_index(drop=True)
        schema = Schema.from_json(datasets.adult_schema_path())
        synth = TabularSynthesizer(
            recipe=recipe, epsilon=3.0, seed=0, max_steps=3, batch_size=64, accountant="rdp", **settings
        )
        synth.fit(data, schema=schema)
        synth.save(folder / "model")
        sample = synth.sample(50, seed=1).to_csv(index=False).encode()
        return {"files": _files(folder / "model"), "sample": _digest(sample)}

    return run


def _sequence_case(
    critic: str, entity: str | None = None, model: str = "gan", **settings: object
) -> Callable[[Path], dict]:
    def run(folder: Path) -> dict:
        water = datasets.load_water_districts()
        days = water[water["day"].isin(sorted(water["day"].unique())[:40])]
        schema = SequenceSchema(
            id=("district", "day"),
            time="hour",
            length=24,
            values=(ValueColumn("inflow", 0.0, 200.0, "log"),),
            label="district",
            categories=tuple(sorted(days["district"].unique())),
            entity=entity,
            max_series_per_entity=2 if entity else 1,
        )
        # DP statistics alone take no steps and read no critic (a setting they do not read is refused)
        loop = {} if model in RELEASED_MODELS else {"max_steps": 3, "critic": critic}
        synth = SequenceSynthesizer(epsilon=3.0, seed=0, accountant="rdp", model=model, **loop, **settings)
        synth.fit(days, schema)
        synth.save(folder / "model")
        sample = synth.sample(10, seed=1).to_csv(index=False).encode()
        return {"files": _files(folder / "model"), "sample": _digest(sample)}

    return run


def _image_case(recipe: str) -> Callable[[Path], dict]:
    def run(folder: Path) -> dict:
        images, labels = datasets.load_digits_images()
        loop = {} if recipe == "gaussian" else {"max_steps": 3}  # DP statistics alone take no steps
        synth = ImageSynthesizer(
            epsilon=3.0, seed=0, recipe=recipe, classes=[str(d) for d in range(10)], accountant="rdp", **loop
        )
        synth.fit(images[:400], labels[:400])
        synth.save(folder / "model")
        fakes, names = synth.sample(20, seed=1)
        buffer = io.BytesIO()
        np.savez(buffer, images=fakes, labels=np.asarray(names, dtype=str))
        return {"files": _files(folder / "model"), "sample": _digest(buffer.getvalue())}

    return run


CASES: dict[str, Callable[[Path], dict]] = {
    **{f"table/{r}": _table_case(r) for r in TABLE_RECIPES},
    "table/dp-gan-sgd-label-marginals": _table_case("dp-gan", label_model_kind="dp-sgd", marginal_anchor=True),
    **{f"sequence/{c}": _sequence_case(c) for c in ("mlp", "lstm")},
    "sequence/plug-ins": _sequence_case(
        "mlp", label_profile=True, step_anchor=True, moment_anchor=True, label_guide=True, label_guide_epochs=1.0
    ),
    "sequence/anchors": _sequence_case("mlp", label_profile=True, step_anchor=True, moment_anchor=True),
    "sequence/gaussian-base": _sequence_case("mlp", model="gaussian+gan"),
    "sequence/entity": _sequence_case("mlp", entity="district"),
    "sequence/gaussian": _sequence_case("mlp", model="gaussian"),
    "sequence/gaussian-copula": _sequence_case("mlp", model="gaussian-copula"),
    **{f"image/{r}": _image_case(r) for r in IMAGE_RECIPES},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="write the fingerprints here (JSON)")
    parser.add_argument("--compare", help="compare with fingerprints written earlier; exit 1 on a difference")
    parser.add_argument("--cases", nargs="+", default=list(CASES))
    args = parser.parse_args()
    prints = {}
    for name in args.cases:
        with tempfile.TemporaryDirectory() as tmp:
            prints[name] = CASES[name](Path(tmp))
        print(name, prints[name]["sample"], flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(prints, indent=1, sort_keys=True))
    if args.compare:
        before = json.loads(Path(args.compare).read_text())
        differ = [name for name in prints if before.get(name) != prints[name]]
        print("all equal" if not differ else f"DIFFERENT: {', '.join(differ)}")
        sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()

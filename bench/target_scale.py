"""csv_only.py with the target histogram's noise scale set (how TARGET_HISTOGRAM_SCALE was chosen).

The no-schema path releases the target's values at TARGET_HISTOGRAM_SCALE times the base σ
(dpgan.privacy.preprocessing): lower noise keeps a rare class above the partition threshold and
costs the other columns' histograms their share. This sets the constant where dpgan reads it and
runs csv_only.py with the remaining arguments:

    python bench/target_scale.py 0.35 --tables hmda chile churn flchain loans --modes no-schema \\
        --seeds 0 1 2 --epsilon 1 --split validation --threads 1 --out results/target_scale_035_validation.jsonl
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import dpgan.tables.fit.preparation as preparation
import dpgan.tables.fit.stream_preparation as stream_preparation


def main() -> None:
    scale = float(sys.argv.pop(1))
    preparation.TARGET_HISTOGRAM_SCALE = scale
    stream_preparation.TARGET_HISTOGRAM_SCALE = scale
    script = Path(__file__).resolve().parent / "csv_only.py"
    sys.argv[0] = str(script)
    runpy.run_path(str(script), run_name="__main__")


if __name__ == "__main__":
    main()

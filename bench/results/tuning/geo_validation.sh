#!/usr/bin/env bash
# Issue 14 option 6: the latitude/longitude pair as one 2-D column (8 × 8 and 4 × 4 grids) against the
# coordinates coded one at a time, Sacramento's validation split, ε = 1, 3, 10, seeds 0-2
set -euo pipefail
cd "$(dirname "$0")/../../.."
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
cd bench && ../.venv/bin/python geo_columns.py --split validation --epsilons 1 3 10 --seeds 0 1 2 \
  --out results/tuning/geo_validation.jsonl

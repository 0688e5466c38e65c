#!/usr/bin/env bash
# Issue 15's grid on the water district-days: the GAN (series and district unit) and the DP Gaussian at
# ε = 1, 3, 10, ∞, seeds 0-2, validation then test, with the sequence defaults frozen in the commit
# that added this script (no option chosen on test). Two processes share the two cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=bench/results/sequences_water_grid.jsonl
run() { OMP_NUM_THREADS=1 .venv/bin/python bench/sequences_water.py --scale log --seeds 0 1 2 --out "$out" "$@"; }
for split in validation test; do
  run --split "$split" --epsilons 1 10 &
  run --split "$split" --epsilons 3 inf &
  wait
done

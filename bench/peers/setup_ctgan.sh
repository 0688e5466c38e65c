#!/usr/bin/env bash
# SmartNoise Synth's DP-CTGAN and PATE-CTGAN in their own venv (bench/.venv-ctgan): smartnoise-synth
# 1.0.8 pins opacus 0.14, which needs torch 1.x (PyPI's torch 1.13.1 wheel for this Python, with
# its CUDA runtime packages; it runs on the CPU here). Never a dpgan dependency.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv-ctgan
.venv-ctgan/bin/pip install -q "torch==1.13.1" "opacus==0.14.0"
.venv-ctgan/bin/pip install -q --no-deps smartnoise-synth==1.0.8 smartnoise-sql==1.0.10
.venv-ctgan/bin/pip install -q disjoint-set Faker "mbi>=1.1.0,<2" "pandas>=2.0.1,<3" "opendp>=0.14.1,<0.15" \
  PyYAML "antlr4-python3-runtime==4.9.3" graphviz sqlalchemy scikit-learn networkx "numpy<2"
.venv-ctgan/bin/pip freeze > results/peers_ctgan_versions.txt

#!/usr/bin/env bash
# SmartNoise Synth's MST and AIM in their own venv (bench/.venv-peers), never a dpgan dependency.
# smartnoise-synth 1.0.8 pins opacus 0.14 (no wheel for this Python/torch): MST and AIM need neither
# opacus nor torch, so the package goes in without dependencies and what MST/AIM import is added.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv-peers
.venv-peers/bin/pip install -q --no-deps smartnoise-synth==1.0.8 smartnoise-sql==1.0.10
.venv-peers/bin/pip install -q disjoint-set Faker "mbi>=1.1.0,<2" "pandas>=2.0.1,<3" "opendp>=0.14.1,<0.15" \
  PyYAML "antlr4-python3-runtime==4.9.3" graphviz sqlalchemy scikit-learn networkx
.venv-peers/bin/pip freeze > results/peers_versions.txt

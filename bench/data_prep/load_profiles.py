"""Build ``src/dpgan/datasets/data/load-profiles.csv.gz`` from the SimBench load profiles.

Source: SimBench (University of Kassel, TU Dortmund, RWTH Aachen University and Fraunhofer IEE;
Meinecke et al. 2020, "SimBench - A Benchmark Dataset of Electric Power Systems to Compare
Innovative Solutions Based on Power Flow Analysis", Energies 13(12):3290,
doi:10.3390/en13123290). The database is licensed under the Open Database License (ODbL) 1.0,
its contents under the Database Contents License (DbCL) 1.0; the ``simbench`` code is BSD-3. The
profiles are taken from the PyPI wheel ``simbench==1.6.3``::

    pip download --no-deps simbench==1.6.3 -d /tmp/simbench
    sha256 8b48bdab2445286a96649eb18bb09476d000a0e212fd57fdba83399df54af4de  simbench-1.6.3-py3-none-any.whl
    member simbench/networks/1-complete_data-mixed-all-0-sw/LoadProfile.csv
    sha256 382a19641b27d304b469f4c06f6f7cce8a70e33227d2d76c9f571ce1a77432b8  LoadProfile.csv

``LoadProfile.csv`` (``;``-separated) has a ``time`` column ("DD.MM.YYYY HH:MM", 2016) and, per
profile NAME, two columns ``NAME_pload`` and ``NAME_qload``: the active and reactive power of a
load as a fraction of that load's rated power (SimBench multiplies them by the load's ``pLoad``
in MW, resp. ``qLoad`` in Mvar, to get absolute power: ``get_absolute_profiles_from_relative_profiles``),
one row per quarter hour, 35,136 rows. Of its 96 active-power profiles, 25 carry the names of
the BDEW standard load profiles (VDEW 1999, "Repraesentative VDEW-Lastprofile"), with a SimBench
variant letter after the dash: ``H0-*`` household (Haushalt), ``G0-*`` .. ``G6-*`` commercial
(Gewerbe: G0 general, G1 weekdays 8-18 h, G2 evening, G3 continuous, G4 shops, G5 bakery, G6
weekend) and ``L0-*`` .. ``L2-*`` agriculture (Landwirtschaft: L0 general, L1 dairy/livestock, L2
other farms). The others (band load ``BL-H``, ``WB-H``, aggregated grid-level loads ``lv_*``,
``mv_*``, ``hv_*``, electric vehicle charging ``HLS_*``/``APLS_*``, heat pumps ``Air_*``/``Soil_*``,
``HS*``) have no household/commercial/agriculture meaning and are not used.

What this script does, and why:

1. Checks both sha256 sums, so the output is tied to one known input.
2. Reads the csv once as text and parses the chosen columns with Python's ``float`` (correctly
   rounded), so rounding to 4 significant figures below never depends on the csv parser's
   last-bit behaviour, which differs between pandas versions.
3. **Subset, by a rule fixed before looking at any values:** per category, the first four
   ``_pload`` columns in the order they appear in the file (alphabetical there): household
   H0-A, H0-B, H0-C, H0-G; commercial G0-A, G0-M, G1-A, G1-B; agriculture L0-A, L1-A, L2-A,
   L2-M (all four agriculture profiles). Equal counts per category give a balanced label, and
   12 profiles keep the shipped file under 2 MB (all 25 would be 3.8 MB).
4. **Time:** the file is in local time (CET/CEST), not a fixed grid: 2016-03-27 has 92 rows
   (no 02:00-02:45) and 2016-10-30 has 100 (02:00-02:45 twice); every other day has 96 rows
   (checked). A 92- or 100-step day has no 96-step shape, so both DST days are dropped for
   every profile, like the 23/25-hour days of the water data; 364 days remain. On the kept days
   ``step`` is the row's position in its day (0..95), equal to the clock quarter hour (checked).
   There are no missing values (checked), so no other day is dropped.
5. **Values:** ``load`` is the ``_pload`` value rounded to 4 significant figures (the source
   has 6 decimals; 4 significant figures change a value by at most 0.05 % of itself and keep the
   file small). Every value of the subset lies in [0, 1] (checked; each of these profiles peaks
   at exactly 1 over the year, i.e. they are scaled to their annual maximum).
6. Writes the long table ``profile, category, day, step, load`` (profile without the
   ``_pload`` suffix, ISO day), sorted by category (household, commercial, agriculture), profile,
   day and step, gzip level 9, mtime 0, no stored name: rerunning gives the same bytes.

    python bench/data_prep/load_profiles.py /tmp/simbench/simbench-1.6.3-py3-none-any.whl
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import re
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

WHEEL_SHA256 = "8b48bdab2445286a96649eb18bb09476d000a0e212fd57fdba83399df54af4de"
MEMBER = "simbench/networks/1-complete_data-mixed-all-0-sw/LoadProfile.csv"
MEMBER_SHA256 = "382a19641b27d304b469f4c06f6f7cce8a70e33227d2d76c9f571ce1a77432b8"
OUT = Path(__file__).resolve().parents[2] / "src" / "dpgan" / "datasets" / "data" / "load-profiles.csv.gz"
# BDEW profile-name prefixes -> category, in the order the rows are written
CATEGORIES = {"household": r"H0", "commercial": r"G[0-6]", "agriculture": r"L[0-2]"}
PER_CATEGORY = 4
STEPS = 96
DST_DAYS = {"2016-03-27": 92, "2016-10-30": 100}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_profiles(wheel: Path) -> pd.DataFrame:
    """LoadProfile.csv as read from the checked wheel: ``time`` and one text column per profile."""
    raw = wheel.read_bytes()
    if sha256(raw) != WHEEL_SHA256:
        raise SystemExit(f"{wheel}: sha256 {sha256(raw)} is not the expected {WHEEL_SHA256}")
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        text = zf.read(MEMBER)
    if sha256(text) != MEMBER_SHA256:
        raise SystemExit(f"{MEMBER}: sha256 {sha256(text)} is not the expected {MEMBER_SHA256}")
    frame = pd.read_csv(io.BytesIO(text), sep=";", dtype=str, na_filter=False)
    if frame.columns[0] != "time" or len(frame) != 366 * STEPS:
        raise SystemExit(f"unexpected layout: first column {frame.columns[0]!r}, {len(frame)} rows")
    return frame


def choose(columns: list[str]) -> dict[str, str]:
    """profile name -> category: the first PER_CATEGORY ``_pload`` columns of each category, file order."""
    chosen: dict[str, str] = {}
    for category, prefix in CATEGORIES.items():
        names = [c.removesuffix("_pload") for c in columns if re.fullmatch(rf"{prefix}-[A-Z]_pload", c)]
        if len(names) < PER_CATEGORY:
            raise SystemExit(f"{category}: only {len(names)} profiles in the file")
        chosen |= dict.fromkeys(names[:PER_CATEGORY], category)
    return chosen


def to_long(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, object]]:
    """Complete 96-step profile-days of the chosen profiles as a long table, plus what was dropped."""
    stamps = pd.to_datetime(frame["time"], format="%d.%m.%Y %H:%M")
    day = stamps.dt.strftime("%Y-%m-%d")
    rows_per_day = day.value_counts()
    irregular = rows_per_day[rows_per_day != STEPS].to_dict()
    if irregular != DST_DAYS:
        raise SystemExit(f"days without 96 rows are {irregular}, expected the DST days {DST_DAYS}")
    kept = ~day.isin(list(DST_DAYS))
    step = frame[kept].groupby(day[kept]).cumcount()
    clock = stamps[kept].dt.hour * 4 + stamps[kept].dt.minute // 15
    if not (step == clock).all():
        raise SystemExit("a 96-row day whose clock times are not 00:00..23:45 in order")
    chosen = choose(list(frame.columns))
    full_year = frame[[f"{name}_pload" for name in chosen]]
    if (full_year == "").any().any():
        raise SystemExit("a missing value in a chosen profile")
    full_year = full_year.map(float)  # ValueError on anything that is not a number
    values = full_year[kept.to_numpy()]
    if not ((full_year.min() >= 0).all() and (full_year.max() == 1.0).all()):
        raise SystemExit("a chosen profile outside [0, 1] or not peaking at 1")
    values.columns = list(chosen)
    wide = values.assign(day=day[kept].to_numpy(), step=step.to_numpy())
    long = wide.melt(id_vars=["day", "step"], var_name="profile", value_name="load")
    long["category"] = long["profile"].map(chosen)
    long["load"] = [float(f"{v:.4g}") for v in long["load"].to_numpy()]
    order = {name: i for i, name in enumerate(chosen)}
    long = long.assign(order=long["profile"].map(order)).sort_values(["order", "day", "step"])
    long = long[["profile", "category", "day", "step", "load"]].reset_index(drop=True)
    counts: dict[str, object] = {
        "rows_in_file": len(frame),
        "dst_days_dropped": DST_DAYS,
        "days_kept": int(day[kept].nunique()),
        "profiles": chosen,
        "profile_days": len(long) // STEPS,
        "max_rounding_error": float(np.abs(long["load"].to_numpy() - values.to_numpy().T.ravel()).max()),
    }
    return long, counts


def write_gzip_csv(frame: pd.DataFrame, path: Path) -> None:
    """Byte-reproducible gzip: fixed mtime and no file name in the header."""
    text = frame.to_csv(index=False, lineterminator="\n", float_format="%.4g")
    if re.search(r"\de[-+]", text):
        raise SystemExit("a value came out in exponent notation")
    with path.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=raw, mtime=0) as gz:
        gz.write(text.encode("utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("wheel", type=Path, help="path to simbench-1.6.3-py3-none-any.whl")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    long, counts = to_long(read_profiles(args.wheel))
    write_gzip_csv(long, args.out)
    for key, value in counts.items():
        print(f"{key}: {value}")
    print("profile-days per category:", (long.groupby("category", sort=False).size() // STEPS).to_dict())
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes), sha256 {sha256(args.out.read_bytes())}")


if __name__ == "__main__":
    main()

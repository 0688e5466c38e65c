"""A PNG folder's file list, held compactly: the public structure an image fit reads first.

The list (names, order, label subfolders) is public, but at 400,000 files a list of `Path` objects
takes hundreds of megabytes, more than the pixels a block holds: the fit's memory would grow with N
through its file list alone. Here each label subfolder keeps its names as one array of bytes
(os.fsencode, a few bytes per file), read with os.scandir (no `Path` per entry), and a file's path
is made only when it is read. The order is dpgan.images.io's: labels in `label_key` order, names
in sorted order within a label (a `Path` sort within one folder is a sort of the names).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dpgan.images.checks import label_key


@dataclass(frozen=True)
class PngGroup:
    """One folder's PNGs (a label subfolder, or the top folder of an unlabelled layout)."""

    label: str | None
    folder: Path
    names: np.ndarray  # bytes (os.fsencode) in name order

    def __len__(self) -> int:
        return len(self.names)


@dataclass(frozen=True)
class PngFiles:
    """The PNGs of a folder, group after group: entry i is (label or None, its path)."""

    groups: tuple[PngGroup, ...]

    def __len__(self) -> int:
        return sum(len(g) for g in self.groups)

    def labels(self) -> set[str]:
        """The label subfolders that hold a PNG (public: their names)."""
        return {g.label for g in self.groups if g.label is not None and len(g)}

    def entries(self, start: int = 0, stop: int | None = None) -> Iterator[tuple[str | None, Path]]:
        """Entries start..stop-1, in order."""
        stop = len(self) if stop is None else stop
        offset = 0
        for group in self.groups:
            low, high = max(start - offset, 0), min(stop - offset, len(group))
            for name in group.names[low:high]:
                yield group.label, group.folder / os.fsdecode(bytes(name))
            offset += len(group)
            if offset >= stop:
                return

    def unlabelled(self) -> PngFiles:
        return PngFiles(tuple(PngGroup(None, g.folder, g.names) for g in self.groups))


def _visible(name: str) -> bool:
    return not name.startswith(".")


def _is_png(entry: os.DirEntry) -> bool:
    return entry.is_file() and os.path.splitext(entry.name)[1].lower() == ".png"


def _names(pngs: list[str]) -> np.ndarray:
    return np.array([os.fsencode(n) for n in sorted(pngs)], dtype=bytes) if pngs else np.zeros(0, dtype="S1")


def list_pngs(folder: Path, labelled: bool, not_png: str, outside: str) -> tuple[PngFiles, dict[str, int]]:
    """The folder's PNGs by the layout's rule (dpgan.images.io), and its entries dropped per reason
    (`not_png`: not a PNG file; `outside`: PNGs outside a label folder). Nothing here is refused."""
    dropped = {not_png: 0}
    with os.scandir(folder) as listing:
        entries = [e for e in listing if _visible(e.name)]
    subfolders = sorted((e.name for e in entries if e.is_dir()), key=label_key)
    top = [e.name for e in entries if _is_png(e)]
    dropped[not_png] += sum(1 for e in entries if not e.is_dir() and not _is_png(e))
    groups: list[PngGroup] = []
    if labelled:
        dropped[outside] = len(top)
    else:
        groups.append(PngGroup(None, folder, _names(top)))
    del entries, top
    for name in subfolders:
        sub = folder / name
        with os.scandir(sub) as listing:
            pngs, others = [], 0
            for entry in listing:
                if not _visible(entry.name):
                    continue
                if _is_png(entry):
                    pngs.append(entry.name)
                else:
                    others += 1
        dropped[not_png] += others
        groups.append(PngGroup(name if labelled else None, sub, _names(pngs)))
    return PngFiles(tuple(groups)), dropped


__all__ = ["PngFiles", "PngGroup", "list_pngs"]

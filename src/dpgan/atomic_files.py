"""The temporary sibling that every atomic write of a released file starts from.

A release (synthetic tables, series and images, their contact sheets, a model directory: its
generator is DP, so it is a release too) is written to a hidden sibling of its target, in the same
folder so that the final `os.replace` is a rename on one file system, and renamed into place only
when complete. The sibling is made with the user's umask, as any file they create: 0644 (0755 for
a folder) under the usual umask 022, so a release can be shared as it is. `tempfile`'s files and
folders are owner-only (0600 / 0700), which suits secrets and is what the fit's checkpoints keep
(dpgan.training.checkpoint, dpgan.tables.fit.resume): they hold the noise seed.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path


def released_sibling(path: str | Path, *, folder: bool = False, suffix: str = "") -> Path:
    """Create and return a new hidden sibling of `path` (a file, or a folder with `folder`), named
    uniquely, with the modes the user's umask gives a new file or folder. The caller renames it
    over `path` when complete and removes it on failure."""
    target = Path(path)
    name = target.parent / f".{target.name}.{uuid.uuid4().hex}{suffix}"
    if folder:
        name.mkdir()
    else:
        name.touch(exist_ok=False)
    return name


def replace_folder(staging: Path, target: Path) -> None:
    """Rename the folder `staging` over `target`, a folder being replaced moved aside first and put
    back if anything (Ctrl-C included) stops the swap: the path holds the old folder or the new,
    never neither (issue 49; removing the old one first left nothing there if interrupted between)."""
    aside = target.parent / f".{target.name}.{uuid.uuid4().hex}.old" if target.exists() else None
    try:
        if aside is not None:
            os.replace(target, aside)
        os.replace(staging, target)
    except BaseException:
        if aside is not None and aside.exists() and not target.exists():
            os.replace(aside, target)
        raise
    if aside is not None:
        shutil.rmtree(aside, ignore_errors=True)


__all__ = ["released_sibling", "replace_folder"]

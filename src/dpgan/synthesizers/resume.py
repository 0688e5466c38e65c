"""A fit that can be killed and resumed: its seed, its identity and its checkpoint file.

dpgan.training.checkpoint has the argument: a resumed fit replays the releases before training
with the same fit seed on the same table (so they are the same values, not new releases), then
restores the loop. This module makes that hold at the facade:
- the fit seed is the user's `seed`, else the one saved in the checkpoint, else fresh OS entropy
  (kept only in the checkpoint, which is deleted when the fit ends);
- the identity the checkpoint must match names the settings, the table (a SHA-256 of its cells,
  column names and dtypes), the schema and hints, the fit seed and, once replayed, the releases
  before training (the ledger, the schema, the condition prior and every DP-trained tensor):
  any difference — another table, other settings, or a replay that did not reproduce the
  releases bit for bit — is refused instead of resumed.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from dpgan import __version__
from dpgan.errors import InputError
from dpgan.schema import Schema
from dpgan.synthesizers.arguments import FitOptions
from dpgan.training.checkpoint import STATE_FILE, FitCheckpoint, check_every, read_checkpoint

DEFAULT_CHECKPOINT_EVERY = 100


@dataclass(frozen=True)
class ResumableFit:
    """Where a fit writes its checkpoint, how often, and the identity known before it reads data."""

    directory: Path
    every: int
    identity: dict[str, Any]

    @property
    def fit_seed(self) -> int:
        return int(self.identity["fit_seed"])

    def checkpoint(self, releases_before_training: str) -> FitCheckpoint:
        """The loop's checkpoint, once the releases before training are known."""
        return FitCheckpoint(self.directory, self.every, {**self.identity, "releases": releases_before_training})


def resumable_fit(
    directory: str | Path,
    every: int,
    *,
    data: pd.DataFrame,
    schema: Schema | None,
    options: FitOptions,
    settings: dict[str, Any],
    user_seed: int | None,
    public: dict[str, Any] | None = None,
) -> ResumableFit:
    """The fit's identity, its seed taken from the user, the checkpoint or OS entropy (in that order)."""
    check_every(every)  # refused before the table is read, like every other setting
    target = Path(directory)
    if target.exists() and not target.is_dir():
        raise InputError(f"{target} is a file, not a checkpoint directory")
    saved: dict[str, Any] | None = None
    if (target / STATE_FILE).exists():
        header, _ = read_checkpoint(target / STATE_FILE)
        saved = dict(header.get("identity") or {})
    fit_seed = user_seed if user_seed is not None else (saved or {}).get("fit_seed")
    if fit_seed is None:
        fit_seed = secrets.randbits(63)
    identity = {
        "dpgan_version": __version__,
        "settings": _json_digest(settings),
        "table": table_fingerprint(data),
        "schema": _json_digest(None if schema is None else schema.to_dict()),
        "options": _json_digest(asdict(options)),
        "fit_seed": int(fit_seed),
        # the public warm start's table (its SHA-256) and steps; None (as in older checkpoints) without
        "public_data": None if public is None else _json_digest(public),
    }
    if saved is not None and any(saved.get(key) != value for key, value in identity.items()):
        # refused before any read of the table: a replay with this seed on another table would
        # draw the saved fit's noise again on different data
        raise InputError(
            f"{target} holds the checkpoint of another fit (other settings, table or seed); "
            "give an empty directory to start over"
        )
    return ResumableFit(target, every, identity)


def table_fingerprint(data: pd.DataFrame) -> str:
    """SHA-256 of every cell, the column names and dtypes: equal only for the same table. It is
    kept in the checkpoint, which is as secret as the table (dpgan.training.checkpoint)."""
    digest = hashlib.sha256()
    digest.update(json.dumps([[str(c), str(t)] for c, t in data.dtypes.items()]).encode())
    digest.update(pd.util.hash_pandas_object(data, index=True).to_numpy().tobytes())
    return digest.hexdigest()


def releases_fingerprint(values: dict[str, Any], tensors: Iterable[torch.Tensor]) -> str:
    """SHA-256 of the releases before training: JSON values (ledger, schema, prior) and tensors."""
    digest = hashlib.sha256(json.dumps(values, sort_keys=True, default=str).encode())
    for tensor in tensors:
        digest.update(str(tuple(tensor.shape)).encode())
        digest.update(tensor.detach().contiguous().cpu().numpy().tobytes())
    return digest.hexdigest()


def _json_digest(value: Any) -> str:
    """SHA-256 of `value` as canonical JSON (sorted keys; what JSON lacks, as its str)."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()

"""A fit that can be killed and resumed: its seed, its identity and its checkpoint file.

dpgan.training.checkpoint has the argument: a resumed fit replays the releases before training
with the same fit seed on the same table (so they are the same values, not new releases), then
restores the loop. This module makes that hold at the facade:
- the fit seed is the user's `seed`, else the one saved in the checkpoint directory, else fresh OS
  entropy (kept only in that directory, which is emptied when the fit ends);
- the seed is pinned (`ResumableFit.pin`: the identity file, owner-only) before any noisy value
  leaves the process: the notes that print N̂ and the repair counts come after it, and the first
  checkpoint of the loop comes much later. So a fit killed at any point after it printed something
  and rerun with the same directory replays those values instead of drawing new ones (which
  would be a second release that the final ledger, counting one, would not cover);
- a fit rerun with ANOTHER directory, or without one, is a new fit: it cannot know what an earlier
  run printed, so it draws new noise. Its ledger covers its own releases only, and the values the
  earlier run printed were releases too: the ε of both runs adds up. `started_note` says so at
  the start of every new checkpointed fit (the CLI prints it), and the README repeats it;
- the identity the checkpoint must match names the settings, the table (a SHA-256 of its cells,
  column names and dtypes), the schema and hints, the fit seed and, once replayed, the releases
  before training (the ledger, the schema, the condition prior and every DP-trained tensor):
  any difference — another table, other settings, or a replay that did not reproduce the
  releases bit for bit — is refused instead of resumed.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from dpgan import __version__
from dpgan.errors import InputError
from dpgan.privacy.accounting import PrivacyLedger
from dpgan.tables.fit.options import FitOptions
from dpgan.tables.fit.plugins import TableExtras
from dpgan.tables.schema.table import Schema
from dpgan.training.checkpoint import IDENTITY_FILE, STATE_FILE, FitCheckpoint, check_every, read_checkpoint
from dpgan.training.gan_loop import GeneratorHook

DEFAULT_CHECKPOINT_EVERY = 100


@dataclass(frozen=True)
class ResumableFit:
    """Where a fit writes its checkpoint, how often, the identity known before it reads data, and
    whether the directory already held this fit (`resumed`: its seed is replayed)."""

    directory: Path
    every: int
    identity: dict[str, Any]
    resumed: bool = False

    @property
    def fit_seed(self) -> int:
        return int(self.identity["fit_seed"])

    def checkpoint(self, releases_before_training: str) -> FitCheckpoint:
        """The loop's checkpoint, once the releases before training are known."""
        return FitCheckpoint(self.directory, self.every, {**self.identity, "releases": releases_before_training})

    def pin(self, writer: bool = True) -> None:
        """Keep the identity (with the fit seed) in the directory now, before a noisy value leaves
        the process: a rerun after a kill at any later point replays the same releases. Written
        owner-only under a temporary name and renamed; `writer` False on ranks other than 0."""
        if not writer:
            return
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle, staging = tempfile.mkstemp(prefix=".identity.", dir=self.directory)
        try:
            with os.fdopen(handle, "w") as out:
                json.dump(self.identity, out, sort_keys=True)
            os.chmod(staging, 0o600)
            os.replace(staging, self.directory / IDENTITY_FILE)
        finally:
            if os.path.exists(staging):
                os.unlink(staging)

    def started_note(self, user_seeded: bool = False) -> str | None:
        """What a person should know when the fit starts (module docstring); None for a new fit
        with the user's seed (a rerun with that seed draws the same noise wherever it runs)."""
        if self.resumed:
            return (
                f"resuming the fit kept in {self.directory}: its noisy values (N̂, repair counts, the schema) are "
                "replayed with its seed, the same values, not new releases"
            )
        if user_seeded:
            return None
        return (
            f"a new fit: its seed is kept in {self.directory} until it succeeds. If it is killed, rerun it with this "
            "--checkpoint: what it printed is then replayed, not released again. Starting over with another "
            "directory or none draws new noise: the noisy values both runs print are two releases, and their "
            "ε adds up"
        )


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
    elif (target / IDENTITY_FILE).exists():  # killed after its first print, before its first checkpoint
        saved = read_identity(target / IDENTITY_FILE)
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
    return ResumableFit(target, every, identity, resumed=saved is not None)


def read_identity(path: Path) -> dict[str, Any]:
    """The identity a fit pinned in its directory (`ResumableFit.pin`); InputError if it is not one."""
    try:
        identity = json.loads(path.read_text())
    except (OSError, ValueError):
        raise InputError(f"{path} is not a dpgan fit identity; start over with an empty directory") from None
    if not isinstance(identity, dict) or "fit_seed" not in identity:
        raise InputError(f"{path} is not a dpgan fit identity; start over with an empty directory")
    return identity


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


def releases_before_training(ledger: PrivacyLedger, extras: TableExtras, hooks: Sequence[GeneratorHook]) -> str:
    """The fingerprint a resumed fit's replay must reproduce: every release before the loop (the
    ledger, the released schema and condition, the plug-ins' models and G's hooks)."""
    tensors: list[torch.Tensor] = []
    if extras.label_model is not None:
        tensors += list(extras.label_model.tensors().values())
    if isinstance(extras.objective.classifier, torch.nn.Module):
        tensors += list(extras.objective.classifier.state_dict().values())
    for hook in hooks:
        tensors += hook.released()
    condition = extras.condition
    values = {
        "ledger": ledger.to_dict(),
        "schema": extras.encoder.schema.to_dict(),
        "condition": None if condition is None else condition.to_dict(),
    }
    return releases_fingerprint(values, tensors)

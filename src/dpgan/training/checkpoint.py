"""Checkpoints of a running fit, so that a killed fit resumes without losing what it spent.

What a checkpoint holds: the loop's state after `step` private steps (G, its average, the
critic(s), the optimizers, the clipping bound, the random generator's state) and the ledger's
count of releases, in one safetensors file (tensors, plus a JSON header: no pickle) written under a
temporary name and renamed, so a kill mid-write leaves the previous checkpoint intact.

Why a resumed fit spends exactly what an uninterrupted one would. The fit is a deterministic
function of the table and one fit seed (every draw — noise, batches, network weights — comes from
it; dpgan.synthesizers draws it from OS entropy unless a seed is given, and the checkpoint keeps it).
Resuming replays the releases before training with that seed on the same table (verified: the
checkpoint stores a fingerprint of the table and of the replayed releases, and refuses to resume if
either differs), so they are the same values, not new releases; then it restores the loop at
`step`, with the generator's state, and runs the remaining steps. The seed is kept in the directory
(IDENTITY_FILE, dpgan.tables.fit.resume) before the fit prints any noisy value, so a kill before
the first checkpoint replays those values too. A step after `step` that ran
before the kill is run again with the same noise: what was lost with the kill (it never left the
process, and nothing published depends on it) is replaced, not added to. The ledger restored from
the checkpoint counts the `step` releases before it and charges the others as they run, so its
final count is the uninterrupted fit's T.

A checkpoint is as sensitive as the table itself: with the fit seed, the noise of every release can
be redrawn and subtracted, and dtgan-g's critics and shard key are not private at all. It is
written with owner-only permissions and deleted when the fit ends; never publish one.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from dpgan.errors import InputError

STATE_FILE = "fit-checkpoint.safetensors"
IDENTITY_FILE = "fit-identity.json"  # the fit's identity and seed, pinned before its first print
HEADER_KEY = "dpgan_fit_checkpoint"
FORMAT_VERSION = 1


@dataclass
class Snapshot:
    """A loop's state: named tensors and JSON values, filled and read by name."""

    step: int
    tensors: dict[str, torch.Tensor] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)

    def put_module(self, name: str, module: torch.nn.Module) -> None:
        for key, tensor in module.state_dict().items():
            self.tensors[f"{name}/{key}"] = _cpu_copy(tensor)

    def get_module(self, name: str, module: torch.nn.Module) -> None:
        prefix = f"{name}/"
        state = {k[len(prefix) :]: v for k, v in self.tensors.items() if k.startswith(prefix)}
        try:
            module.load_state_dict(state, strict=True)
        except RuntimeError:
            raise InputError(f"the checkpoint's {name} does not fit this fit's network") from None

    def put_optimizer(self, name: str, optimizer: torch.optim.Optimizer) -> None:
        """Adam's or RMSprop's per-parameter tensors go to tensors, everything else to JSON."""
        state = optimizer.state_dict()
        plain: dict[str, dict[str, Any]] = {}
        for index, per_param in state["state"].items():
            plain[str(index)] = {}
            for key, value in per_param.items():
                if isinstance(value, torch.Tensor):
                    self.tensors[f"{name}/{index}/{key}"] = _cpu_copy(value)
                else:
                    plain[str(index)][key] = value
        self.values[name] = {"state": plain, "param_groups": state["param_groups"]}

    def get_optimizer(self, name: str, optimizer: torch.optim.Optimizer) -> None:
        saved = self.values[name]
        state: dict[int, dict[str, Any]] = {int(i): dict(v) for i, v in saved["state"].items()}
        prefix = f"{name}/"
        for key, tensor in self.tensors.items():
            if key.startswith(prefix):
                index, item = key[len(prefix) :].split("/", 1)
                state.setdefault(int(index), {})[item] = tensor
        try:
            optimizer.load_state_dict({"state": state, "param_groups": saved["param_groups"]})
        except (ValueError, KeyError):
            raise InputError(f"the checkpoint's {name} does not fit this fit's optimizer") from None

    def put_generator(self, name: str, generator: torch.Generator) -> None:
        self.tensors[name] = generator.get_state().clone()

    def get_generator(self, name: str, generator: torch.Generator) -> None:
        generator.set_state(self.tensors[name].clone())


class FitCheckpoint:
    """The checkpoint file of one fit in `directory`, written every `every` private steps.

    `identity` (JSON) names the fit: settings, the table's fingerprint, the fit seed and the
    fingerprint of the releases before training. `load` returns the saved snapshot only if its
    identity is the same (InputError otherwise: resuming another fit's state would mix two fits'
    noise), None when there is no checkpoint yet."""

    def __init__(self, directory: str | Path, every: int, identity: dict[str, Any]) -> None:
        check_every(every)
        self.directory, self.every, self.identity = Path(directory), every, identity
        self.path = self.directory / STATE_FILE
        # False on the ranks of a data-parallel fit other than 0: they read the checkpoint, and
        # rank 0 alone writes and deletes it (their states are identical, dpgan.privacy.distributed)
        self.writer = True

    def due(self, steps_done: int, total: int) -> bool:
        """After `steps_done` steps: write now? (every `every` steps; not after the last one)."""
        return steps_done < total and steps_done % self.every == 0

    def save(self, snapshot: Snapshot) -> None:
        from safetensors.torch import save_file

        if not self.writer:
            return
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        header = {
            "format": FORMAT_VERSION,
            "identity": self.identity,
            "step": snapshot.step,
            "values": snapshot.values,
        }
        handle, staging = tempfile.mkstemp(prefix=".checkpoint.", dir=self.directory)
        os.close(handle)
        try:
            os.chmod(staging, 0o600)
            save_file(
                {k: _cpu_copy(v) for k, v in snapshot.tensors.items()},
                staging,
                metadata={HEADER_KEY: json.dumps(header)},
            )
            os.replace(staging, self.path)
        finally:
            if os.path.exists(staging):
                os.unlink(staging)

    def load(self) -> Snapshot | None:
        if not self.path.exists():
            return None
        header, tensors = read_checkpoint(self.path)
        if header.get("identity") != self.identity:
            raise InputError(
                f"{self.directory} holds the checkpoint of another fit (other settings, table or seed); "
                "give an empty directory to start over"
            )
        return Snapshot(int(header["step"]), tensors, dict(header["values"]))

    def remove(self) -> None:
        """After the fit: the checkpoint and the pinned identity are secret material (module docstring)."""
        if not self.writer:
            return
        for path in (self.path, self.directory / IDENTITY_FILE):
            if path.exists():
                path.unlink()


def _cpu_copy(tensor: torch.Tensor) -> torch.Tensor:
    """A CPU copy (the file holds CPU tensors, whatever device the fit ran on; a resumed fit's
    load_state_dict moves them back onto its parameters' device)."""
    return tensor.detach().to("cpu", copy=True).contiguous()


def check_every(every: object) -> int:
    """A checkpoint interval: a positive integer number of private steps."""
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise InputError(f"checkpoint_every must be a positive integer, got {every!r}")
    return every


def read_checkpoint(path: Path) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """The header and tensors of a checkpoint file; InputError if it is not one."""
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(path), framework="pt") as handle:
            metadata = handle.metadata() or {}
            tensors = {key: handle.get_tensor(key) for key in handle.keys()}
        header = json.loads(metadata[HEADER_KEY])
    except (SafetensorError, OSError, KeyError, ValueError):
        raise InputError(f"{path} is not a dpgan fit checkpoint") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT_VERSION:
        raise InputError(f"{path} is a fit checkpoint of another format; start over with an empty directory")
    return header, tensors

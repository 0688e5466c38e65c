"""Where a fit runs: "cpu", "cuda", "cuda:N" or "auto", the same code path for every data kind.

The rule that keeps one code path (and seeded CPU results unchanged):
1. the facade resolves the device when it is built, before any data is read, so an unknown or
   unavailable device is one clear InputError and never a traceback half-way through a fit;
2. the fit runs inside `on_device(device)`: torch's factory functions (zeros, ones, tensor, the
   networks' parameters) default to that device, so the engine needs no device argument;
3. every torch.Generator of a fit is made by `seeded_generator` on that device, and the engine draws
   with `device=generator.device` (the Poisson masks, α, microbatch ids, G's noise) or on the
   device of the sums (dpgan.privacy.noise): the DP noise is drawn where the clipped sums are;
4. tensors made from NumPy arrays (torch.from_numpy stays on the CPU) are moved with `to_device`;
5. what a fit releases is moved back to the CPU (`released_on_cpu`): a model fitted on a GPU
   samples, saves (safetensors) and loads exactly like one fitted on the CPU.
On the CPU every step above is the identity, so a seeded CPU fit draws the same numbers as before.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

import torch

from dpgan.errors import InputError

DEVICE_CHOICES = ("cpu", "cuda", "auto")  # and "cuda:N"
_CUDA = re.compile(r"^cuda(:(\d+))?$")


def resolve_device(device: str | torch.device | None) -> torch.device:
    """The torch.device for "cpu", "cuda", "cuda:N" or "auto" (cuda when available, else cpu);
    one clear InputError for anything else or a GPU this machine does not have."""
    name = "cpu" if device is None else str(device).strip().lower()
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cpu":
        return torch.device("cpu")
    match = _CUDA.match(name)
    if match is None:
        raise InputError(f"device must be 'cpu', 'cuda', 'cuda:N' or 'auto', got {device!r}")
    if not torch.cuda.is_available():
        raise InputError(f"device {device!r}: no CUDA GPU is available on this machine (use device='cpu')")
    index = int(match.group(2)) if match.group(2) is not None else torch.cuda.current_device()
    if index >= torch.cuda.device_count():
        raise InputError(f"device {device!r}: this machine has {torch.cuda.device_count()} CUDA GPU(s)")
    return torch.device("cuda", index)


@contextlib.contextmanager
def on_device(device: torch.device) -> Iterator[None]:
    """Run a fit on `device`: factory functions default to it inside (rule 2 of the module)."""
    with torch.device(device):
        yield


def current_device() -> torch.device:
    """The device factory functions use here (the fit's inside `on_device`, else the CPU)."""
    return torch.get_default_device()


def seeded_generator(seed: int, device: torch.device | None = None) -> torch.Generator:
    """A torch.Generator on `device` (default: the current fit's), seeded: the fit's draws and its
    DP noise come from it on the device where they are used (rule 3)."""
    return torch.Generator(device=device if device is not None else current_device()).manual_seed(int(seed))


def module_device(module: torch.nn.Module) -> torch.device:
    """The device of a module's parameters (the CPU for one without any)."""
    return next((p.device for p in module.parameters()), torch.device("cpu"))


def to_device(tensor: torch.Tensor) -> torch.Tensor:
    """`tensor` on the current fit's device (the same object on the CPU: rule 4)."""
    return tensor.to(current_device())


def released_on_cpu(*modules: Any) -> None:
    """Move what a fit releases (and keeps in memory) to the CPU, in place (rule 5): networks, or
    statistics models (whose `to` moves their arrays)."""
    for module in modules:
        if module is not None:
            module.to("cpu")


@contextlib.contextmanager
def seeded_fork(device: torch.device) -> Iterator[None]:
    """torch.random.fork_rng over the CPU and, on a GPU, that GPU: seeding the global RNG for a fit's
    network weights leaves the caller's RNG state as it was, on every device it touches."""
    devices = (
        [device.index if device.index is not None else torch.cuda.current_device()] if device.type == "cuda" else []
    )
    with torch.random.fork_rng(devices=devices):
        yield


__all__ = [
    "DEVICE_CHOICES",
    "current_device",
    "module_device",
    "on_device",
    "released_on_cpu",
    "resolve_device",
    "seeded_fork",
    "seeded_generator",
    "to_device",
]

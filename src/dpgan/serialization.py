"""Save and load a released model: safetensors for the weights, JSON for everything else.

No pickle anywhere, so loading a model file cannot run code. The directory is written under a
temporary name and renamed at the end, so a failure never leaves a directory that looks complete.
Only released networks are saved (the generator and, if fitted, the DP-trained label model):
never the critic, the data, or any RNG state.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from dpgan.errors import ModelFileError

FORMAT = "dpgan-model"
FORMAT_VERSION = 1
WEIGHTS = "generator.safetensors"
METADATA = "model.json"


def write_model_dir(path: str | Path, tensors: dict[str, torch.Tensor], metadata: dict[str, Any]) -> Path:
    """Write atomically: build in a sibling temp dir, then rename into place."""
    target = Path(path)
    if target.exists() and not (target / METADATA).exists() and any(target.iterdir()):
        raise ModelFileError(f"{target} exists and is not a dpgan model directory; refusing to overwrite it")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        save_file({k: v.detach().contiguous().cpu() for k, v in tensors.items()}, str(staging / WEIGHTS))
        document = {"format": FORMAT, "format_version": FORMAT_VERSION, **metadata}
        (staging / METADATA).write_text(json.dumps(document, indent=1, default=_json_default))
        if target.exists():
            shutil.rmtree(target)
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def read_model_dir(path: str | Path) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Read a directory written by `write_model_dir`; anything else is refused."""
    directory = Path(path)
    if not directory.is_dir():
        raise ModelFileError(f"model directory not found: {directory}")
    meta_path, weights_path = directory / METADATA, directory / WEIGHTS
    if not meta_path.is_file() or not weights_path.is_file():
        raise ModelFileError(f"{directory} is not a complete dpgan model (needs {METADATA} and {WEIGHTS})")
    try:
        metadata = json.loads(meta_path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFileError(f"{meta_path} is corrupt: {exc}") from None
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
        raise ModelFileError(f"{directory} was not written by dpgan")
    if metadata.get("format_version") != FORMAT_VERSION:
        raise ModelFileError(
            f"{directory} has model format {metadata.get('format_version')}, expected {FORMAT_VERSION}"
        )
    try:
        tensors = load_file(str(weights_path))
    except Exception as exc:  # safetensors raises several types for a damaged file
        raise ModelFileError(f"{weights_path} is corrupt: {exc}") from None
    return tensors, metadata


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, (set, tuple)):
        return list(value)
    raise TypeError(f"cannot store {type(value).__name__} in model.json")

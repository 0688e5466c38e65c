"""Save and load a released model: safetensors for the weights, JSON for everything else.

No pickle anywhere, so loading a model file cannot run code. The directory is written under a
temporary name and renamed at the end, so a failure never leaves a directory that looks complete.
Only what was released is saved: a GAN model's released networks (the generator and, if fitted,
the DP-trained label model) in generator.safetensors (format 2), or a statistics model's released
arrays in statistics.safetensors (format 3: no network); never the critic, the data, or any RNG
state.

model.json carries a SHA-256 of its own content (canonical JSON without the hash) and of the
weights file; `read_model_dir` refuses a directory whose content no longer matches. It catches
edits and corruption (an edited noise multiplier would change the printed ε silently); it is
not a signature: someone who edits on purpose can recompute it.

model.json also holds the model's privacy report as the facade computed it when saving
(REPORT_KEY: ε by each accountant, each ledger entry's ε alone, the kind's details), so that
`dpgan inspect` answers from JSON alone, without PyTorch or a PLD composition (dpgan.inspection).
It is derived from the ledger and training record beside it, under the same hash; a file written
before it existed has none and is inspected by loading the model.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpgan.atomic_files import released_sibling, replace_folder
from dpgan.errors import ModelFileError

if TYPE_CHECKING:
    import torch

FORMAT = "dpgan-model"
FORMAT_VERSION = 2  # 2: content hash (1 had none; its dtgan-g ε used a bound since withdrawn)
STATISTICS_FORMAT = 3  # 3: a statistics model, its released arrays in STATISTICS (no network)
HASH_KEY = "content_sha256"
WEIGHTS = "generator.safetensors"
STATISTICS = "statistics.safetensors"
TENSOR_FILES = {FORMAT_VERSION: WEIGHTS, STATISTICS_FORMAT: STATISTICS}  # the one tensors file of each format
METADATA = "model.json"
REPORT_KEY = "privacy_report"  # derived: the facade's privacy_report() at save time (dpgan.inspection)


def check_model_destination(path: str | Path, overwrite: bool = False) -> Path:
    """Where a model may be written: a new or empty directory, or (with `overwrite`) an existing
    dpgan model. Callers check this before reading any data, so a refused destination never
    wastes a fit and its budget."""
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise ModelFileError(f"{target} exists and is a file, not a model directory")
    if target.is_dir() and any(target.iterdir()):
        if not (target / METADATA).exists():
            raise ModelFileError(f"{target} exists and is not a dpgan model directory; refusing to overwrite it")
        if not overwrite:
            raise ModelFileError(f"{target} already holds a model; pass overwrite=True (--overwrite) to replace it")
    return target


def write_model_dir(
    path: str | Path,
    tensors: dict[str, torch.Tensor],
    metadata: dict[str, Any],
    *,
    overwrite: bool = False,
    statistics: bool = False,
) -> Path:
    """Write atomically: build in a sibling temp dir, then rename into place. The model is a
    release (its generator is DP), so it gets the modes of one (dpgan.atomic_files: 0755 and
    0644 under the usual umask), not tempfile's owner-only ones. `statistics`: the tensors are a
    statistics model's released arrays (format 3, STATISTICS), else a GAN's weights (WEIGHTS)."""
    from safetensors.torch import save  # torch loads only when a model is written or read

    target = check_model_destination(path, overwrite)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = released_sibling(target, folder=True)
    try:
        # the bytes, written by Python: safetensors' own save_file makes its file owner-only (0600)
        weights = save({k: v.detach().contiguous().cpu() for k, v in tensors.items()})
        version = STATISTICS_FORMAT if statistics else FORMAT_VERSION
        (staging / TENSOR_FILES[version]).write_bytes(weights)
        document = json.loads(
            json.dumps({"format": FORMAT, "format_version": version, **metadata}, default=_json_default)
        )
        document[HASH_KEY] = content_hash(document, weights)
        (staging / METADATA).write_text(json.dumps(document, indent=1))
        replace_folder(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def read_model_dir(path: str | Path) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Read a directory written by `write_model_dir`; anything else is refused."""
    from safetensors.torch import load_file

    metadata = read_model_metadata(path)
    weights_path = Path(path) / TENSOR_FILES[metadata["format_version"]]
    try:
        tensors = load_file(str(weights_path))
    except Exception as exc:  # safetensors raises several types for a damaged file
        raise ModelFileError(f"{weights_path} is corrupt: {type(exc).__name__}") from None
    return tensors, metadata


def read_model_metadata(path: str | Path) -> dict[str, Any]:
    """model.json of a directory written by `write_model_dir`, checked against its content hash
    (over the tensors file's bytes too) but without loading the tensors or PyTorch."""
    directory = Path(path)
    if not directory.is_dir():
        raise ModelFileError(f"model directory not found: {directory}")
    meta_path = directory / METADATA
    if not meta_path.is_file() or not any((directory / name).is_file() for name in set(TENSOR_FILES.values())):
        raise ModelFileError(f"{directory} is not a complete dpgan model (needs {METADATA} and {WEIGHTS})")
    try:
        metadata = json.loads(meta_path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFileError(f"{meta_path} is corrupt: {exc}") from None
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
        raise ModelFileError(f"{directory} was not written by dpgan")
    version = metadata.get("format_version")
    if isinstance(version, bool) or version not in TENSOR_FILES:
        raise ModelFileError(
            f"{directory} has model format {version}, expected {FORMAT_VERSION} or {STATISTICS_FORMAT}: "
            "it was written by another dpgan version; fit it again"
        )
    weights_path = directory / TENSOR_FILES[version]
    if not weights_path.is_file():
        raise ModelFileError(f"{directory} is not a complete dpgan model (needs {METADATA} and {weights_path.name})")
    if metadata.get(HASH_KEY) != content_hash(metadata, weights_path.read_bytes()):
        raise ModelFileError(
            f"{directory} was changed after dpgan wrote it (its content hash does not match): "
            "refusing it, since its ledger and weights may not be what was trained"
        )
    return metadata


def statistics_file(
    path: str | Path, metadata: dict[str, Any], model: str, *, statistics: bool, saved_in_network: bool
) -> bool:
    """Whether the model file holds a statistics model's arrays (format 3) rather than a network's
    weights, checked against the model model.json names: `statistics`, whether that model is DP
    statistics. A statistics model in a network's format is, where `saved_in_network` (its kind's
    rule: an earlier dpgan saved that model inside a network's weights), one line saying to fit it
    again; else, like a GAN with a statistics file, a file no dpgan wrote: ValueError, which the
    facade's `load` reports as an inconsistent model."""
    saved_as_statistics = metadata["format_version"] == STATISTICS_FORMAT
    if saved_as_statistics == statistics:
        return statistics
    if statistics and saved_in_network:
        raise ModelFileError(
            f"{path} holds a {model!r} model saved by an earlier dpgan inside a network's weights: fit it again "
            "(statistics models are now saved as their released arrays alone)"
        )
    raise ValueError(f"a {model!r} model with {'a statistics file' if saved_as_statistics else 'network weights'}")


def content_hash(metadata: dict[str, Any], weights: bytes) -> str:
    """SHA-256 of the canonical JSON of `metadata` (without its own hash) and of the weights file."""
    body = {k: v for k, v in metadata.items() if k != HASH_KEY}
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode())
    digest.update(hashlib.sha256(weights).digest())
    return digest.hexdigest()


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, (set, tuple)):
        return list(value)
    raise TypeError(f"cannot store {type(value).__name__} in model.json")

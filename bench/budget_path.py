"""The path of the privacy budget through a fit, from the command line to the first noise draw.

Each kind's default fit (bench/cli_latency.py's FITS, the README Quickstart's, with an ε no other
number shares) runs under a call tracer until the first call into dpgan/privacy/noise.py, the one
place DP noise is drawn; nothing is fitted past it. Three counts (issue 50: "the budget lives in
one object from the facade to the engine; each kind's flow goes down the spine without re-entering
a file it left"):

- budget path: the calls into src/dpgan that are passed ε (an argument other than `self` that is ε
  or holds it within two attributes: the facade, the settings, the budget, a kind, the context; a
  method of an object that holds it, called with nothing else, is the holder answering, not a hop),
  as the files they enter, consecutive calls in one file merged; `hops` is the number of moves
  between files, `re-entries` the entries into a file already entered before; `from the facade`
  counts the same from the facade's constructor on (the command line's checks of its flags left out);
- stack: the dpgan frames under the first noise draw, outermost first, merged the same way; a file
  listed twice is a flow that went back up into a file it had left (`stack re-entries`);
- holders: at the first noise draw, the objects holding ε as an attribute of their own (gc scan),
  by class: the places the budget is held (the CLI's argument namespace is the user's input).

    PYTHONPATH=src python bench/budget_path.py            # all three kinds
    PYTHONPATH=src python bench/budget_path.py --kind table --files
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import os
import sys
import tempfile
import types
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cli_latency import FITS  # noqa: E402

EPSILON = 2.718281828  # no default, constant or share of the code equals it
NOISE_FILE = os.sep + os.path.join("dpgan", "privacy", "noise.py")
SKIP_TYPES = (types.ModuleType, type, types.FunctionType, types.MethodType, str, bytes)


class FirstNoise(BaseException):
    """Raised by the tracer at the first noise draw (a BaseException: no `except Exception` stops it)."""


def carries(value: object, depth: int = 2) -> bool:
    """Whether `value` is ε or holds it within `depth` attributes."""
    if isinstance(value, float):
        return value == EPSILON
    if depth == 0 or isinstance(value, SKIP_TYPES) or value is None:
        return False
    try:
        fields = vars(value)
    except TypeError:
        slots = getattr(type(value), "__slots__", ())
        fields = {name: getattr(value, name, None) for name in slots}
    return any(carries(item, depth - 1) for item in list(fields.values())[:40])


def holds(value: object) -> bool:
    """Whether `value` holds ε as an attribute of its own (dataclass field, __dict__ or slot)."""
    if isinstance(value, SKIP_TYPES) or isinstance(value, (dict, list, tuple, set, frozenset)):
        return False
    try:
        fields = vars(value)
    except TypeError:
        if not dataclasses.is_dataclass(value):
            return False
        fields = {f.name: getattr(value, f.name, None) for f in dataclasses.fields(value)}
    return any(isinstance(item, float) and item == EPSILON for item in fields.values())


def short(filename: str) -> str:
    return filename.split(os.sep + "dpgan" + os.sep, 1)[1]


def merged(files: list[str]) -> list[str]:
    out: list[str] = []
    for name in files:
        if not out or out[-1] != name:
            out.append(name)
    return out


def trace(fit_args: list[str], folder: Path) -> dict:
    """Run one fit under the tracer until the first noise draw."""
    from dpgan.cli import main

    path: list[str] = []
    found: dict = {}

    def tracer(frame: types.FrameType, event: str, arg: object):
        filename = frame.f_code.co_filename
        if event != "call" or (os.sep + "dpgan" + os.sep) not in filename or frame.f_code.co_name == "<module>":
            return None  # a module's body runs on import: not a step of the fit
        if filename.endswith(NOISE_FILE):
            stack, current = [], frame
            while current is not None:
                if (os.sep + "dpgan" + os.sep) in current.f_code.co_filename and current.f_code.co_name != "<module>":
                    stack.append(short(current.f_code.co_filename))
                current = current.f_back
            found["stack"] = merged(stack[::-1])
            found["holders"] = Counter(type(o).__qualname__ for o in gc.get_objects() if holds(o))
            raise FirstNoise
        code = frame.f_code
        names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        if any(carries(frame.f_locals.get(name)) for name in names if name not in ("self", "cls")):
            path.append(short(filename))
        return None

    args = [a if a != "3" else str(EPSILON) for a in fit_args]
    cwd = os.getcwd()
    os.chdir(folder)
    sys.settrace(tracer)
    try:
        main(["fit", *args, "--out", "model", "--quiet", "--overwrite"])
    except FirstNoise:
        pass
    finally:
        sys.settrace(None)
        os.chdir(cwd)
    files = merged(path)
    entered = Counter(files)
    start = next(i for i, name in enumerate(files) if name.startswith("synthesizers/"))
    below = merged([name for name in files[start:] if not name.startswith("cli/")])
    below_entered = Counter(below)
    return {
        "facade_files": below,
        "facade_hops": len(below) - 1,
        "facade_distinct": len(below_entered),
        "facade_re_entries": {name: n for name, n in below_entered.items() if n > 1},
        "files": files,
        "hops": len(files) - 1,
        "distinct": len(entered),
        "re_entries": sum(n - 1 for n in entered.values()),
        "entered_twice_or_more": {name: n for name, n in entered.items() if n > 1},
        "stack": found.get("stack", []),
        "stack_re_entries": {n: c for n, c in Counter(found.get("stack", [])).items() if c > 1},
        "holders": dict(found.get("holders", {})),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", choices=sorted(FITS), action="append")
    parser.add_argument("--files", action="store_true", help="list the budget path's files")
    args = parser.parse_args()
    import numpy as np

    from dpgan import datasets

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        datasets.load_adult()[0].to_csv(folder / "adult.csv", index=False)
        datasets.load_water_districts().to_csv(folder / "water.csv", index=False)
        images, labels = datasets.load_digits_images()
        np.savez(folder / "digits.npz", images=images, labels=labels)
        for kind in args.kind or FITS:
            found = trace(FITS[kind], folder)
            print(f"## {kind}")
            print(
                f"budget path: {found['distinct']} files, {found['hops']} hops, {found['re_entries']} re-entries "
                f"{found['entered_twice_or_more']}"
            )
            if args.files:
                print("  " + " → ".join(found["files"]))
            print(
                f"from the facade: {found['facade_distinct']} files, {found['facade_hops']} hops, re-entries "
                f"{found['facade_re_entries'] or 'none'}"
            )
            if args.files:
                print("  " + " → ".join(found["facade_files"]))
            print(f"stack at the first noise draw: {' → '.join(found['stack'])}")
            print(f"stack re-entries: {found['stack_re_entries'] or 'none'}")
            print(f"holders of ε: {found['holders']}")


if __name__ == "__main__":
    main()

"""`dpgan sample`, `inspect` and `privacy`: the commands that use a model or the accountant."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from dpgan import kinds
from dpgan.cli.arguments import MAX_SAMPLE_ROWS, check_budget, check_model_dir, positive
from dpgan.cli.output import print_report_warning
from dpgan.errors import InputError
from dpgan.serialization import METADATA


def cmd_sample(args: argparse.Namespace) -> int:
    """`dpgan sample`: model.json's kind (dpgan.kinds, read without PyTorch) samples it; its --out is
    checked by the kind before the model loads."""
    check_model_dir(args.model)
    if not (Path(args.model) / METADATA).is_file():  # before --out is judged by a kind it may not be
        raise InputError(f"{args.model} is not a dpgan model (it has no {METADATA}): give a directory written by fit")
    positive(args.n, "-n", integer=True)
    if args.n > MAX_SAMPLE_ROWS:
        raise InputError(f"-n {args.n} is too large; sample at most {MAX_SAMPLE_ROWS} rows per call")
    return int(kinds.kind_of_model(args.model).load("sample")(args))


def cmd_inspect(args: argparse.Namespace) -> int:
    check_model_dir(args.model)
    from dpgan.inspection import inspect_learned, inspect_model, learned_lines
    from dpgan.serialization import read_model_metadata

    metadata = read_model_metadata(args.model)  # read and hash-checked once for both answers
    report = inspect_model(args.model, metadata)
    learned = inspect_learned(args.model, metadata)  # what each column was learned as (public: the released schema)
    if args.json:
        print(json.dumps(report if learned is None else report | {"learned": learned}, indent=1, default=str))
        return 0
    if report.get("certified") is False:
        print(f"NOT certified: no ε is claimed for this model ({report['reason']})")
        print(f"recipe: {report['recipe']}; ledger entries (the label release only): {len(report['ledger'])}")
        print(*([] if learned is None else learned_lines(learned)), sep="\n")
        return 0
    print(f"ε = {report['epsilon']:.4f} at δ = {report['delta']:g} ({report['accountant']} accountant)")
    print(f"  RDP: {report['epsilon_by_accountant']['rdp']:.4f}   PLD: {report['epsilon_by_accountant']['pld']:.4f}")
    print("ledger (every read of the private data):")
    for e in report["events"]:
        print(f"  {e['name']}: {e['mechanism_text']}, ×{e['count']}, ε alone={e['epsilon_alone']:.4f}")
    print_report_warning(report)
    if "schema_source" in report:
        print(f"schema: {report['schema_source']}")
    line = kinds.kind_of_metadata(report, args.model).inspect_line  # the kind's own line, if it has one
    if line is not None:
        print(line.format(**report))
    if "units_summary" in report:
        print(f"units read (noisy counts): {report['units_summary']}")
    if "repairs_summary" in report:
        print(f"cells mapped into the schema (noisy counts): {report['repairs_summary']}")
    if "input_rule" in report:
        print(f"input rule: {report['input_rule']}")
    for text in [] if learned is None else learned_lines(learned):
        print(text)
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    """`dpgan models [--kind K]`: each kind's models (its registration's, dpgan.kinds), one line each:
    the kind, the name that chooses it (`--model`), its family and what it is; the default marked."""
    from dpgan.model_catalog import FAMILIES

    chosen = [kinds.kind(args.kind)] if args.kind else kinds.kinds()
    rows = [
        (kind.name, m.name + m.default_words(), m.family, m.description)
        for kind in chosen
        for m in kind.model_entries()
    ]
    if not rows:
        print(f"the {args.kind} kind names no models")
        return 0
    widths = [max(len(row[i]) for row in [("kind", "model", "family", ""), *rows]) for i in range(3)]
    for row in [("kind", "model", "family", "what it is"), *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row[:3], widths)) + "  " + row[3])
    print("\nchoose one with `dpgan fit --kind KIND --model NAME` (Python: model=NAME); the families:")
    for family, words in FAMILIES.items():
        print(f"  {family}: {words}")
    return 0


def cmd_privacy(args: argparse.Namespace) -> int:
    if not 0.0 < args.sample_rate <= 1.0:
        raise InputError("--sample-rate must be in (0, 1]")
    if args.steps <= 0:
        raise InputError("--steps must be positive")
    if (args.noise_multiplier is None) == (args.epsilon is None):
        raise InputError("give exactly one of --noise-multiplier (to get ε) or --epsilon (to get σ)")
    check_budget(args)
    from dpgan.privacy.accounting import epsilon_of
    from dpgan.privacy.calibration import calibrate_noise_multiplier
    from dpgan.privacy.releases import sampled_steps_event

    if args.noise_multiplier is not None:
        entry = sampled_steps_event("dp-sgd", args.noise_multiplier, sampling_rate=args.sample_rate, count=args.steps)
        result: dict[str, Any] = {
            "rdp": epsilon_of([entry], args.delta, "rdp"),
            "pld": epsilon_of([entry], args.delta, "pld"),
        }
        if args.accountant == "rdp-classic":
            result["rdp_classic"] = epsilon_of([entry], args.delta, "rdp-classic")
    else:
        sigma = calibrate_noise_multiplier(
            sample_rate=args.sample_rate,
            steps=args.steps,
            epsilon=args.epsilon,
            delta=args.delta,
            accountant=args.accountant,
        )
        result = {"noise_multiplier": sigma, "accountant": args.accountant}
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")
    return 0

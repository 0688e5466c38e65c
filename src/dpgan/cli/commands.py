"""`dpgan sample`, `inspect` and `privacy`: the commands that use a model or the accountant."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from dpgan.cli.arguments import MAX_SAMPLE_ROWS, check_budget, check_model_dir, parse_conditions, positive
from dpgan.cli.output import print_report_warning
from dpgan.errors import InputError
from dpgan.serialization import METADATA, model_kind
from dpgan.tables.reading.table_io import check_writable


def cmd_sample(args: argparse.Namespace) -> int:
    check_model_dir(args.model)
    if not (Path(args.model) / METADATA).is_file():  # before --out is judged by a kind it may not be
        raise InputError(f"{args.model} is not a dpgan model (it has no {METADATA}): give a directory written by fit")
    positive(args.n, "-n", integer=True)
    if args.n > MAX_SAMPLE_ROWS:
        raise InputError(f"-n {args.n} is too large; sample at most {MAX_SAMPLE_ROWS} rows per call")
    if model_kind(args.model) == "image":
        from dpgan.cli.images import check_image_destination, sample_image

        out = check_image_destination(args.out, args.overwrite)  # before the model and PyTorch load
        from dpgan.synthesizers import load_model

        return sample_image(load_model(args.model), out, args)
    out = check_writable(args.out)
    if out.is_dir():
        raise InputError(f"output {out} is a directory: give a file name ending in .csv or .parquet")
    if out.exists() and not args.overwrite:
        raise InputError(f"{out} exists; pass --overwrite to replace it")
    conditions = parse_conditions(args.condition)

    from dpgan.synthesizers import SequenceSynthesizer, load_model
    from dpgan.tables.reading.table_io import write_table

    synth = load_model(args.model)
    if isinstance(synth, SequenceSynthesizer):  # -n series, written as a long table
        if args.region_points:
            raise InputError("--region-points applies to table models")
        label = None
        if conditions:
            column, label = next(iter(conditions.items()))
            if len(conditions) > 1 or column != synth.schema.label:  # type: ignore[union-attr]
                raise InputError("a sequence model takes one --condition, on its label column")
        frame = synth.sample(args.n, seed=args.seed, label=label)
        write_table(frame, out)
        print(f"wrote {args.n} series ({len(frame)} rows) to {out}")
        return 0
    # streamed chunk by chunk into a file renamed into place when complete: memory flat in -n
    synth.sample_to(out, args.n, seed=args.seed, conditions=conditions, region_points=args.region_points or ())
    print(f"wrote {args.n} rows to {out}")
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    check_model_dir(args.model)
    from dpgan.inspection import inspect_model

    report = inspect_model(args.model)
    if args.json:
        print(json.dumps(report, indent=1, default=str))
        return 0
    if report.get("certified") is False:
        print(f"NOT certified: no ε is claimed for this model ({report['reason']})")
        print(f"recipe: {report['recipe']}; ledger entries (the label release only): {len(report['ledger'])}")
        return 0
    print(f"ε = {report['epsilon']:.4f} at δ = {report['delta']:g} ({report['accountant']} accountant)")
    print(f"  RDP: {report['epsilon_by_accountant']['rdp']:.4f}   PLD: {report['epsilon_by_accountant']['pld']:.4f}")
    print("ledger (every read of the private data):")
    for e in report["events"]:
        print(f"  {e['name']}: {e['mechanism_text']}, ×{e['count']}, ε alone={e['epsilon_alone']:.4f}")
    print_report_warning(report)
    if "schema_source" in report:
        print(f"schema: {report['schema_source']}")
    if report.get("kind") == "image":
        print(f"recipe: {report['recipe']}; unit of privacy: {report['unit_of_privacy']}")
    if report.get("kind") == "sequence":
        print(f"model: {report['model']}; unit of privacy: {report['unit_of_privacy']}")
    if "units_summary" in report:
        print(f"units read (noisy counts): {report['units_summary']}")
    if "repairs_summary" in report:
        print(f"cells mapped into the schema (noisy counts): {report['repairs_summary']}")
    if "input_rule" in report:
        print(f"input rule: {report['input_rule']}")
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

"""`dpgan evaluate` (each kind's own: its registration, dpgan.kinds) and `dpgan audit`."""

from __future__ import annotations

import argparse
import json

from dpgan import kinds
from dpgan.cli.arguments import check_budget, check_file, check_model_dir, chosen_model, positive
from dpgan.cli.output import StageProgress
from dpgan.cli.settings_flags import flag_name
from dpgan.errors import InputError


def cmd_evaluate(args: argparse.Namespace) -> int:
    """`dpgan evaluate --kind NAME`: the kind's registration (dpgan.kinds) runs it."""
    return int(kinds.kind(args.kind).load("evaluate")(args))


def cmd_audit(args: argparse.Namespace) -> int:
    """`dpgan audit`: an empirical lower bound on ε next to the claimed ε (dpgan.evaluation.audit)."""
    if (args.model_dir is None) == (args.epsilon is None):
        raise InputError("give a MODEL_DIR or --epsilon E (a configuration to audit), not both")
    configuration = {
        "delta": args.delta, "recipe": chosen_model(args), "rows": args.rows, "batch_size": args.batch_size,
        "epochs": args.epochs, "schema": args.schema, "accountant": args.accountant,
    }  # fmt: skip
    given = {key: value for key, value in configuration.items() if value is not None}
    if args.model_dir is not None:
        check_model_dir(args.model_dir)
        if given:
            words = {"recipe": "--model" if args.model is not None else "--recipe"}  # the model, by the word given
            flags = ", ".join(words.get(key, flag_name(key)) for key in given)
            raise InputError(f"{flags} describe a configuration to audit; a MODEL_DIR has its own")
    check_budget(args)
    positive(args.rows, "--rows", integer=True)
    positive(args.trials, "--trials", integer=True)
    positive(args.steps, "--steps", integer=True)
    if args.schema is not None:
        check_file(args.schema, "schema file")
    from dpgan.evaluation.audit import audit_config, audit_model

    bar = StageProgress(not args.quiet)
    options = {
        "mode": args.mode, "trials": args.trials, "steps": args.steps, "sample_rate": args.sample_rate,
        "ablate": args.ablate, "confidence": args.confidence, "seed": args.seed,
        "progress": lambda done, total: bar(f"audit: {args.mode}", done, total),
    }  # fmt: skip
    try:
        if args.model_dir is not None:
            result = audit_model(args.model_dir, **options)
        else:
            result = audit_config(epsilon=args.epsilon, **given, **options)
    finally:
        bar.close()
    print(json.dumps(result.to_dict(), indent=1) if args.json else result.to_text())
    return 0

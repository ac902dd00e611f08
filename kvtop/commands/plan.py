"""`kvtop plan`: the predicted ledger of a model on a layout, solved with the engine's rules."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from kvtop.commands import SUMMARIES
from kvtop.commands.common import (
    add_hub_timeout,
    add_model_arguments,
    engine_flags_help,
    gpu_from_args,
    hub_deadline,
    measured_from_args,
    settings_from_args,
)
from kvtop.domain.errors import InputError
from kvtop.domain.ledger import Ledger, predict


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "plan", help=SUMMARIES["plan"],
        epilog=engine_flags_help(), formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False,
    )  # fmt: skip
    add_model_arguments(parser)
    add_hub_timeout(parser)
    parser.add_argument("--json", action="store_true", help="print the stable JSON contract")
    parser.add_argument("--require-fit", action="store_true", help="exit 1 when the layout does not fit")
    parser.set_defaults(handler=run, accepts_engine_flags=True)


def build_ledger(args: argparse.Namespace, extra: Sequence[str]) -> Ledger:
    """The ledger described by the command line (shared by plan, probe and explain)."""
    from kvtop.sources.hub import load_model

    settings = settings_from_args(args, extra)
    if not settings.model:
        raise InputError(
            "no model given (use --model PATH|PRESET|HUB_ID or --cmd '<launch command>')", field="--model"
        )
    model = load_model(
        settings.model, family=getattr(args, "model_family", None), deadline_s=hub_deadline(args)
    )
    measured = measured_from_args(args)
    total, name = gpu_from_args(args, measured)
    return predict(
        model, settings, gpu_total_bytes=total, gpu_name=name, measured=measured, load_mtp=args.load_mtp
    )


def run(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from kvtop.commands.render_ledger import ledger_json, ledger_text

    ledger = build_ledger(args, extra)
    if args.json:
        json.dump(ledger_json(ledger), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(ledger_text(ledger))
    return 1 if args.require_fit and not ledger.engine.fits else 0

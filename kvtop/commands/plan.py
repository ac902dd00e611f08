"""`kvtop plan`: the predicted ledger of a model on a layout, solved with the engine's rules."""

from __future__ import annotations

import argparse
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
from kvtop.commands.output import print_json, print_text
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.registry import ENGINE_IDS
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "plan", help=SUMMARIES["plan"],
        epilog_fn=engine_flags_help, formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False,
    )  # fmt: skip
    add_model_arguments(parser)
    add_hub_timeout(parser)
    parser.add_argument("--json", action="store_true", help="print the stable JSON contract")
    parser.add_argument("--require-fit", action="store_true", help="exit 1 when the layout does not fit")
    parser.add_argument(
        "--compare",
        default=None,
        metavar="ENGINES",
        help="solve the launch under each engine's default rules side by side, and the flags that give each "
        f"the first one's KV budget: a comma list of {', '.join(ENGINE_IDS)}, or all",
    )
    parser.set_defaults(handler=run, accepts_engine_flags=True)


def build_ledger(args: argparse.Namespace, extra: Sequence[str]) -> Ledger:
    """The ledger described by the command line (shared by plan, probe and explain)."""
    settings = settings_from_args(args, extra)
    model, measured, total, name = _model_and_device(args, settings)
    return predict(
        model, settings, gpu_total_bytes=total, gpu_name=name, measured=measured, load_mtp=args.load_mtp
    )


def _model_and_device(
    args: argparse.Namespace, settings: LaunchSettings
) -> tuple[ModelSpec, MeasuredInputs, int, str | None]:
    """The model the settings name, the measured inputs, and the GPU's (total bytes, name)."""
    from kvtop.sources.hub import load_model

    if not settings.model:
        raise InputError(
            "no model given (use --model PATH|PRESET|HUB_ID or --cmd '<launch command>')", field="--model"
        )
    model = load_model(
        settings.model, family=getattr(args, "model_family", None), deadline_s=hub_deadline(args)
    )
    measured = measured_from_args(args)
    total, name = gpu_from_args(args, measured)
    return model, measured, total, name


def run(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from kvtop.commands.render_ledger import ledger_json, ledger_text

    if args.compare is not None:
        return run_compare(args, extra)
    ledger = build_ledger(args, extra)
    if args.json:
        print_json(ledger_json(ledger))
    else:
        print_text(ledger_text(ledger))
    return 1 if args.require_fit and not ledger.engine.fits else 0


def run_compare(args: argparse.Namespace, extra: Sequence[str]) -> int:
    """`--compare`: the launch under each engine's defaults. Flags are spelled as the first engine listed
    spells them (or as the --cmd's engine does); nothing is loaded before they are found comparable."""
    from kvtop.commands.render_compare import comparison_json, comparison_text
    from kvtop.domain.compare import COMPARE_FLAG, check_comparable, compare_engines, engines_named

    engines = engines_named(args.compare)
    if args.engine is not None:
        raise InputError(f"{COMPARE_FLAG} names the engines (the first is the reference); drop it", field="--engine")
    if args.require_fit:
        raise InputError(f"{COMPARE_FLAG} has no single plan to require: read each engine's fits", field="--require-fit")
    spelling = argparse.Namespace(**{**vars(args), "engine": None if args.cmd else engines[0]})
    settings = settings_from_args(spelling, extra)
    check_comparable(settings)
    model, measured, total, name = _model_and_device(args, settings)
    comparison = compare_engines(
        model, settings, engines, gpu_total_bytes=total, gpu_name=name, measured=measured, load_mtp=args.load_mtp
    )
    if args.json:
        print_json(comparison_json(comparison))
    else:
        print_text(comparison_text(comparison))
    return 0

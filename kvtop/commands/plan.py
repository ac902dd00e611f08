"""`kvtop plan`: the predicted ledger of a model on a layout, solved with the engine's rules."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kvtop.cli_args import node_count
from kvtop.commands import SUMMARIES
from kvtop.commands.common import (
    MEMORY_AT_MOST,
    add_calibration_store,
    add_hub_timeout,
    add_model_arguments,
    defaults_taken,
    emit,
    engine_flags_help,
    gpu_from_args,
    hub_deadline,
    measured_from_args,
    settings_from_args,
    total_origin_from_args,
)
from kvtop.commands.deployment_args import DeploymentArgs, add_deployment_arguments, deployment_from_args
from kvtop.commands.output import print_error
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.registry import ENGINE_IDS
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings, spelling_of
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.placement import Placement

if TYPE_CHECKING:
    from kvtop.domain.calibration.estimate import CapacityPlan
    from kvtop.sources.calibration_store import StoreRead


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "plan", help=SUMMARIES["plan"],
        epilog_fn=engine_flags_help, formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False,
    )  # fmt: skip
    add_model_arguments(parser)
    add_deployment_arguments(parser)
    add_hub_timeout(parser)
    add_calibration_store(parser)
    parser.add_argument("--json", action="store_true", help="print the stable JSON contract")
    parser.add_argument("--require-fit", action="store_true", help="exit 1 when the layout does not fit")
    parser.add_argument(
        "--compare",
        default=None,
        metavar="ENGINES",
        help="solve the launch under each engine's default rules side by side, and the flags that give each "
        f"the first one's KV budget: a comma list of {', '.join(ENGINE_IDS)}, or all",
    )
    nodes = parser.add_argument_group("across nodes")
    nodes.add_argument("--nodes", type=node_count, default=None, metavar="N",
                       help="lay the ranks over N nodes by the engine's rule (default: the launch's --nnodes, else 1)")
    nodes.add_argument("--gpus-per-node", type=node_count, default=None, metavar="N",
                       help="GPUs each node has (default: the ranks each node runs)")
    nodes.add_argument("--layouts", nargs="+", default=None, metavar="LAYOUT",
                       help="solve several layouts side by side, each NODESxGPUS and sizes: '2x8 tp16' '4x8 tp8 dp4' "
                       "(dpa: DP attention; a size left out is the launch's, e.g. --tp)")
    parser.set_defaults(handler=run, accepts_engine_flags=True)


def build_ledger(args: argparse.Namespace, extra: Sequence[str], *, gpu_bounds: bool = True) -> Ledger:
    """The ledger described by the command line (shared by plan, probe and explain). `gpu_bounds` False: no GPU
    bounds the amounts typed (the size flags' 1 TiB, `check_within_gpu`), for the engine-diff harness's GPU-less
    stand-ins (1 PiB free); the sizing is the same code a person's plan runs."""
    model, deployment, measured, total, name = _planned_inputs(args, extra, gpu_bounds=gpu_bounds)
    return predict(
        model, deployment.settings, gpu_total_bytes=total, gpu_name=name, measured=measured,
        load_mtp=args.load_mtp, draft=deployment.draft,
    )  # fmt: skip


def _planned_inputs(
    args: argparse.Namespace, extra: Sequence[str], *, gpu_bounds: bool = True
) -> tuple[ModelSpec, DeploymentArgs, MeasuredInputs, int, str | None]:
    """The model, the launch with its deployment flags (`--host-cache` split over the model's world, so the model is
    read first), the measured inputs with the draft's weights, and the GPU's (total bytes, name)."""
    settings = settings_from_args(args, extra)
    model, measured, total, name = _model_and_device(args, settings, gpu_bounds=gpu_bounds)
    deployment = deployment_from_args(args, settings, model)
    if deployment.draft_weights_bytes is not None:
        measured = measured.model_copy(update={"draft_weights_bytes": deployment.draft_weights_bytes})
    return model, deployment, measured, total, name


def _model_and_device(
    args: argparse.Namespace, settings: LaunchSettings, *, gpu_bounds: bool = True
) -> tuple[ModelSpec, MeasuredInputs, int, str | None]:
    """The model the settings name, the measured inputs, and the GPU's (total bytes, name)."""
    from kvtop.domain.launch_model import stated_override
    from kvtop.sources.hub import load_model

    if not settings.model and getattr(args, "cmd", None):  # the pasted launch is what lacks it: say so there
        raise InputError(
            f"the launch command names no model (add {spelling_of(settings.engine, 'model')} M to it, or give "
            "--model PATH|PRESET|HUB_ID)",
            field="--cmd",
        )
    if not settings.model:
        raise InputError(
            "no model given (use --model PATH|PRESET|HUB_ID or --cmd '<launch command>')", field="--model"
        )
    # a launch flag that rewrites the config (SGLang's --json-model-override-args) is merged in before it is read
    override = stated_override(settings)
    model = load_model(
        settings.model, family=getattr(args, "model_family", None), deadline_s=hub_deadline(args), override=override
    )
    measured = measured_from_args(args, at_most=MEMORY_AT_MOST if gpu_bounds else None)
    total, name = gpu_from_args(args, measured, within=gpu_bounds)  # the total's origin goes with it: the header says it, not its bytes
    # a larger memory variant's --gpu-memory (`--gpu RTX2060 --gpu-memory 12GiB`) is nvidia-smi's total, whose CUDA
    # total the plan estimates (`MeasuredInputs.with_total_origin`, the card's SMs and capability kept)
    return model, measured.with_total_origin(total_origin_from_args(args, name, total)), total, name


def build_plan(args: argparse.Namespace, extra: Sequence[str], store: StoreRead | None) -> CapacityPlan:
    """The plan the command line describes: its ledger with every unmeasured term calibrated, and the
    capacity interval (this node's earlier starts of the same launch, `store`, used unless it is off: None)."""
    from kvtop.domain.calibration.estimate import planned_capacity
    from kvtop.domain.calibration.node import unused_start

    model, deployment, measured, total, name = _planned_inputs(args, extra)
    if getattr(args, "nodes", None) is not None or getattr(args, "gpus_per_node", None) is not None:
        _check_nodes(args, deployment.settings, model)  # a layout too large for the nodes named so, before it is solved
    plan = planned_capacity(model, deployment.settings, gpu_total_bytes=total, gpu_name=name, measured=measured,
                            load_mtp=args.load_mtp, draft=deployment.draft,
                            node_measures=store.measures if store else ())  # fmt: skip
    if store is not None and plan.estimate.node_note is None:
        unused = unused_start(store.measures, deployment.settings.engine, deployment.settings.engine_version,
                              name, model, deployment.settings)  # fmt: skip
        if unused:
            print_error(unused, prefix="note: ")
    return plan


def _store(args: argparse.Namespace) -> StoreRead | None:
    """This node's earlier starts, as `plan`, `--compare` and `--layouts` read them (None: the store is off); its notice said."""
    from kvtop.sources.calibration_store import read_store, store_disabled

    store = read_store() if not store_disabled(args.no_calibration_store) else None
    if store is not None and store.notice:
        print_error(store.notice, prefix="note: ")
    return store


def run(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from kvtop.commands.render_layouts import node_launch, placement_json, placement_text
    from kvtop.commands.render_ledger import fitting_json, fitting_lines, plan_json, plan_text
    from kvtop.domain.fit import smallest_fitting_layout
    from kvtop.domain.launch_check import launch_refusals

    if args.compare is not None or args.layouts is not None:
        if args.compare is not None and args.layouts is not None:
            raise InputError("compare engines or layouts, not both", field="--layouts")
        return run_compare(args, extra) if args.layouts is None else run_layouts(args, extra)
    store = _store(args)  # read once: the plan and each layout it suggests read it alike
    plan = build_plan(args, extra, store)
    refused = launch_refusals(plan.ledger)
    if refused:  # the engine would not start it: a plan of it would read as valid
        raise InputError("; ".join(refusal.describe() for refusal in refused), field=refused[0].field)
    smallest = smallest_fitting_layout(plan.ledger, store.measures if store else ())
    defaults = defaults_taken(args, extra)
    placement = _placement(args, plan.ledger)

    def text() -> str:  # the placement under the header line, what fits under a plan that does not
        shown = "\n".join([plan_text(plan), *fitting_lines(plan.ledger, smallest, defaults)])
        if placement is None:
            return shown
        return shown.replace("\n\n", f"\n{placement_text(plan.ledger, placement)}\n\n", 1)

    def data() -> dict[str, Any]:
        return plan_json(plan) | fitting_json(smallest, defaults) | {
            "placement": placement_json(placement), "per_node": node_launch(plan.ledger, placement)}

    emit(args.json, data, text)
    return 1 if args.require_fit and not plan.ledger.engine.fits else 0


def _check_nodes(args: argparse.Namespace, settings: LaunchSettings, model: ModelSpec) -> None:
    """The launch's ranks over the nodes asked for (--nodes, else the launch's own node count) fit them: the
    ranks the ledger plans (the model's backend, where the engine's world is the model's: LMDeploy)."""
    from kvtop.domain.ledger import layout_from_settings
    from kvtop.domain.placement import check_placement

    layout = layout_from_settings(settings, model)
    check_placement(settings.engine, layout, _nodes(args, settings), args.gpus_per_node)


def _nodes(args: argparse.Namespace, settings: LaunchSettings) -> int:
    """The nodes the ranks run over: --nodes, else the launch's own node count."""
    from kvtop.domain.engines.registry import engine_rules

    return args.nodes if args.nodes is not None else engine_rules(settings.engine).span_rule.span(settings).nnodes


def _placement(args: argparse.Namespace, ledger: Ledger) -> Placement | None:
    """Where the ranks run: over --nodes (else the launch's own node count), None on one node."""
    from kvtop.domain.placement import place

    nodes = _nodes(args, ledger.settings)
    if nodes == 1 and args.gpus_per_node is None:
        return None
    return place(ledger, nodes, args.gpus_per_node)


def run_layouts(args: argparse.Namespace, extra: Sequence[str]) -> int:
    """`--layouts`: the launch solved on each multi-node layout, side by side."""
    from kvtop.commands.render_layouts import layouts_json, layouts_text
    from kvtop.domain.layouts import LAYOUTS_FLAG, parse_layout, plan_layouts

    for flag, value in (("--nodes", args.nodes), ("--gpus-per-node", args.gpus_per_node)):
        if value is not None:
            raise InputError(f"each of {LAYOUTS_FLAG} names its own nodes and GPUs; drop it", field=flag)
    if args.require_fit:
        raise InputError(f"{LAYOUTS_FLAG} has no single plan to require: read each layout's fits", field="--require-fit")
    if args.host_cache is not None:  # split over the launch's ranks, which each layout changes
        raise InputError(f"{LAYOUTS_FLAG} lays out the ranks that --host-cache is split over: plan each layout "
                         "with --nodes/--gpus-per-node and its sizes", field="--host-cache")  # fmt: skip
    specs = [parse_layout(text) for text in args.layouts]
    model, deployment, measured, total, name = _planned_inputs(args, extra)  # the draft and its weights, as plan's
    settings = deployment.settings
    store = _store(args)  # each layout is `plan`'s solve: this node's earlier starts read as it reads them
    plans = plan_layouts(model, settings, specs, gpu_total_bytes=total, gpu_name=name, measured=measured,
                         load_mtp=args.load_mtp, node_measures=store.measures if store else (),
                         draft=deployment.draft)  # fmt: skip
    emit(args.json, lambda: layouts_json(plans, settings), lambda: layouts_text(plans))
    return 0


def run_compare(args: argparse.Namespace, extra: Sequence[str]) -> int:
    """`--compare`: the launch under each engine's defaults. Flags are spelled as the first engine listed
    spells them (or as the --cmd's engine does); nothing is loaded before they are found comparable."""
    from kvtop.commands.render_compare import comparison_json, comparison_text
    from kvtop.domain.compare import COMPARE_FLAG, check_comparable, compare_engines, engines_named

    if args.engine is not None:
        raise InputError(f"{COMPARE_FLAG} names the engines (the first is the reference); drop it", field="--engine")
    if args.require_fit:
        raise InputError(f"{COMPARE_FLAG} has no single plan to require: read each engine's fits", field="--require-fit")
    for flag, value in (("--draft-model", args.draft_model), ("--draft-weights", args.draft_weights),
                        ("--host-cache", args.host_cache)):  # fmt: skip
        if value is not None:  # the launch's own deployment: not one of every engine's defaults
            raise InputError(f"{COMPARE_FLAG} solves every engine at its defaults; drop it", field=flag)
    for flag, value in (("--nodes", args.nodes), ("--gpus-per-node", args.gpus_per_node)):
        if value is not None:  # placed by `plan` alone: --compare's rows are per rank, with no placement
            raise InputError(f"{COMPARE_FLAG} compares the engines per rank and places no nodes: plan one engine "
                             f"(--engine X) with {flag}; drop it here", field=flag)  # fmt: skip
    named = engines_named(args.compare)  # checked before the launch is read
    spelling = argparse.Namespace(**{**vars(args), "engine": None if args.cmd else named[0]})
    settings = settings_from_args(spelling, extra)
    engines = engines_named(args.compare, first=settings.engine if args.cmd else None)  # `all`: the pasted one first
    check_comparable(settings)
    model, measured, total, name = _model_and_device(args, settings)
    store = _store(args)  # each row is `plan --engine X`'s: this node's earlier starts read as it reads them
    comparison = compare_engines(
        model, settings, engines, gpu_total_bytes=total, gpu_name=name, measured=measured, load_mtp=args.load_mtp,
        node_measures=store.measures if store else (),
    )
    emit(args.json, lambda: comparison_json(comparison, settings), lambda: comparison_text(comparison, model))
    return 0

"""kvtop's own flags for the deployment beside the model: a draft's config or measured weights, the
host memory given to offloaded KV and whether the install holds FlashInfer (turned into the engine's own flags by its deployment rules)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from kvtop.commands.common import hub_deadline, memory_size
from kvtop.domain.deployment import HostKvRequest
from kvtop.domain.engines.registry import ENGINE_IDS, display_name, engine_rules
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger import layout_from_settings
from kvtop.domain.model import ModelSpec


def add_deployment_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("beside the model (speculative draft, host KV)")
    group.add_argument("--draft-model", default=None, metavar="MODEL",
                       help="the speculative draft's config.json, checkpoint folder, preset or hub id (its weights "
                       "and KV layers)")  # fmt: skip
    group.add_argument("--draft-weights", default=None, metavar="SIZE",
                       help="measured resident weights of the draft per rank, e.g. 2.8GiB")  # fmt: skip
    group.add_argument("--host-cache", default=None, metavar="SIZE",
                       help="host memory for offloaded KV over the engine's ranks on this node, e.g. 200GiB: set in "
                       "the engine's own host-KV flags (SGLang's HiCache, say; `kvtop plan --help` lists each "
                       "engine's)")  # fmt: skip
    group.add_argument("--flashinfer", default=None, choices=("installed", "absent"),
                       help=("whether the install holds FlashInfer beside the engine (pip flashinfer-python): "
                       + _flashinfer_readers()))  # fmt: skip


def _flashinfer_readers() -> str:
    """Which engines read `--flashinfer`, and where, as each engine's deployment rules say (`flashinfer_read`)."""
    said = [f"{display_name(engine)} {read}" for engine in ENGINE_IDS
            if (read := engine_rules(engine).deployment.flashinfer_read) is not None]  # fmt: skip
    return "; ".join(said) if said else "no engine's rules read it"


@dataclass(frozen=True)
class DeploymentArgs:
    settings: LaunchSettings  # with the host cache in the engine's flags
    draft: ModelSpec | None
    draft_weights_bytes: int | None


def deployment_from_args(
    args: argparse.Namespace, settings: LaunchSettings, model: ModelSpec
) -> DeploymentArgs:
    """The launch with `--flashinfer` stated, `--host-cache` in the engine's own flags (split over the ranks `model` lays out), the draft's
    architecture and its weights."""
    flashinfer = getattr(args, "flashinfer", None)
    if flashinfer is not None:
        settings = settings.model_copy(update={"flashinfer": flashinfer})
    host = getattr(args, "host_cache", None)
    if host is not None:
        settings = with_host_cache(settings, memory_size(host, "--host-cache", whole_gpu=False, host=True), model)
    draft = None
    if getattr(args, "draft_model", None):
        from kvtop.sources.hub import load_model

        try:
            draft = load_model(args.draft_model, deadline_s=hub_deadline(args))
        except InputError as error:  # the loader names --model: this is the draft's
            raise InputError(str(error).removeprefix(f"{error.field}: ") if error.field else str(error),
                             field="--draft-model") from None  # fmt: skip
        settings = _naming_the_draft(settings, args.draft_model)
    weights = getattr(args, "draft_weights", None)
    measured = memory_size(weights, "--draft-weights", whole_gpu=False, weights=True) if weights is not None else None
    return DeploymentArgs(settings=settings, draft=draft, draft_weights_bytes=measured)


def _naming_the_draft(settings: LaunchSettings, ref: str) -> LaunchSettings:
    """The launch with `--draft-model` as its draft where it names none (SGLang's
    `--speculative-draft-model-path`, vLLM's speculative config `model`); a launch with no speculative
    method is refused, naming the flag."""
    from kvtop.domain.deployment import SpecKind

    rules = engine_rules(settings.engine).deployment
    setup = rules.setup(settings)
    if setup.spec_kind is None:
        raise InputError("the launch has no speculative method for a draft (e.g. --speculative-algorithm EAGLE3)",
                         field="--draft-model")  # fmt: skip
    if setup.spec_kind is SpecKind.NGRAM or setup.draft_model:
        return settings
    return rules.with_setup(settings, setup.model_copy(update={"draft_model": ref, "spec_kind": SpecKind.DRAFT_MODEL}))


def host_cache_ranks(settings: LaunchSettings, model: ModelSpec | None) -> int:
    """The GPUs that share `--host-cache`: the launch's ranks as its engine lays them out for `model`
    (`EngineRules.world_ranks` through `layout_from_settings`: LMDeploy's PyTorch engine runs `--tp T --dp D` as one
    world of T GPUs from v0.11.0, not T × D; whether a launch without --backend is PyTorch is the model's to say)."""
    return layout_from_settings(settings, model).gpus


def with_host_cache(settings: LaunchSettings, node_bytes: int, model: ModelSpec | None) -> LaunchSettings:
    """The launch giving `node_bytes` of host memory to offloaded KV over its ranks here (`host_cache_ranks`), in
    its own flags."""
    if node_bytes <= 0:
        raise InputError("must be above 0", field="--host-cache")
    rules = engine_rules(settings.engine).deployment
    ranks = host_cache_ranks(settings, model)
    setup = rules.setup(settings)
    request = HostKvRequest(connector="host cache", size_bytes=node_bytes, split_over=ranks)
    edited = rules.with_setup(settings, setup.model_copy(update={"host_kv": request}))
    if rules.setup(edited).host_kv is None:
        raise InputError(f"{display_name(settings.engine)} has no host KV tier kvtop models", field="--host-cache")
    return edited

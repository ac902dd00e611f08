"""TensorRT-LLM's deployment beside the model (docs/engines/trtllm.md §15).

Modelled: the secondary (host) KV pool of `kv_cache_config.host_cache_size` bytes per rank,
`blocks2 = int(host_cache_size / bytes_per_token / tokens_per_block)` (§4.1). Named as not modelled:
speculative decoding (`speculative_config`: the draft's KV is added to the estimator's cost per
token, §1.1), LoRA (`lora_config`, its PEFT cache) and the MoE load balancer's slots
(`moe_config.load_balancer`). Keys of the `--extra_llm_api_options` YAML are read as
`--<section>.<key>` flags (docs/engines/trtllm.md §6).
"""

from __future__ import annotations

from kvtop.domain.deployment import (
    BudgetTerm,
    Charge,
    DeploymentSetup,
    Feature,
    HostKvRequest,
    HostTier,
    SpecKind,
    TermInputs,
    TermState,
    no_cache_only_cell,
    no_draft_kv_layers,
)
from kvtop.domain.deployment_flags import feature_remover, flag_int, flag_text, with_flags
from kvtop.domain.engines.trtllm.spec_methods import METHOD_ERAS, Drafter, drafter, fold
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.spec_methods import check_method

SPEC_FLAGS = ("speculative_config.decoding_type", "speculative_config.max_draft_len",
              "speculative_config.speculative_model_dir", "speculative_config.num_nextn_predict_layers")  # fmt: skip
EXPERT_FLAGS = ("moe_config.load_balancer.num_slots",)
LORA_FLAGS = ("lora_config.max_loras", "lora_config.max_lora_rank")
HOST_FLAGS = ("kv_cache_config.host_cache_size",)
FLAGS: frozenset[str] = frozenset("--" + f for f in (*SPEC_FLAGS, *EXPERT_FLAGS, *LORA_FLAGS, *HOST_FLAGS))
flags = FLAGS  # the protocol's name (DeploymentRules.flags)
flashinfer_read: str | None = None  # no release reads whether the install holds FlashInfer
_FEATURE_FLAGS = {
    Feature.SPECULATIVE: SPEC_FLAGS, Feature.EXPERT_PARALLEL: EXPERT_FLAGS, Feature.LORA: LORA_FLAGS,
    Feature.HOST_KV: HOST_FLAGS, Feature.ENCODER: (),
}  # fmt: skip
SOURCE_HOST = (
    "_torch/pyexecutor/_util.py / KVCacheManager: secondary blocks = host_cache_size ÷ bytes per block"
)


# the shared kind: MTP the model's own layers; model-free drafting (n-grams, Lookahead's own windows, SA's suffix
# automaton, hidden-state saving) loads no draft weights; the rest load a draft (a user-provided or engine-chosen one
# may: kvtop does not know)
_SPEC_KIND = {
    Drafter.MTP: SpecKind.MTP, Drafter.NGRAM: SpecKind.NGRAM, Drafter.LOOKAHEAD: SpecKind.NGRAM,
    Drafter.SUFFIX_AUTOMATON: SpecKind.NGRAM, Drafter.SAVE_STATE: SpecKind.NGRAM,
}  # fmt: skip
# the not-modelled term by drafter, (label, what is not modelled); None: nothing beside the pool (n-grams)
_DRAFT_COST = (
    "TensorRT-LLM adds the draft's own KV cost per token to the estimator and loads its weights first; not modelled"
)
_TERM: dict[Drafter, tuple[str, str] | None] = {
    Drafter.DRAFT_MODEL: ("draft weights and KV", _DRAFT_COST),
    Drafter.MTP: ("draft weights and KV", _DRAFT_COST),
    Drafter.NGRAM: None,
    Drafter.LOOKAHEAD: ("Lookahead decoding buffers, no draft model",
                        "the target drafts itself (lookahead windows, an n-gram pool): its buffers are not modelled"),
    Drafter.SUFFIX_AUTOMATON: ("suffix-automaton drafting state, no draft model",
                               "each request's suffix automaton (SA) and its draft tokens are not modelled"),
    Drafter.USER_PROVIDED: ("the user-provided drafter's memory",
                            "the user's drafter code holds what it holds: kvtop cannot know it; not modelled"),
    Drafter.CHOSEN_BY_ENGINE: ("the drafter TensorRT-LLM chooses",
                               "AUTO picks the method at start: which, and its cost, are not modelled"),
    Drafter.SAVE_STATE: ("saved hidden states, no drafting",
                         "SaveState keeps hidden states to train a draft: their memory is not modelled"),
}  # fmt: skip


def setup(settings: LaunchSettings) -> DeploymentSetup:
    decoding = flag_text(settings, "speculative_config.decoding_type")
    # a value no decoding config takes fails TensorRT-LLM's validation (trtllm/spec_methods.py)
    check_method(decoding, METHOD_ERAS, settings.engine_version, flag="--speculative_config.decoding_type",
                 fold=fold)  # fmt: skip
    kind = None if decoding is None else _SPEC_KIND.get(drafter(decoding), SpecKind.DRAFT_MODEL)
    host = flag_int(settings, "kv_cache_config.host_cache_size")
    return DeploymentSetup(
        spec_method=decoding, spec_kind=kind, draft_model=flag_text(settings, "speculative_config.speculative_model_dir"),
        draft_tokens=flag_int(settings, "speculative_config.max_draft_len", least=1),
        lora=flag_text(settings, "lora_config.max_loras") is not None,
        max_loras=flag_int(settings, "lora_config.max_loras", least=1),
        max_lora_rank=flag_int(settings, "lora_config.max_lora_rank", least=1),
        host_kv=HostKvRequest(connector="secondary pool", size_bytes=host) if host else None,
    )  # fmt: skip


without = feature_remover(_FEATURE_FLAGS)


def with_setup(settings: LaunchSettings, setup: DeploymentSetup) -> LaunchSettings:
    host = setup.host_kv
    return with_flags(settings, {
        "kv_cache_config.host_cache_size": str(host.bytes_per_rank) if host and host.bytes_per_rank else None,
        # the planner's method field: written, so the engine's check above sees it (it was dropped)
        "speculative_config.decoding_type": setup.spec_method,
        # the planner's LoRA slots and rank: written (the copied launch's YAML had no lora_config, R6); LoRA on at the
        # default slots keeps the launch's own word, as `setup` reads LoRA on from the key's presence
        "lora_config.max_loras": (str(setup.max_loras) if setup.max_loras else settings.flags.get("lora_config.max_loras"))
        if setup.lora else None,
        "lora_config.max_lora_rank": str(setup.max_lora_rank) if setup.lora and setup.max_lora_rank else None,
    })  # fmt: skip


draft_kv_layers = no_draft_kv_layers  # the draft's KV cost is not modelled (named by `terms`)
cache_only_cell = no_cache_only_cell


def terms(inputs: TermInputs) -> tuple[BudgetTerm, ...]:
    setup = inputs.setup
    found: list[BudgetTerm] = []
    term = _TERM[drafter(setup.spec_method)] if setup.spec_method is not None else None
    if term is not None:
        found.append(BudgetTerm(
            feature=Feature.SPECULATIVE, charge=Charge.KV_CELL, label=f"{term[0]} ({setup.spec_method})",
            state=TermState.NOT_MODELLED, setting=f"speculative_config.decoding_type: {setup.spec_method}",
            source="_torch/pyexecutor/_util.py KvCacheCreator._get_kv_size_per_token (draft cost, §1.1); "
            "trtllm/spec_methods.py Drafter", detail=term[1],
        ))  # fmt: skip
    slots = flag_int(inputs.settings, "moe_config.load_balancer.num_slots")
    if slots:
        found.append(BudgetTerm(
            feature=Feature.EXPERT_PARALLEL, charge=Charge.RESIDENT, label="MoE load balancer slots",
            state=TermState.NOT_MODELLED, setting=f"moe_config.load_balancer.num_slots: {slots}",
            source="_torch/modules/fused_moe/moe_load_balancer.py", detail="the load balancer's extra slots are not modelled",
        ))  # fmt: skip
    if setup.lora:
        found.append(BudgetTerm(
            feature=Feature.LORA, charge=Charge.RESIDENT, label="LoRA (PEFT cache)", state=TermState.NOT_MODELLED,
            setting="lora_config", source="peft_cache_config (PeftCacheManager)",
            detail="the PEFT cache's device share is not modelled",
        ))  # fmt: skip
    return tuple(found)


def host_tier(
    setup: DeploymentSetup, *, gpu_tokens: int, kv_bytes_per_token: int, page_size: int, ranks: int, world: int,
    version: ResolvedVersion,
) -> HostTier | None:  # fmt: skip
    request = setup.host_kv
    if request is None or not request.bytes_per_rank or not kv_bytes_per_token:
        return None
    blocks = int(request.bytes_per_rank / kv_bytes_per_token / page_size)
    return HostTier(
        connector="secondary (host) pool", setting=f"kv_cache_config.host_cache_size: {request.bytes_per_rank}",
        bytes_per_rank=request.bytes_per_rank, tokens_per_rank=blocks * page_size, gpu_tokens_per_rank=gpu_tokens,
        ranks=ranks, source=SOURCE_HOST, detail="host blocks the block manager offloads evicted reusable blocks to",
    )  # fmt: skip

"""llama.cpp's deployment beside the model: a speculative draft (`-md`) is named, not modelled."""

from __future__ import annotations

from kvtop.domain.deployment import (
    BudgetTerm,
    Charge,
    DeploymentSetup,
    Feature,
    SpecKind,
    TermInputs,
    TermState,
    no_cache_only_cell,
    no_draft_kv_layers,
    no_host_tier,
)
from kvtop.domain.deployment_flags import feature_remover, flag_text, with_flags
from kvtop.domain.launch import LaunchSettings

SPEC_FLAGS = ("md", "model-draft")
LORA_FLAGS = ("lora",)
FLAGS: frozenset[str] = frozenset({"-md", "--model-draft", "--lora"})
flags = FLAGS
flashinfer_read: str | None = None  # no release reads whether the install holds FlashInfer
_FEATURE_FLAGS = {Feature.SPECULATIVE: SPEC_FLAGS, Feature.LORA: LORA_FLAGS}


def setup(settings: LaunchSettings) -> DeploymentSetup:
    draft = flag_text(settings, "md") or flag_text(settings, "model-draft")
    return DeploymentSetup(spec_method="draft" if draft else None, spec_kind=SpecKind.DRAFT_MODEL if draft else None,
                           draft_model=draft, lora=flag_text(settings, "lora") is not None)  # fmt: skip


without = feature_remover(_FEATURE_FLAGS)


def with_setup(settings: LaunchSettings, setup: DeploymentSetup) -> LaunchSettings:
    return with_flags(settings, {"md": setup.draft_model})


draft_kv_layers = no_draft_kv_layers
cache_only_cell = no_cache_only_cell


def terms(inputs: TermInputs) -> tuple[BudgetTerm, ...]:
    found: list[BudgetTerm] = []
    if inputs.setup.spec_kind is not None:
        found.append(BudgetTerm(
            feature=Feature.SPECULATIVE, charge=Charge.RESIDENT, label="draft model weights and its own KV cache",
            state=TermState.NOT_MODELLED, setting=f"-md {inputs.setup.draft_model}",
            source="tools/server: the draft gets its own llama_context and cache (-cd, -ctkd, -ctvd)",
            detail="llama.cpp's draft model is not modelled",
        ))  # fmt: skip
    if inputs.setup.lora:
        found.append(BudgetTerm(
            feature=Feature.LORA, charge=Charge.RESIDENT, label="LoRA adapters", state=TermState.NOT_MODELLED,
            setting="--lora", source="src/llama-adapter.cpp", detail="llama.cpp's adapter weights are not modelled",
        ))  # fmt: skip
    return tuple(found)


host_tier = no_host_tier

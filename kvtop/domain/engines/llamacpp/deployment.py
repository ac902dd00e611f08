"""llama.cpp's deployment beside the model: a speculative draft (`-md`) is named, not modelled."""

from __future__ import annotations

from kvtop.domain.deployment import (
    BudgetTerm,
    Charge,
    DeploymentSetup,
    Feature,
    HostTier,
    SpecKind,
    TermInputs,
    TermState,
)
from kvtop.domain.deployment_flags import flag_text, with_flags, without_flags
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec

SPEC_FLAGS = ("md", "model-draft")
LORA_FLAGS = ("lora",)
FLAGS: frozenset[str] = frozenset({"-md", "--model-draft", "--lora"})
flags = FLAGS
_FEATURE_FLAGS = {Feature.SPECULATIVE: SPEC_FLAGS, Feature.LORA: LORA_FLAGS}


def setup(settings: LaunchSettings) -> DeploymentSetup:
    draft = flag_text(settings, "md") or flag_text(settings, "model-draft")
    return DeploymentSetup(spec_method="draft" if draft else None, spec_kind=SpecKind.DRAFT_MODEL if draft else None,
                           draft_model=draft, lora=flag_text(settings, "lora") is not None)  # fmt: skip


def without(settings: LaunchSettings, feature: Feature) -> LaunchSettings:
    return without_flags(settings, _FEATURE_FLAGS.get(feature, ()))


def with_setup(settings: LaunchSettings, setup: DeploymentSetup) -> LaunchSettings:
    return with_flags(settings, {"md": setup.draft_model})


def draft_kv_layers(model: ModelSpec, setup: DeploymentSetup, draft: ModelSpec | None) -> int:
    return 0


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


def host_tier(
    setup: DeploymentSetup, *, gpu_tokens: int, kv_bytes_per_token: int, page_size: int, ranks: int, world: int,
    version: ResolvedVersion,
) -> HostTier | None:  # fmt: skip
    return None

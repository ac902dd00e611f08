"""LMDeploy's deployment beside the model (docs/engines/lmdeploy.md §13).

Named as not modelled: speculative decoding (`--speculative-algorithm`, the PyTorch engine's draft
spec cache added to each rank's block bytes, §4.3) and LoRA adapters (`--adapters`). LMDeploy has no
expert-parallel redundancy or host KV tier kvtop reads from its flags.
"""

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
from kvtop.domain.deployment_flags import feature_remover, flag_int, flag_text, with_flags
from kvtop.domain.engines.lmdeploy.spec_methods import METHOD_ERAS
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.spec_methods import check_method

# `--speculative-dflash-block-size`: 0.18.0's DFlash window (cli/utils.py:851-857), with `--speculative-algorithm dflash`
SPEC_FLAGS = ("speculative-algorithm", "speculative-draft-model", "speculative-num-draft-tokens",
              "speculative-dflash-block-size")  # fmt: skip
LORA_FLAGS = ("adapters",)
FLAGS: frozenset[str] = frozenset("--" + f for f in (*SPEC_FLAGS, *LORA_FLAGS))
flags = FLAGS  # the protocol's name (DeploymentRules.flags)
flashinfer_read: str | None = None  # no release reads whether the install holds FlashInfer
_FEATURE_FLAGS = {Feature.SPECULATIVE: SPEC_FLAGS, Feature.LORA: LORA_FLAGS}


def setup(settings: LaunchSettings) -> DeploymentSetup:
    algorithm = flag_text(settings, "speculative-algorithm")
    # argparse refuses any other value (lmdeploy/spec_methods.py)
    check_method(algorithm, METHOD_ERAS, settings.engine_version, flag="--speculative-algorithm")
    kind = None
    if algorithm is not None:  # deepseek_mtp, qwen3_5_mtp, hy3_mtp: the model's own MTP layers
        kind = SpecKind.MTP if algorithm.endswith("_mtp") else SpecKind.DRAFT_MODEL
    return DeploymentSetup(
        spec_method=algorithm, spec_kind=kind, draft_model=flag_text(settings, "speculative-draft-model"),
        draft_tokens=flag_int(settings, "speculative-num-draft-tokens", least=1),
        lora=flag_text(settings, "adapters") is not None,
    )  # fmt: skip


without = feature_remover(_FEATURE_FLAGS)


def with_setup(settings: LaunchSettings, setup: DeploymentSetup) -> LaunchSettings:
    return with_flags(settings, {"speculative-algorithm": setup.spec_method})


draft_kv_layers = no_draft_kv_layers
cache_only_cell = no_cache_only_cell


def terms(inputs: TermInputs) -> tuple[BudgetTerm, ...]:
    found: list[BudgetTerm] = []
    if inputs.setup.spec_kind is not None:
        found.append(BudgetTerm(
            feature=Feature.SPECULATIVE, charge=Charge.KV_CELL, label=f"draft weights and KV ({inputs.setup.spec_method})",
            state=TermState.NOT_MODELLED, setting=f"--speculative-algorithm {inputs.setup.spec_method}",
            source="pytorch/engine/cache_engine.py: block bytes of the target + the draft's spec cache (§4.3)",
            detail="LMDeploy's speculative decoding is not modelled",
        ))  # fmt: skip
    if inputs.setup.lora:
        found.append(BudgetTerm(
            feature=Feature.LORA, charge=Charge.RESIDENT, label="LoRA adapters", state=TermState.NOT_MODELLED,
            setting="--adapters", source="pytorch/adapter", detail="LMDeploy's adapter weights are not modelled",
        ))  # fmt: skip
    return tuple(found)


host_tier = no_host_tier

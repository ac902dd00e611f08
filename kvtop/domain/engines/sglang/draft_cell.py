"""Whether SGLang's target cell makes room for an EAGLE/MTP draft's KV, by release (docs/engines/sglang.md §6.1).

The target's `cell × (1 + eagle_draft_num_layers ÷ layers)` (pool_configurator.py) is what makes the draft's
pool, which reuses the target's token count, part of the profiled budget. Where the release leaves
`eagle_draft_num_layers` at None, the target's cell is its own layers only and the draft's pool comes out of
what the fraction leaves after the target's pool: the target's token count does not see the draft.

- before 0.5.14 (read at 0.5.3rc0, 0.5.10, 0.5.12, 0.5.13: `profile_max_num_token` / `DefaultPoolConfigurator`):
  no EAGLE term; DFLASH has its own, DeepSeek-V4's configurator its `× (L + 1) ÷ L` whenever speculating.
- 0.5.14 – 0.5.19 (read at 0.5.14 – 0.5.19: model_runner.py, then model_runner_components/
  spec_aux_hidden_state.py): only with `speculative_draft_model_path` set, typed or filled in by
  arg_groups/speculative_hook.py for its listed target classes (the model's own path).
- 0.5.20 on (read at 0.5.20, 0.5.22, 0.5.23): also a path-less launch whose target config states
  `num_nextn_predict_layers` (the target config read as the draft's); Qwen3.5's `mtp_num_hidden_layers` is not it.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.architectures.registry import ARCHITECTURES
from kvtop.domain.deployment import DeploymentSetup, SpecKind
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.model import ModelSpec

# arg_groups/speculative_hook.py: the target classes whose launch without a draft path gets the model's own path
_PATH_FILLED_0514 = frozenset({
    "DeepseekV32ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV4ForCausalLM", "Glm4MoeForCausalLM",
    "Glm4MoeLiteForCausalLM", "GlmMoeDsaForCausalLM", "BailingMoeForCausalLM", "BailingMoeV2ForCausalLM",
    "BailingMoeV2_5ForCausalLM", "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration", "HYV3ForCausalLM",
})  # fmt: skip
_PATH_FILLED_0520 = _PATH_FILLED_0514 | {"HYV4ForCausalLM", "Qwen4ExpForConditionalGeneration"}


@dataclass(frozen=True)
class DraftCellRule:
    """One era: whether the EAGLE term exists, the classes given a draft path, and whether a path-less target's
    own `num_nextn_predict_layers` counts."""

    inflates: bool
    path_filled: frozenset[str] = frozenset()
    target_nextn_counts: bool = False


DRAFT_CELL_ERAS: Eras[DraftCellRule] = Eras((
    Era("", DraftCellRule(False), "model_executor/model_runner.py profile_max_num_token, pool_configurator.py "
        "DefaultPoolConfigurator: no EAGLE term (read at 0.5.3rc0, 0.5.10, 0.5.12, 0.5.13)"),
    Era("0.5.14", DraftCellRule(True, _PATH_FILLED_0514),
        "pool_configurator.py DefaultPoolConfigurator.__init__ (eagle_draft_num_layers, set only with "
        "speculative_draft_model_path: model_runner.py 0.5.14 – 0.5.15, spec_aux_hidden_state.py 0.5.16 – 0.5.19); "
        "arg_groups/speculative_hook.py's class list (read at 0.5.14 – 0.5.19)"),
    Era("0.5.20", DraftCellRule(True, _PATH_FILLED_0520, target_nextn_counts=True),
        "model_runner_components/spec_aux_hidden_state.py: a path-less draft reads the target's config "
        "(read at 0.5.20, 0.5.22, 0.5.23); speculative_hook.py's list gains HYV4, Qwen4-Exp"),
))  # fmt: skip


def _states_nextn(model: ModelSpec) -> bool:
    """Whether the target's own config states `num_nextn_predict_layers` (what a path-less draft reads from 0.5.20)."""
    entry = ARCHITECTURES.get(model.model_type)
    return entry is not None and entry.mtp_fields[:1] == ("num_nextn_predict_layers",) and model.mtp_layers > 0


def cell_holds_draft(model: ModelSpec, setup: DeploymentSetup, version: ResolvedVersion) -> bool:
    """Whether the target's cell grows by the draft's layers at `version` (DeepSeek-V4's compressed pool: always
    where speculating, its own configurator's term)."""
    if model.compressed is not None:
        return True
    rule = DRAFT_CELL_ERAS.at(version)
    if not rule.inflates:
        return False
    return (setup.spec_kind is SpecKind.DRAFT_MODEL or setup.draft_model is not None
            or model.architecture in rule.path_filled or (rule.target_nextn_counts and _states_nextn(model)))  # fmt: skip

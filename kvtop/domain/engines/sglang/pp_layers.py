"""Which layers an SGLang pipeline stage sizes its KV pools for (docs/engines/sglang.md §8.3.1).

SGLang takes a stage's layer range from its model object: `getattr(model, "start_layer", 0)` and
`getattr(model, "end_layer", num_layers)` (0.5.23 `model_runner_components/layer_setup.py`
`_resolve_pp_layer_range`; 0.5.6.post2 `ModelRunner.__init__`). A top-level class that keeps those on an
inner module only (multimodal wrappers, some causal-LM classes) falls back to every layer of the model: each
stage builds only its own layers (its weights split) but sizes its KV pools for all of them. Architectures are
data here, by release: the classes SGLang's own runs showed doing it.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.model import ModelSpec

# The top-level classes without start_layer / end_layer, by release. 0.5.23: the engine-diff runs under
# PP 2 and 4 (tests/data/engine_diff/sglang-0.5.23.flags.json: every stage's layer range is the whole model).
# Earlier releases are not checked (no PP run of them): kvtop sizes the stage's own layers there. Not modelled:
# NemotronHForCausalLM, whose runs size the attention cell for every layer but the Mamba slots otherwise
# (max_mamba_cache_size 88 at PP 2 where the whole model's state would give fewer): it keeps the stage's layers.
WHOLE_MODEL_KV_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "not checked before 0.5.5.post3: the stage's own layers"),
    Era("0.5.5.post3", frozenset({"Mistral3ForConditionalGeneration"}),
        "PR #14254's startup log (2025-12-01, main after 0.5.5.post3): Mistral-Small-3.1 at PP 4 loads as "
        "LlavaForConditionalGeneration and every stage allocates K 26.84 GB for 351,850 tokens = 40 of 40 layers"),
    Era("0.5.23", frozenset({
        "Gemma4ForConditionalGeneration", "MiniMaxM2ForCausalLM", "Mistral3ForConditionalGeneration",
        "Qwen2_5_VLForConditionalGeneration",
    }), "model_runner_components/layer_setup.py _resolve_pp_layer_range: getattr defaults (engine runs, PP 2/4)"),
))  # fmt: skip


# HybridSWAPoolConfigurator's cell (§6.2): whether it counts the whole model's full and sliding layers under PP.
# 0.5.23's own runs count the stage's (gpt-oss-120b TP2×PP2: a 16,588-B cell = 9 full × 1,024 B + 0.8 × 9
# sliding × 1,024 B, 2,589,076 tokens; tests/data/engine_diff/sglang-0.5.23.flags.json, readings S20). Before
# it, kvtop keeps §6.2's reading of the configurator (whole-model `full_attention_layer_ids` and
# `swa_attention_layer_ids`), which no PP run checked.
SWA_CELL_WHOLE_MODEL_ERAS: Eras[bool] = Eras((
    Era("", True, "sglang.md §6.2: HybridSWAPoolConfigurator's nf / ns, read as whole-model counts (no PP run)"),
    Era("0.5.23", False, "engine-diff PP 2 and 4 runs (gpt-oss-20b/120b): the stage's own full and sliding layers"),
))  # fmt: skip


def swa_cell_counts_whole_model(version: ResolvedVersion) -> bool:
    """Whether this release's hybrid sliding-window cell counts every layer of the model under PP."""
    return SWA_CELL_WHOLE_MODEL_ERAS.at(version)


def kv_layers_of_stage(model: ModelSpec, layers: range, version: ResolvedVersion) -> range:
    """Every layer of the model where this release's top-level class states no stage range, else `layers`."""
    if model.architecture in era_for(WHOLE_MODEL_KV_ERAS, version).value:
        return range(model.num_layers)
    return layers


def whole_model_kv_note(model: ModelSpec, pp: int, version: ResolvedVersion) -> str | None:
    """A line for the plan where every PP stage sizes its KV for the whole model."""
    if pp > 1 and model.architecture in era_for(WHOLE_MODEL_KV_ERAS, version).value:
        return (
            f"every PP stage sizes KV for all {model.num_layers} layers: {model.architecture} states no "
            "start_layer / end_layer (docs/engines/sglang.md §8.3.1)"
        )
    return None

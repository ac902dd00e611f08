"""Which layers an SGLang pipeline stage sizes its KV pools for (docs/engines/sglang.md §8.3.1).

SGLang takes a stage's layer range from its model object: `getattr(model, "start_layer", 0)` and
`getattr(model, "end_layer", num_layers)` (0.5.23 `model_runner_components/layer_setup.py`
`_resolve_pp_layer_range`; 0.5.6.post2 `ModelRunner.__init__`). A top-level class that keeps those on an
inner module only (multimodal wrappers, some causal-LM classes) falls back to every layer of the model: each
stage builds only its own layers (its weights split) but sizes its KV pools for all of them. Architectures are
data here, by release: the classes SGLang's own runs showed doing it.
"""

from __future__ import annotations

from collections.abc import Sequence

from kvtop.domain.engines.sglang.pp_split import PP_SPLIT_ERAS
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.kv import KvBook
from kvtop.domain.layout import pp_layer_range
from kvtop.domain.model import LayerKind, ModelSpec

# The top-level classes without start_layer / end_layer, by release. 0.5.23: the engine-diff runs under
# PP 2 and 4 (tests/data/engine_diff/sglang-0.5.23.flags.json: every stage's layer range is the whole model).
# Earlier releases are not checked (no PP run of them): kvtop sizes the stage's own layers there.
WHOLE_MODEL_KV_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "not checked before 0.5.5.post3: the stage's own layers"),
    Era("0.5.5.post3", frozenset({"Mistral3ForConditionalGeneration"}),
        "PR #14254's startup log (2025-12-01, main after 0.5.5.post3): Mistral-Small-3.1 at PP 4 loads as "
        "LlavaForConditionalGeneration and every stage allocates K 26.84 GB for 351,850 tokens = 40 of 40 layers"),
    Era("0.5.23", frozenset({
        "DeciLMForCausalLM",  # models/nemotron_nas.py: start_layer / end_layer on its DeciModel (self.model) only
        "Gemma4ForConditionalGeneration", "MiniMaxM2ForCausalLM", "Mistral3ForConditionalGeneration",
        "Qwen2_5_VLForConditionalGeneration",
        # models/iquest_loopcoder.py: start_layer / end_layer on its IQuestLoopCoderModel only (registry sweep, TP 1:
        # the stage range [0, 160) of 80 layers × loop_num 2, a cell of 320 layers × 4,096 B = 1,310,720 B)
        "IQuestLoopCoderForCausalLM",
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


# Hybrid Mamba classes whose stages size the attention cell for every full-attention layer of the model and the
# Mamba state for their own layers only (S13): 0.5.23's runs of Nemotron-H (Nemotron-3-Nano TP2×PP2: a 3,072-B
# cell = 6 attention layers × 512 B, 7,362,229 tokens; 1,587 Mamba slots each the stage's 12 of 23 layers'
# state: the rest 40 GiB less them over that cell; Nemotron-H-56B at PP 4: 40,960 B = 10 × 4,096 B).
WHOLE_MODEL_ATTENTION_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "not checked before 0.5.23: the stage's own layers"),
    Era("0.5.23", frozenset({"NemotronHForCausalLM"}),
        "engine-diff runs, PP 2 and 4: every stage's layer range the whole model, its Mamba pool the stage's"),
))  # fmt: skip


def kv_layers_of_stage(model: ModelSpec, layers: range, version: ResolvedVersion) -> Sequence[int]:
    """Every layer of the model where this release's top-level class states no stage range; every full-attention
    layer and the stage's own for a class whose Mamba state stays the stage's; else `layers`."""
    if model.architecture in era_for(WHOLE_MODEL_KV_ERAS, version).value:
        if model.kv_passes == 1:
            return range(model.num_layers)
        # a looped class's whole model is configs/model_config.py's num_attention_layers, num_hidden_layers ×
        # loop_num (each layer once per pass), which layer_setup.py resolve_layer_indices multiplies by loop_num
        # again for the pool (num_effective_layers); kv.py then keeps each listed layer once per pass
        return [i for _ in range(model.kv_passes) for i in range(model.num_layers)]
    if model.architecture in WHOLE_MODEL_ATTENTION_ERAS.at(version):
        full = {i for i, kind in enumerate(model.layer_attention) if kind is LayerKind.FULL}
        return sorted(full | set(layers))
    return layers


def whole_model_kv_note(model: ModelSpec, pp: int, version: ResolvedVersion) -> str | None:
    """A line for the plan where every PP stage sizes its KV for the whole model."""
    whole = model.architecture in era_for(WHOLE_MODEL_KV_ERAS, version).value
    if whole and model.kv_passes > 1:
        passes, layers = model.kv_passes, model.num_layers
        return (
            f"the pool holds {layers * passes * passes} layers, {passes} × the {layers * passes} the passes use: "
            f"{model.architecture} states no start_layer / end_layer, so the stage is num_attention_layers "
            f"({layers} × {passes}), then multiplied by the passes again (docs/engines/sglang.md §8.3.1)"
        )
    if pp > 1 and whole:
        return (
            f"every PP stage sizes KV for all {model.num_layers} layers: {model.architecture} states no "
            "start_layer / end_layer (docs/engines/sglang.md §8.3.1)"
        )
    if pp > 1 and model.architecture in WHOLE_MODEL_ATTENTION_ERAS.at(version):
        return (
            f"every PP stage sizes its attention KV for all {len(model.layers_of(LayerKind.FULL))} attention layers "
            f"of the model, its Mamba state for its own layers ({model.architecture}; docs/engines/sglang.md §8.3.1)"
        )
    return None


FATTEST_STATE_ERAS: Eras[bool] = Eras((
    Era("", False, "not checked before 0.5.23: each stage's own state layers"),
    Era("0.5.23", True, "engine-diff runs at PP 2 and 4 (Qwen3.5, Nemotron-H): every stage's pool the fattest's"),
))  # fmt: skip


def most_stage_state(model: ModelSpec, kv: KvBook, pp: int, version: ResolvedVersion) -> int:
    """A request's Mamba state as every stage's pool sizes it under PP: the stage with the most state layers'
    (S13, S21). 0.5.23's runs: Qwen3.5-35B-A3B TP1×PP4 (state layers 8, 7, 8, 7; attention 2, 3, 2, 3) gives
    3,672,938 tokens on every stage = (the rest less 1,181 slots × 8 layers' state) ÷ stage 1's 6,144-B cell,
    where its own 7 layers would give 4,085,501; Nemotron-H-56B at PP 4 (14, 13, 13, 14): 84 slots, 557,582."""
    pool, own = kv.pool("state"), kv.state_bytes_per_request
    if pp < 2 or pool is None or not pool.layers or not FATTEST_STATE_ERAS.at(version):
        return own
    most = max(
        sum(1 for i in pp_layer_range(model.num_layers, r, pp, PP_SPLIT_ERAS.at(version)) if model.has_state(i)) for r in range(pp)
    )
    return own // pool.layers * max(most, pool.layers)

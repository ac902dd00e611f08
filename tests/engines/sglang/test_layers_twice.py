"""SGLang's Ministral3 first layer stack (engines/sglang/layers_twice.py; docs/engines/sglang.md §20.6):
models/ministral3.py (0.5.7 – 0.5.23 read) builds LlamaModel's decoder layers, then its own; the first stack's linear
weights stay on the GPU, cyclic garbage, until the gc.collect() at the CUDA graph capture, after the KV sizing.

Expected figures by hand from the Devstral-Small-2-24B-AWQ config (tests/data/calibration/configs/: 40 layers, hidden
5,120, 32 heads and 8 KV heads of 128, intermediate 32,768, AWQ 4-bit groups of 128 with zero points) at TP 2, and the
figures the start printed (mattbucci/2x-3090-GA102-300-A1-sglang-inference at 952c63d,
benchmarks/sprint-2026-06-kv-decode/A4-devstral-mem90/ladder-ratio-0.8.json). Never kvtop's own figures.
"""

from __future__ import annotations

import json

from benchmarks.calibration.corpus import load
from benchmarks.calibration.evaluate import weights_term
from kvtop.domain.engines.sglang.layers_twice import first_stack, second_rope
from kvtop.domain.engines.sglang.weights_held import stage_book
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from tests.data_paths import DATA

RECORDS = {record.id: record for record in load("sglang")}
DEVSTRAL = "mattbucci-2x3090-devstral-small-2-24b-awq-mem090-v0515"
DEVSTRAL_CONFIG = DATA / "calibration" / "configs" / "mattbucci--Devstral-Small-2-24B-AWQ.RECONSTRUCTED.json"
# a rank's linear elements a layer (K × N at TP 2): qkv 5,120 × 3,072, o 2,048 × 5,120, gate_up 5,120 × 32,768,
# down 16,384 × 5,120; AWQ bytes: K × N / 2 (qweight) + K / 128 × N × 2 (scales) + K / 128 × N / 2 (qzeros)
LAYER_BYTES = sum(k * n // 2 + k // 128 * n * 2 + k // 128 * n // 2
                  for k, n in ((5_120, 3_072), (2_048, 5_120), (5_120, 32_768), (16_384, 5_120)))  # fmt: skip
LOGGED_LOAD_GIB = 12.91  # 'Load weight end. … mem usage=12.91 GB' (SGLang's GB are GiB), both ranks
LOGGED_CAPTURE_FREED_GIB = 5.29  # 'Capture cuda graph end. … mem usage=-5.29 GB': the stack freed, less the graphs


def test_devstral_awq_at_tp2_holds_a_second_stack_of_5_38_gib() -> None:
    """40 layers × 144,363,520 B = 5,774,540,800 B (5.38 GiB) a rank; the capture freed 5.29 GiB net of its own
    graphs (batch size 1), within 2 % of it."""
    assert LAYER_BYTES == 144_363_520
    found = first_stack(RECORDS[DEVSTRAL].inputs(), stage_book)
    assert found is not None and found[0] == 40 * LAYER_BYTES == 5_774_540_800
    assert abs(found[0] / GIB - LOGGED_CAPTURE_FREED_GIB) / LOGGED_CAPTURE_FREED_GIB < 0.02


def test_the_weights_term_meets_the_logged_load() -> None:
    """With the stack the weights term is within 2.5 % of the 12.91 GiB printed (the book alone: 7.25, −44 %)."""
    estimate = weights_term(RECORDS[DEVSTRAL])
    assert estimate is not None and abs(estimate.bytes / GIB - LOGGED_LOAD_GIB) / LOGGED_LOAD_GIB < 0.025


def test_a_pipeline_stage_holds_its_own_layers_only() -> None:
    """PP 2: LlamaModel's make_layers builds the stage's 20 layers: half the stack."""
    inputs = RECORDS[DEVSTRAL].inputs()
    staged = inputs.model_copy(update={"layout": inputs.layout.model_copy(update={"pp": 2})})
    found = first_stack(staged, stage_book)
    assert found is not None and found[0] == 20 * LAYER_BYTES


def test_before_0_5_7_or_a_mistral_text_model_builds_one_stack() -> None:
    """0.5.6 has no models/ministral3.py; a `mistral` text_config is MistralForCausalLM (LlamaModel's layers once)."""
    inputs = RECORDS[DEVSTRAL].inputs()
    assert first_stack(inputs.model_copy(update={"version": ResolvedVersion(text="0.5.6")}), stage_book) is None
    assert inputs.model is not None
    mistral = inputs.model.model_copy(update={"model_type": "mistral"})
    assert first_stack(inputs.model_copy(update={"model": mistral}), stage_book) is None


ROPE_CACHE_ROW = 128 * 4  # head 128, float32 on CUDA (srt/layers/rotary_embedding/base.py)


def test_the_two_attention_classes_keep_two_rope_caches() -> None:
    """LlamaModel's LlamaAttention asks get_rope for config.max_position_embeddings (393,216) positions and
    Ministral3Attention for getattr(config, 'original_max_position_embeddings', 16384): two keys, two modules, both
    kept in _ROPE_DICT. The record's config states Devstral-Small-2's YaRN block (factor 48 from 8,192: a verbatim copy
    of its AWQ checkpoint's config.json, BigBIueWhale/devstral_vllm_config config_override.json at 9be605ca), so both
    modules span original × factor: 8,192 × 48 = 393,216 positions × 128 × 4 B = 201,326,592 B. Without a rope block
    the second module is a plain rope of 16,384 positions, 16,384 × 128 × 4 = 8,388,608 B."""
    inputs = RECORDS[DEVSTRAL].inputs()
    assert inputs.model is not None and inputs.model.rope_type == "yarn"
    found = second_rope(inputs, 4)
    assert found is not None and found[0] == 8_192 * 48 * ROPE_CACHE_ROW == 201_326_592
    config = json.loads(DEVSTRAL_CONFIG.read_text())
    del config["text_config"]["rope_parameters"]
    plain = model_from_config(config, source="devstral-without-a-rope-block")
    assert plain.rope_type != "yarn"
    found = second_rope(inputs.model_copy(update={"model": plain}), 4)
    assert found is not None and found[0] == 16_384 * ROPE_CACHE_ROW == 8_388_608


def test_one_rope_where_the_keys_meet_or_before_0_5_7() -> None:
    inputs = RECORDS[DEVSTRAL].inputs()
    assert second_rope(inputs.model_copy(update={"version": ResolvedVersion(text="0.5.6")}), 4) is None
    assert inputs.model is not None
    short = inputs.model.model_copy(update={"max_position_embeddings": 16_384})
    assert second_rope(inputs.model_copy(update={"model": short}), 4) is None

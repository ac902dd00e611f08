"""vLLM's multimodal rope cache and Qwen3-VL's deepstack buffers beside the weights book
(kvtop/domain/engines/vllm/weights_buffers.py, weights_held.py; docs/engines/vllm.md §10).

Expected figures are vLLM's code's arithmetic by hand and the weights its logs printed (tests/data/calibration/
vllm.jsonl): Zzsf11/VideoCuttingAgent's v0.12.0 start of Qwen3-VL-30B-A3B at TP 2 ('Model loading took 29.3115 GiB
memory'), never the function's output.
"""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.calibration.corpus import load
from benchmarks.calibration.evaluate import weights_term
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.weights_buffers import deepstack_buffers, mrope_positions_factor
from kvtop.domain.engines.vllm.weights_held import held_beside, rope_cache
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS

QWEN3_VL_30B = CONFIGS / "heldout" / "Qwen--Qwen3-VL-30B-A3B-Instruct.json"
QWEN3_VL_8B = CONFIGS / "heldout" / "Qwen--Qwen3-VL-8B-Instruct.json"
QWEN3_VL_4B = CONFIGS / "heldout" / "Qwen--Qwen3-VL-4B-Instruct.json"
QWEN3_VL_2B = CONFIGS / "heldout" / "Qwen--Qwen3-VL-2B-Instruct.json"
QWEN3_VL_235B = CONFIGS / "heldout" / "Qwen--Qwen3-VL-235B-A22B-Instruct.json"
QWEN25_VL_7B = CONFIGS / "heldout" / "Qwen--Qwen2.5-VL-7B-Instruct.json"
QWEN3_32B = CONFIGS / "Qwen--Qwen3-32B.json"


def _inputs(config: Path, version: str, *flags: str, tp: int = 1, gpu: str = "H100") -> CalibrationInputs:
    model = load_config_file(config)
    return CalibrationInputs(
        model=model, settings=parse_flags("vllm", list(flags)), layout=ParallelLayout(tp=tp), gpu_name=gpu,
        gpu_total_bytes=gpu_total_bytes(gpu), version=ResolvedVersion(text=version), weights_bytes=0,
        context_length=model.max_position_embeddings,
    )  # fmt: skip


def test_the_config_states_the_multimodal_rope() -> None:
    """`mrope_section` in the text section's rope block (Qwen2.5-VL's copy; Qwen3-VL-30B-A3B's and -4B's published
    configs, restored in kvtop's copies: heldout/SOURCES.md); a text model's config states none. The 4B at v0.19.0:
    262,144 positions × 4 × 128 × 2 B = 268,435,456 B (mrope.py:238)."""
    assert load_config_file(QWEN25_VL_7B).mrope
    assert load_config_file(QWEN3_VL_30B).mrope
    found = rope_cache(_inputs(QWEN3_VL_4B, "0.19.0"))
    assert found is not None and found[0] == 268_435_456
    assert not load_config_file(QWEN3_32B).mrope


def test_qwen3_vl_2b_and_235b_copies_state_the_multimodal_rope() -> None:
    """Both published configs carry `mrope_section` [24, 20, 20] (restored in kvtop's copies from public transcriptions:
    heldout/SOURCES.md), so vLLM 0.19.0 builds MRotaryEmbedding over 262,144 positions × 4 × head_dim 128 × 2 B =
    268,435,456 B (mrope.py:238), not the plain rope's 262,144 × 128 × 2 = 67,108,864 B."""
    for config in (QWEN3_VL_2B, QWEN3_VL_235B):
        assert load_config_file(config).mrope
        found = rope_cache(_inputs(config, "0.19.0"))
        assert found is not None and found[0] == 262_144 * 4 * 128 * 2


def test_the_multimodal_rope_holds_four_times_the_positions() -> None:
    """MRotaryEmbedding's cache_max_position_num = max_position_embeddings × 4 (v0.9.2 rotary_embedding.py:1038):
    Qwen2.5-VL-7B's 128,000 positions × 4 × 128 × 2 B = 131,072,000 B; v0.7.1's kept the positions (128,000 × 128 × 2
    = 32,768,000 B); from v0.32.0 Qwen3-VL's classes pass 1 (qwen3_vl.py:1818-1831), Qwen2.5-VL keeps 4."""
    found = rope_cache(_inputs(QWEN25_VL_7B, "0.9.2", tp=2, gpu="L4"))
    assert found is not None and found[0] == 128_000 * 4 * 128 * 2
    old = rope_cache(_inputs(QWEN25_VL_7B, "0.7.1"))
    assert old is not None and old[0] == 128_000 * 128 * 2
    assert mrope_positions_factor(_inputs(QWEN3_VL_30B, "0.33.0")) == 1
    assert mrope_positions_factor(_inputs(QWEN3_VL_30B, "0.30.0")) == 4
    assert mrope_positions_factor(_inputs(QWEN25_VL_7B, "0.33.0")) == 4
    assert mrope_positions_factor(_inputs(QWEN3_32B, "0.19.0")) == 1


# Qwen's YaRN recipe for Qwen2.5-VL (its model card: "type": "yarn", "mrope_section": [16, 24, 24], "factor": 4,
# "original_max_position_embeddings": 32768), and the same without mrope_section
YARN_MROPE = {"type": "yarn", "mrope_section": [16, 24, 24], "factor": 4, "original_max_position_embeddings": 32768}
YARN_PLAIN = {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 32768}


def test_a_yarn_override_builds_the_multimodal_rope_only_from_v0_11_0() -> None:
    """get_rope builds MRotaryEmbedding for `yarn` with `mrope_section` only from v0.11.0 (rotary_embedding/__init__.py
    :156-167): over the original 32,768 positions × 4 (mrope.py:241), its YaRN cache × factor 4 (mrope.py:255-258,
    yarn_scaling_rope.py:62) = 524,288 positions × 128 × 2 B = 134,217,728 B. v0.9.2 (rotary_embedding.py:1979-1993)
    and v0.10.2 (__init__.py:144) build YaRNScalingRotaryEmbedding: 32,768 × 4 = 131,072 × 128 × 2 = 33,554,432 B."""
    flag = ("--rope-scaling", json.dumps(YARN_MROPE))
    for version, positions in (("0.9.2", 131_072), ("0.10.2", 131_072), ("0.11.0", 524_288)):
        found = rope_cache(_inputs(QWEN25_VL_7B, version, *flag))
        assert found is not None and found[0] == positions * 128 * 2, version
    assert mrope_positions_factor(_inputs(QWEN25_VL_7B, "0.10.2", *flag)) == 1
    assert mrope_positions_factor(_inputs(QWEN25_VL_7B, "0.11.0", *flag)) == 4


def test_an_override_without_mrope_section_builds_the_plain_rope() -> None:
    """A launch's rope replaces config.json's `rope_scaling` (its `mrope_section` with it): at v0.11.0 `--hf-overrides`
    with a plain yarn block builds YaRNScalingRotaryEmbedding, 32,768 × 4 = 131,072 positions × 128 × 2 =
    33,554,432 B; at v0.9.2 a linear factor 2 builds LinearScalingRotaryEmbedding over 128,000 × 2 = 256,000
    positions (65,536,000 B), not 4 × that. Without a launch rope the config's `default` + `mrope_section` × 4
    (128,000 × 4 × 128 × 2 = 131,072,000 B)."""
    overrides = ("--hf-overrides", json.dumps({"rope_scaling": YARN_PLAIN}))
    found = rope_cache(_inputs(QWEN25_VL_7B, "0.11.0", *overrides))
    assert found is not None and found[0] == 33_554_432
    linear = ("--rope-scaling", json.dumps({"rope_type": "linear", "factor": 2}))
    found = rope_cache(_inputs(QWEN25_VL_7B, "0.9.2", *linear))
    assert found is not None and found[0] == 256_000 * 128 * 2
    found = rope_cache(_inputs(QWEN25_VL_7B, "0.11.0"))
    assert found is not None and found[0] == 131_072_000


def test_classes_over_qwen3_vl_layers_take_factor_one_at_v0_33() -> None:
    """v0.33.0's registry: ColQwen3 (colqwen3.py ColQwen3Model(Qwen3VLForConditionalGeneration)) builds Qwen3-VL's
    decoder layers, positions_factor 1 (qwen3_vl.py:1818-1831): 262,144 × 128 × 2 = 67,108,864 B; InternS1-Pro's own
    layers call get_rope with the default 4 (interns1_pro.py:317): 4 × that, 268,435,456 B."""
    model = load_config_file(QWEN3_VL_8B)
    for architecture, size in (("ColQwen3", 67_108_864), ("InternS1ProForConditionalGeneration", 268_435_456)):
        inputs = _inputs(QWEN3_VL_8B, "0.33.0").model_copy(update={"model": model.model_copy(
            update={"architecture": architecture})})  # fmt: skip
        found = rope_cache(inputs)
        assert found is not None and found[0] == size, architecture


def test_qwen3_vl_deepstack_buffers() -> None:
    """3 levels × max_num_batched_tokens × the text's hidden size × 2 B (qwen3_vl.py:1503-1509 at v0.19.0): the 8B's
    8,192 × 4,096 on an H200 server = 201,326,592 B; none before Qwen3-VL's class (v0.10.2) or for another tower."""
    found = deepstack_buffers(_inputs(QWEN3_VL_8B, "0.19.0", gpu="H200"))
    assert found is not None and found[0] == 3 * 8192 * 4096 * 2
    assert deepstack_buffers(_inputs(QWEN3_VL_8B, "0.10.2", gpu="H200")) is None
    assert deepstack_buffers(_inputs(QWEN25_VL_7B, "0.19.0")) is None


def test_qwen3_vl_30b_a3b_at_tp_2_holds_what_its_log_printed() -> None:
    """v0.12.0, TP 2, 8,192 batched tokens (an H100 server's default): the rope 262,144 × 4 × 128 × 2 = 268,435,456 B
    and the deepstack buffers 3 × 8,192 × 2,048 × 2 = 100,663,296 B beside the book; the plan's weights (the book,
    29.02 GiB with the plain rope's 67,108,864 B, before) then land within 0.02 GiB of the 29.3115 GiB printed."""
    inputs = _inputs(QWEN3_VL_30B, "0.12.0", "--max-num-seqs", "256", tp=2)
    held = held_beside(inputs)
    assert held is not None and held[0] == 268_435_456 + 100_663_296
    record = next(r for r in load("vllm") if r.id == "videocuttingagent-qwen3-vl-30b-a3b-2xh100-tp2-v0120")
    planned = weights_term(record)
    assert planned is not None
    assert abs(planned.bytes / GIB - record.figures["weights"] / GIB) < 0.02
    assert abs(record.figures["weights"] / GIB - 29.3115) < 1e-6


def test_qwen3_vl_8b_at_tp_1_holds_what_its_log_printed() -> None:
    """v0.19.0, TP 1, an H200 server's 8,192 batched tokens (tests/data/calibration/vllm.jsonl
    `file62110908920-qwen3-vl-8b-h200-v0190`, 'Weight load: 16.78 GB', vLLM's GiB): the book 16.39 GiB with the plain
    rope, + the rope at 4 × 262,144 positions (201,326,592 B more) + 3 × 8,192 × 4,096 × 2 = 201,326,592 B of
    deepstack buffers: within 0.02 GiB of 16.78 (before: −2.3 %)."""
    record = next(r for r in load("vllm") if r.id == "file62110908920-qwen3-vl-8b-h200-v0190")
    planned = weights_term(record)
    assert planned is not None
    assert abs(planned.bytes / GIB - 16.78) < 0.02

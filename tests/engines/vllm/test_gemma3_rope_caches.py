"""Gemma-3's two rotary caches on every vLLM rank (kvtop/domain/engines/vllm/weights_held.py `rope_cache`): the global
layers' `linear` rope (config.json rope_scaling factor 8) builds LinearScalingRotaryEmbedding, whose cos/sin cache is
max_position_embeddings × factor long (vLLM 0.9.1 layers/rotary_embedding.py:432), and the sliding layers build their
own default rope beside it (0.9.1 models/gemma3.py:155-172).

Expected values: that arithmetic (131,072 × 8 + 131,072 positions × 128 × 2 B), and the load vLLM 0.9.1 logged for
gemma-3-27b-it under --quantization fp8 on a B200 (Chris113113/vllm-sweep-benchmark, 'Model loading took 27.4321 GiB'
/ 13.9147 / 7.1363 at TP 1 / 2 / 4: the corpus records chris113113-sweep-gemma-3-27b-fp8-tp*-b200-v091).
"""

from __future__ import annotations

import pytest

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.vllm import calibration as vllm
from kvtop.domain.engines.vllm.weights_held import rope_cache
from kvtop.sources.hub import load_model
from kvtop.units import GIB
from tests.data_paths import CONFIGS

RECORDS = {record.id: record for record in load("vllm")}


def test_the_config_states_a_linear_rope_of_factor_8() -> None:
    model = load_model(str(CONFIGS / "google--gemma-3-27b-it.json"))
    assert (model.rope_type, model.rope_factor, model.max_position_embeddings) == ("linear", 8.0, 131_072)


def test_both_caches_are_held() -> None:
    found = rope_cache(RECORDS["chris113113-sweep-gemma-3-27b-fp8-tp1-b200-v091"].inputs())
    assert found is not None and found[0] == (131_072 * 8 + 131_072) * 128 * 2  # 288 MiB, was 32 MiB counted
    assert "1,048,576 positions" in found[1] and "sliding layers" in found[1]


@pytest.mark.parametrize(("tp", "logged"), [(1, 27.4321), (2, 13.9147), (4, 7.1363)])
def test_the_weights_term_lands_within_half_a_percent(tp: int, logged: float) -> None:
    """Before: −0.53 %, −1.75 %, −3.82 % (the 32 MiB cache only); the vision tower's FP8 attention is not modelled."""
    record = RECORDS[f"chris113113-sweep-gemma-3-27b-fp8-tp{tp}-b200-v091"]
    weights = {term.term: term for term in vllm.terms(record.inputs())}[Term.WEIGHTS]
    assert abs(weights.bytes / GIB / logged - 1) < 0.005


def test_the_sliding_layers_rope_is_held_from_0_8_0() -> None:
    """gemma3.py first ships in the v0.8.0 wheel (v0.7.3 has none; its registry refuses the class): the sliding
    layers' own rope from v0.8.0 (0.8.0 gemma3.py:141-159) to v0.34.0 (:154-161), not before."""
    from kvtop.domain.engines.versions import ResolvedVersion

    inputs = RECORDS["chris113113-sweep-gemma-3-27b-fp8-tp1-b200-v091"].inputs()
    both = (131_072 * 8 + 131_072) * 128 * 2
    for release, expected in (("0.8.0", both), ("0.34.0", both), ("0.7.3", 131_072 * 8 * 128 * 2)):
        found = rope_cache(inputs.model_copy(update={"version": ResolvedVersion(text=release)}))
        assert found is not None and found[0] == expected, release


def test_the_towers_fp8_attention_is_named_not_modelled() -> None:
    """Under --quantization fp8 at load vLLM holds SigLIP's qkv_proj / out_proj in FP8 (gemma3_mm.py passes the quant
    config to SiglipVisionModel; siglip.py SiglipAttention builds them with it; the 1,152 × 4,304 MLP does not divide
    by 64 and stays bf16): kvtop counts the tower in bf16 and says so; the same launch without it says nothing."""
    from kvtop.domain.engines.versions import ResolvedVersion
    from kvtop.domain.engines.vllm.tower_fp8 import tower_fp8_not_modelled
    from kvtop.domain.launch import parse_flags
    from kvtop.domain.served_model import served_model

    model = load_model(str(CONFIGS / "google--gemma-3-27b-it.json"))
    v091 = ResolvedVersion(text="0.9.1")
    fp8 = parse_flags("vllm", ["--quantization", "fp8", "--engine-version", "0.9.1"])
    said = tower_fp8_not_modelled(served_model(model, fp8, v091), fp8, v091)
    assert said is not None and "qkv_proj and out_proj in FP8" in said
    plain = parse_flags("vllm", ["--engine-version", "0.9.1"])
    assert tower_fp8_not_modelled(served_model(model, plain, v091), plain, v091) is None
    # the note's weights are in kvtop's tower at the model's dtype: its TP-split linears are, by siglip.py's layer
    # shapes (v0.9.1: QKVParallelLinear and fc1 split with their biases, out_proj's and fc2's RowParallelLinear biases
    # whole), 27 blocks of qkv + out_proj (4 × 1,152²: the 143,327,232 weights FP8 holds in 1 B), qkv's bias
    # (3 × 1,152), fc1 + fc2 (2 × 1,152 × 4,304, the MLP that stays 16-bit) and fc1's bias (4,304)
    attention = 143_327_232  # tower_fp8.py's docstring figure, 27 × 4 × 1,152²: wrong, the assertion fails
    assert model.tower is not None
    assert model.tower.tp_split_params == attention + 27 * (3 * 1152 + 2 * 1152 * 4304 + 4304)

"""The rows of vLLM's cos/sin cache for a config's own rope (kvtop/domain/engines/vllm/rope_rows.py), by type.

Expected values: each class's `_compute_cos_sin_cache` arithmetic, by hand —
YaRNScalingRotaryEmbedding: t = arange(original_max_position_embeddings × factor) (v0.11.0 yarn_scaling_rope.py:62,
v0.34.0 :78-79); DynamicNTKScalingRotaryEmbedding: arange(positions × factor) through v0.21.0 (v0.11.0
dynamic_ntk_scaling_rope.py:55-61), arange(positions) from v0.22.0 (:67); Phi3LongRoPEScaledRotaryEmbedding:
cat(short cache over the original positions, long cache over the positions) (v0.11.0
phi3_long_rope_scaled_rope.py:63-71). Each row holds the rotary width's cos and sin halves, 2 B each in bf16.
"""

from __future__ import annotations

import json

from kvtop.domain.calibration.estimate import calibration_inputs, planned_capacity
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.rope_rows import config_rope_rows
from kvtop.domain.engines.vllm.weights_held import rope_cache
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

# Qwen3-8B with the YaRN block Qwen's model card gives for 131,072 tokens (factor 4 over 32,768)
CONFIGS = DATA / "calibration" / "configs"
QWEN3_8B_YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}


def _qwen3_8b(rope: dict[str, object]) -> dict[str, object]:
    config = json.loads((CONFIGS / "Qwen--Qwen3-8B-yarn200k.RECONSTRUCTED.json").read_text())
    return config | {"max_position_embeddings": 40960, "rope_scaling": rope}


def test_qwen3_8b_with_a_yarn_block_caches_original_times_factor_rows() -> None:
    """32,768 × 4 = 131,072 rows × 128 (head_dim, whole rotary) × 2 B = 33,554,432 B, where the config's 40,960
    positions would give 10,485,760 B."""
    model = model_from_config(_qwen3_8b(QWEN3_8B_YARN))
    settings = parse_flags("vllm", ["--engine-version", "0.11.0", "--max-model-len", "32768"])
    plan = planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100")
    found = rope_cache(calibration_inputs(plan.ledger))
    assert found is not None and found[0] == 131_072 * 128 * 2 == 33_554_432
    assert "YaRNScalingRotaryEmbedding" in found[1]


def test_a_yarn_block_with_factor_one_or_below_caches_original_times_factor_rows() -> None:
    """EDITED config (Qwen3-8B's, with a YaRN block of factor 1.0, then 0.5, over 32,768 original positions; no public
    config with such a block was found): get_rope guards no factor, so YaRNScalingRotaryEmbedding builds
    arange(32,768 × 1.0) = 32,768 rows (32,768 × 128 × 2 B = 8,388,608 B, where the 40,960 positions would give
    10,485,760 B) and arange(32,768 × 0.5) = 16,384 rows (v0.11.0 yarn_scaling_rope.py:62, v0.34.0 :78-79)."""
    for factor, rows in ((1.0, 32_768), (0.5, 16_384)):
        model = model_from_config(_qwen3_8b(QWEN3_8B_YARN | {"factor": factor}))
        for release in ("0.8.5", "0.11.0", "0.34.0"):
            found = config_rope_rows(model, ResolvedVersion(text=release))
            assert found is not None and found[0] == rows and "YaRNScalingRotaryEmbedding" in found[1]
    model = model_from_config(_qwen3_8b(QWEN3_8B_YARN | {"factor": 1.0}))
    settings = parse_flags("vllm", ["--engine-version", "0.11.0", "--max-model-len", "32768"])
    plan = planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100")
    found_bytes = rope_cache(calibration_inputs(plan.ledger))
    assert found_bytes is not None and found_bytes[0] == 32_768 * 128 * 2 == 8_388_608


def test_a_yarn_block_whose_product_is_the_positions_leaves_them() -> None:
    """Qwen3-8B-yarn200k: 40,960 × 4.8828125 = 200,000, its max_position_embeddings."""
    model = model_from_config(json.loads((CONFIGS / "Qwen--Qwen3-8B-yarn200k.RECONSTRUCTED.json").read_text()))
    assert config_rope_rows(model, ResolvedVersion(text="0.11.0")) is None


def test_a_dynamic_rope_is_scaled_through_v0_21_0_and_not_from_v0_22_0() -> None:
    """InternVL2.5-8B-MPO's language model: dynamic factor 2 over 32,768 positions."""
    model = model_from_config(json.loads((CONFIGS / "OpenGVLab--InternVL2_5-8B-MPO.RECONSTRUCTED.json").read_text()))
    found = config_rope_rows(model, ResolvedVersion(text="0.21.0"))
    assert found is not None and found[0] == 65_536
    assert config_rope_rows(model, ResolvedVersion(text="0.22.0")) is None


def test_a_longrope_block_stating_its_original_caches_both() -> None:
    """4,096 short rows + 40,960 long rows."""
    rope = {"rope_type": "longrope", "short_factor": [1.0] * 64, "long_factor": [1.0] * 64,
            "original_max_position_embeddings": 4096}  # fmt: skip
    model = model_from_config(_qwen3_8b(rope))
    found = config_rope_rows(model, ResolvedVersion(text="0.34.0"))
    assert found is not None and found[0] == 4_096 + 40_960


def test_a_legacy_su_rope_is_vllms_longrope() -> None:
    """Phi-3.5-vision's config says `"type": "su"`, which vLLM renames to longrope before building it (the same rename
    the default context reads): 4,096 short rows + 131,072 long rows."""
    config = json.loads((DATA / "configs" / "heldout" / "mlc--phi-3_5-vision.json").read_text())
    found = config_rope_rows(model_from_config(config), ResolvedVersion(text="0.34.0"))
    assert found is not None and found[0] == 4_096 + 131_072 and "Phi3LongRoPEScaledRotaryEmbedding" in found[1]


def test_a_linear_or_dynamic_factor_below_one_caches_fewer_rows() -> None:
    """EDITED config (Qwen3-8B's 40,960 positions with a `linear` block of factor 0.5, then a `dynamic` one of factor
    0.75; no public config with such a block was found): get_rope passes the factor unguarded (v0.8.5
    rotary_embedding.py:1541-1551, v0.24.0 __init__.py:176-186), so LinearScalingRotaryEmbedding builds
    arange(40,960 × 0.5) = 20,480 rows (v0.24.0 linear_scaling_rope.py:90-91) — 20,480 × 128 × 2 B = 5,242,880 B, not
    the positions' 10,485,760 B — and DynamicNTKScalingRotaryEmbedding arange(40,960 × 0.75) = 30,720 rows through
    v0.21.0 (v0.8.5 :468-474), the positions from v0.22.0."""
    linear = model_from_config(_qwen3_8b({"rope_type": "linear", "factor": 0.5}))
    for release in ("0.8.5", "0.11.0", "0.24.0", "0.34.0"):
        found = config_rope_rows(linear, ResolvedVersion(text=release))
        assert found is not None and found[0] == 20_480 and "LinearScalingRotaryEmbedding" in found[1]
    settings = parse_flags("vllm", ["--engine-version", "0.11.0", "--max-model-len", "16384"])
    plan = planned_capacity(linear, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100")
    found_bytes = rope_cache(calibration_inputs(plan.ledger))
    assert found_bytes is not None and found_bytes[0] == 20_480 * 128 * 2 == 5_242_880
    dynamic = model_from_config(_qwen3_8b({"rope_type": "dynamic", "factor": 0.75}))
    found = config_rope_rows(dynamic, ResolvedVersion(text="0.21.0"))
    assert found is not None and found[0] == 30_720 and "DynamicNTKScalingRotaryEmbedding" in found[1]
    assert config_rope_rows(dynamic, ResolvedVersion(text="0.22.0")) is None


def test_a_launch_dynamic_rope_caches_positions_times_factor_through_0_21_0_and_positions_from_0_22_0() -> None:
    """Qwen3-8B (40,960 positions, head_dim 128, bf16) launched with `--hf-overrides` rope_parameters dynamic, factor
    2: DynamicNTKScalingRotaryEmbedding caches arange(40,960 × 2) = 81,920 rows at v0.21.0
    (dynamic_ntk_scaling_rope.py:56-62: max_len = max_position_embeddings × scaling_factor), arange(40,960) rows at
    v0.22.0 (:67: t = arange(self.max_position_embeddings); get_rope passes the model's max_position, __init__.py
    :212-224): 81,920 × 128 × 2 B = 20,971,520 B, then 10,485,760 B. The derived --max-model-len stays 81,920."""
    model = model_from_config(_qwen3_8b({}) | {"rope_scaling": None})
    dynamic = '{"rope_parameters": {"rope_type": "dynamic", "factor": 2.0, "rope_theta": 1000000}}'
    for release, cached in (("0.21.0", 20_971_520), ("0.22.0", 10_485_760), ("0.34.0", 10_485_760)):
        settings = parse_flags("vllm", ["--engine-version", release, "--hf-overrides", dynamic])
        plan = planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100")
        assert plan.ledger.context_length == 81_920
        found = rope_cache(calibration_inputs(plan.ledger))
        assert found is not None and found[0] == cached, release

"""The rope cache at the rotary part of the head (kvtop/domain/rope_cache.py, architectures/rotary_factor.py).

Expected values from the engines' arithmetic, not from the function: SGLang 0.5.11 rotary_embedding/factory.py:94-95
`rotary_dim = int(rotary_dim * partial_rotary_factor)` (models/qwen3_5.py:693-710 passes the config's factor; the
cache float32 on CUDA, base.py), vLLM 0.19.1 rotary_embedding/__init__.py get_rope `rotary_dim = int(head_size *
partial_rotary_factor)` from rope_parameters (the model's dtype; MRotaryEmbedding holds 4 × the positions for a
`default` rope with mrope_section, weights_buffers.py), × the config's positions.
"""

from __future__ import annotations

import json
from pathlib import Path
from tempfile import TemporaryDirectory

from benchmarks.calibration.corpus import load
from kvtop.domain.engines.sglang import weights_held as sglang
from kvtop.domain.engines.vllm import weights_held as vllm
from kvtop.domain.rope_cache import rope_cache_bytes
from kvtop.sources.hub import load_model
from tests.data_paths import DATA

CALIBRATION_CONFIGS = DATA / "calibration" / "configs"
ENGINE_DIFF_CONFIGS = DATA / "engine_diff" / "configs"
SGLANG = {record.id: record for record in load("sglang")}
VLLM = {record.id: record for record in load("vllm")}


def test_qwen3_5_9b_on_sglang_is_a_quarter_of_the_head() -> None:
    """rope_parameters.partial_rotary_factor 0.25, head 256: 262,144 × 64 × 4 B = 64 MiB (not 256 MiB)."""
    found = sglang.rope_cache(SGLANG["extious-qwen3.5-9b-dp2-a800-hicache-ctx200k"].inputs())
    assert found is not None and found[0] == 262_144 * 64 * 4 == 64 * 2**20
    assert "× 64 × 4 B" in found[1]


def test_qwen3_5_on_vllm_is_a_quarter_of_the_head() -> None:
    """Qwen3.5-27B (head 256, factor 0.25, mrope): 4 × 262,144 positions × 64 × 2 B = 128 MiB (not 512 MiB)."""
    found = vllm.rope_cache(VLLM["ramrow-foam-qwen3.5-27b-distill-4xh100-tp4-v0190"].inputs())
    assert found is not None and found[0] == 4 * 262_144 * 64 * 2


def test_qwen3_5_9b_config_reads_the_factor_in_its_rope_block() -> None:
    model = load_model(str(CALIBRATION_CONFIGS / "Qwen--Qwen3.5-9B.RECONSTRUCTED.json"))
    assert model.partial_rotary_factor == 0.25
    found = rope_cache_bytes(model, 2, "x")
    assert found is not None and found[0] == 262_144 * 64 * 2


def test_an_explicit_top_level_factor() -> None:
    """GLM-4.5-Air: partial_rotary_factor 0.5, head_dim 128, 131,072 positions: 131,072 × 64 × 2 B = 16 MiB;
    phi-2: 0.4 of a head of 2,560 ÷ 32 = 80: int(32.0) = 32 (vLLM models/phi.py:99 int(factor × head))."""
    glm = load_model(str(ENGINE_DIFF_CONFIGS / "zai-org--GLM-4.5-Air.json"))
    found = rope_cache_bytes(glm, 2, "x")
    assert found is not None and found[0] == 131_072 * 64 * 2
    phi = vllm.rope_cache(VLLM["bhatti-vllm-tutorial-phi-2-l4-v054"].inputs())
    assert phi is not None and phi[0] == 2_048 * 32 * 2


def test_the_family_default_where_the_config_states_none() -> None:
    """Qwen3NextConfig's default 0.25 (transformers 5.22.2 configuration_qwen3_next.py:128) where the key is left out."""
    config = json.loads((DATA / "configs" / "Qwen--Qwen3-Next-80B-A3B-Thinking.json").read_text())
    config.pop("partial_rotary_factor", None)
    with TemporaryDirectory() as folder:
        path = Path(folder) / "config.json"
        path.write_text(json.dumps(config))
        model = load_model(str(path))
    assert model.partial_rotary_factor == 0.25
    found = rope_cache_bytes(model, 2, "x")  # config.json: 262,144 positions, head 256 × 0.25
    assert found is not None and found[0] == 262_144 * 64 * 2


def test_a_model_without_a_factor_keeps_the_whole_head() -> None:
    """Llama-3.1-8B (no factor): 131,072 × 128 × 2 B = 32 MiB."""
    model = load_model(str(DATA / "configs" / "meta-llama--Llama-3.1-8B-Instruct.json"))
    assert model.partial_rotary_factor == 1.0
    found = rope_cache_bytes(model, 2, "x")
    assert found is not None and found[0] == 131_072 * 128 * 2

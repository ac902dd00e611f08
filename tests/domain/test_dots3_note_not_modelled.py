"""Dots3 NOTE (issue 26): kvtop refuses it as not modelled, and the vLLM 0.33.0 build it would have to equal is
pinned here by hand, so an entry has its target.

The config is tokenspeed's text section (tests/data/configs/recon/SOURCES.md). vLLM 0.33.0
models/dots3_note/nvidia/model.py builds 13 full layers (0 and i % 4 == 1) as Dots3NoteFullAttention
(DeepseekV2MLAAttention + a DSA indexer, its cache row padded by Dots3NotePaddedMLAAttention to physical_head_size =
swa_kv_lora_rank + swa_qk_rope_head_dim) and 33 as Dots3NoteSlidingAttention (dense sliding MLA of the swa_* shape):
no kvtop latent spec carries two shapes or the padded row (coverage.NOT_MODELLED).
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from kvtop.cli import main
from kvtop.domain.architectures.coverage import verdict
from tests.data_paths import DATA

CONFIG = DATA / "configs" / "recon" / "recon--tokenspeed--Dots3Note-text.json"
NAME = CONFIG.stem
BF16, FP32 = 2, 4


def _rows(engine: str) -> dict[int, dict[str, object]]:
    rows = json.loads((DATA / "engine_diff" / "registry" / f"{engine}.json").read_text())["rows"]
    return {r["tp"]: r for r in rows if r["config"] == NAME}


def test_kvtop_refuses_it_naming_what_is_missing(capsys: pytest.CaptureFixture[str]) -> None:
    assert verdict("Dots3NoteForCausalLM")[0] == "not_modelled"
    assert main(["plan", "--model", str(CONFIG), "--engine", "vllm"]) == 2
    err = capsys.readouterr().err
    assert "Dots3NoteForCausalLM (model_type 'dots3_note') is not modelled by kvtop" in err
    assert "Dots3NotePaddedMLAAttention" in err and "own latent shape" in err


@pytest.mark.parametrize("tp", [1, 2])
def test_vllm_weights_per_rank_by_hand(tp: int) -> None:
    """bf16 per rank, vLLM 0.33.0 shapes: embed and lm_head [152064 / tp, 5120]; final norm. Per layer two norms.
    Full layer (deepseek_v2.py DeepseekV2MLAAttention): fused_qkv_a [1024 + 512 + 64, 5120], q_a_layernorm 1024,
    q_b [128 / tp × 192, 1024], kv_a_layernorm 512, kv_b [128 / tp × 256, 512], o_proj [5120, 128 / tp × 128];
    model.py g_proj headwise ReplicatedLinear [128, 5120], k_rope_only_layernorm 64; indexer (deepseek_v32/
    attention.py) wq_b [64 × 128, 1024] replicated, wk_weights_proj [128 + 64, 5120], k_norm LayerNorm(128) weight
    and bias in fp32 (line 87). Sliding layer: fused_qkv_a [1024 + 1024 + 64, 5120], norms 1024 and 1024,
    q_b [64 / tp × 256, 1024], kv_b [64 / tp × 320, 1024], o_proj [5120, 64 / tp × 128], g_proj [64, 5120],
    k_rope_only_layernorm 64. Layer 0's MLP dense 13,824; layers 1-45 MoE: gate [256, 5120], e_score_correction_bias
    256 fp32, experts w13 [256, 2 × 1536 / tp, 5120] and w2 [256, 5120, 1536 / tp], shared expert 1,536 split."""
    hidden, vocab = 5120, 152064
    full = 1600 * hidden + 1024 + 1024 * (128 // tp) * 192 + 512 + 512 * (128 // tp) * 256
    full += (128 // tp) * 128 * hidden + 128 * hidden + 64
    full += 1024 * 64 * 128 + 192 * hidden  # the indexer's bf16 linears
    sliding = 2112 * hidden + 2048 + 1024 * (64 // tp) * 256 + 1024 * (64 // tp) * 320
    sliding += (64 // tp) * 128 * hidden + 64 * hidden + 64
    dense = 3 * (13824 // tp) * hidden
    moe = 256 * hidden + 3 * 256 * (1536 // tp) * hidden + 3 * (1536 // tp) * hidden
    elements = 2 * (vocab // tp) * hidden + hidden + 46 * 2 * hidden + 13 * full + 33 * sliding + dense + 45 * moe
    expected = elements * BF16 + 13 * 2 * 128 * FP32 + 45 * 256 * FP32
    assert expected == {1: 559_103_488_768, 2: 280_215_827_200}[tp]
    stages = _rows("vllm-0.33.0")[tp]["stages"]
    assert isinstance(stages, list) and [s["param_bytes"] for s in stages] == [{"language_model": expected}]


@pytest.mark.parametrize("tp", [1, 2])
def test_vllm_kv_layers_by_hand(tp: int) -> None:
    """13 full layers: an MLAAttentionSpec of 1,024 + 64 = 1,088 bf16 (2,176 B a token; unpadded it would be
    512 + 64 = 576) and an indexer key of 128 fp8 + a 4 B scale = 132 B; 33 SlidingWindowMLASpec of 1,088 bf16,
    window 513. Block 64: pages of 139,264 and 8,448 B. The same at TP 2 (MLA rows are not split over heads)."""
    stages = _rows("vllm-0.33.0")[tp]["stages"]
    assert isinstance(stages, list)
    seen: Counter[tuple[str, str, int, int | None, int]] = Counter()
    for spec in stages[0]["layer_specs"]:
        seen[spec["kind"], spec["dtype"], spec["head_size"], spec.get("sliding_window"), spec["page_size_bytes"]] += (
            spec["layers"]
        )
    assert seen == {
        ("MLAAttentionSpec", "torch.bfloat16", 1088, None, 64 * 1088 * BF16): 13,
        ("MLAAttentionSpec", "torch.uint8", 132, None, 64 * 132): 13,
        ("SlidingWindowMLASpec", "torch.bfloat16", 1088, 513, 64 * 1088 * BF16): 33,
    }


def test_sglang_needs_the_audio_section() -> None:
    """SGLang 0.5.23 refuses a config without audio_config (the sweep's rows): the text section alone is not a
    launch there."""
    rows = _rows("sglang-0.5.23")
    assert {tp: r["status"] for tp, r in rows.items()} == {1: "refused", 2: "refused"}
    assert "Missing 'audio_config'" in str(rows[1]["message"])

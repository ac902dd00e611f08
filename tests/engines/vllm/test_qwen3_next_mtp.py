"""Qwen3-Next's MTP layer where its config states no depth: vLLM's Qwen3NextMTP builds
range(getattr(config, "num_nextn_predict_layers", 1)) (model_executor/models/qwen3_next_mtp.py:60, :78-85 at
v0.21.0-v0.24.0), and Qwen3NextConfig has no such key, so `qwen3_next_mtp` loads one MTP decoder layer (its
512-expert MoE, an fc of 2 × hidden → hidden) and that layer's attention joins the target's full-attention group.

The start: kostadis/dgx-fun's spark2, Qwen3-Next-80B-A3B-Instruct-FP8 at v0.22.0 with MTP-2 (tests/data/calibration/
vllm.jsonl `kostadis-qwen3-next-80b-a3b-fp8-gb10-v0220-mtp2-…`), 'KV pool 1,010,368 tokens' = int(952 / 247 ×
262,144): 247 blocks a request = cdiv(262,144, 1,104) = 238 attention blocks + 3 GDN groups × (1 + 2 draft tokens)
('none': MambaSpec.max_memory_usage_bytes page × (1 + num_speculative_blocks), v1/kv_cache_interface.py:569 at
v0.21.0). The 12 target attention layers and the MTP layer make 13 a group (v1/core/kv_cache_utils.py
_get_kv_cache_groups_uniform_page_size: 36 GDN layers ≥ 1.5 × 13, so the least count), so 3 GDN groups of 13 with
3 padding layers. Without the MTP layer kvtop booked no draft weights and 12 layers a block: +18.49 %.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.sources.hub import load_config_file
from tests.data_paths import DATA

CONFIG = DATA / "calibration" / "configs" / "Qwen--Qwen3-Next-80B-A3B-Instruct-FP8.RECONSTRUCTED.json"
LAUNCH = ("vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct-FP8 --max-model-len 262144 --max-num-seqs 4 "
          "--gpu-memory-utilization 0.80 --kv-cache-dtype fp8 --max-num-batched-tokens 40960 --speculative-config "
          "'{\"method\": \"qwen3_next_mtp\", \"num_speculative_tokens\": 2}'")  # fmt: skip


def test_qwen3_next_config_without_a_depth_ships_one_mtp_layer() -> None:
    model = load_config_file(CONFIG)
    assert "num_nextn_predict_layers" not in json.loads(CONFIG.read_text())
    assert model.mtp_layers == 1


def test_the_mtp_layer_joins_the_attention_group_and_books_its_weights(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["plan", "--model", str(CONFIG), "--engine", "vllm", "--engine-version", "0.22.0", "--gpu", "GB10",
            "--cmd", LAUNCH, "--json"]  # fmt: skip
    assert main(args) == 0
    plan = json.loads(capsys.readouterr().out)
    steps = {step["label"].split(" (")[0]: step["note"] for step in plan["steps"]}
    assert "tokens: int(blocks ÷ 247 × 262,144)" in steps  # 238 + 3 × (1 + 2), the log's divisor
    # 13 layer slots a block of 1,104 tokens × 1,024 B (fp8, 2 KV heads × 256 × 2): the MTP layer beside the 12
    assert any(label.startswith("blocks of 1,104 tokens (14,696,448 B each") for label in
               (step["label"] for step in plan["steps"]))  # fmt: skip
    assert "mamba: 3 groups of 13 for 36 layers" in steps["blocks of 1,104 tokens"]
    mtp = next(term for term in plan["deployment"]["terms"] if term["label"].startswith("draft weights"))
    assert mtp["label"] == "draft weights: 1 MTP layer, in the weights book"
    assert mtp["bytes"] == MTP_LAYER_BYTES


# The MTP head of the published FP8 checkpoint, counted by hand from the module shapes its report prints (search-index
# id 63048263430) and its modules_to_not_convert (mtp.fc, the gates and norms BF16); FP8 128 × 128 blocks carry one
# float32 scale each. vLLM shares the target's embedding and LM head (none counted here).
_FP8_SCALES = 4 * ((8192 + 512 + 512) // 128 * 2048 // 128 + 2048 // 128 * 4096 // 128)  # qkv, o_proj: 4,608 + 2,048
_ATTENTION = 2048 * (8192 + 512 + 512) + 4096 * 2048 + _FP8_SCALES + 2 * 256 * 2  # FP8 projections, q/k norms BF16
_EXPERTS = 512 * (3 * 2048 * 512 + 4 * (1024 // 128 * 2048 // 128 + 2048 // 128 * 512 // 128))  # FP8 + scales
_SHARED = 3 * 2048 * 512 + 4 * (1024 // 128 * 2048 // 128 + 2048 // 128 * 512 // 128) + 2048 * 2  # + its BF16 gate
_ROUTER = 512 * 2048 * 2  # mlp.gate, BF16
_NORMS = 2 * 2048 * 2  # input / post-attention norms
_HEAD = 2 * 2048 * 2048 * 2 + 3 * 2048 * 2  # mtp.fc BF16 (2 × hidden → hidden), pre_fc_norm_embedding / _hidden, norm
MTP_LAYER_BYTES = _ATTENTION + _EXPERTS + _SHARED + _ROUTER + _NORMS + _HEAD
assert MTP_LAYER_BYTES == 1_660_322_048

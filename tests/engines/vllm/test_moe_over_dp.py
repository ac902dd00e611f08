"""vLLM splits a MoE's routed experts over TP × DP replicas when expert parallelism is off: its fused MoE layer
flattens TP across the DP group (v0.33.0 model_executor/layers/fused_moe/config.py FusedMoEParallelConfig.make:
`tp_size, tp_rank = flatten_tp_across_dp_and_pcp(tp_size_, dp_size_, ...)`, `flatten_tp_size = dp_size * pcp_size
* tp_size`, and `use_ep` only with enable_expert_parallel); attention and the dense layers stay split over TP.
SGLang's DP replicas (no DP attention) each hold their own TP group's split.

Qwen/Qwen3-30B-A3B (tests/data/configs): 48 MoE layers of 128 experts, each gate, up [768, 2,048] and down
[2,048, 768] in bf16: 48 × 128 × 3 × 768 × 2,048 × 2 B = 57,982,058,496 B of experts, so 28,991,029,248 B a rank
over TP 2 and 14,495,514,624 B over TP 2 × DP 2 (each expert's 768 rows as 192 a rank).
"""

from __future__ import annotations

import json
from typing import Any

from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

EXPERTS = 48 * 128 * 3 * 768 * 2048 * 2


def experts(engine: str, *flags: str) -> Any:
    m = model_from_config(json.loads((DATA / "configs" / "Qwen--Qwen3-30B-A3B.json").read_text()), source="qwen3")
    settings = parse_flags(engine, list(flags))
    ledger = predict(m, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100")
    rows = [row for row in ledger.ranks[0].weights.rows if row.component == "routed_experts"]
    return sum(row.bytes for row in rows), ledger.ranks[0].weights.total_bytes


def test_vllm_splits_each_expert_over_tp_times_dp_without_ep() -> None:
    assert EXPERTS == 57_982_058_496
    tp2, tp2_total = experts("vllm", "--tp", "2", "--engine-version", "0.33.0")
    dp2, dp2_total = experts("vllm", "--tp", "2", "--dp", "2", "--engine-version", "0.33.0")
    assert (tp2, dp2) == (EXPERTS // 2, EXPERTS // 4)
    assert tp2_total - dp2_total == EXPERTS // 4  # only the experts move: attention and the rest stay over TP 2
    ep, _ = experts("vllm", "--tp", "2", "--dp", "2", "--enable-expert-parallel", "--engine-version", "0.33.0")
    assert ep == EXPERTS // 4  # whole experts, 32 a rank over the same four ranks


def test_sglang_replicas_keep_their_own_tp_split() -> None:
    tp2, _ = experts("sglang", "--tp", "2", "--engine-version", "0.5.23")
    dp2, _ = experts("sglang", "--tp", "2", "--dp", "2", "--engine-version", "0.5.23")
    assert tp2 == dp2 == EXPERTS // 2

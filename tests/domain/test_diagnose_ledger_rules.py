"""diagnose() on what the ledger alone says (rules 6-11): KV dtype, TP above the KV heads, MLA under attention TP,
the request table, the Mamba state pool, vLLM's hybrid manager.

The node is tests/diagnose_node.py's (Meta-Llama-3-70B at TP8 on eight H100s). Token figures are asserted against
predict() re-solved by hand.
"""

from __future__ import annotations

import pytest

from kvtop.domain.diagnose import Severity, diagnose_ledger
from kvtop.domain.ledger import predict
from tests.diagnose_node import (
    H100,
    H200,
    ledger,
    llama,
    only,
)

# --- rules 6-11: what the ledger alone says ---------------------------------------------------


def test_bf16_kv_advice_states_the_fp8_gain_and_the_quality_caveat() -> None:
    plan = llama()
    (finding,) = diagnose_ledger(plan)
    fp8 = predict(
        plan.model, plan.settings.model_copy(update={"kv_cache_dtype": "fp8_e4m3"}), gpu_total_bytes=H100
    )
    assert finding.rule == "bf16_kv_where_fp8_supported" and finding.severity is Severity.INFO
    assert (
        finding.gain_tokens == fp8.token_capacity - plan.token_capacity
        and finding.fix == "--kv-cache-dtype fp8_e4m3"
    )
    assert any("quality" in fact for fact in finding.evidence)
    assert diagnose_ledger(llama("sglang", "--kv-cache-dtype", "fp8_e4m3")) == ()


def test_tp_above_kv_heads_recomputes_with_dp_attention() -> None:
    plan = ledger("Qwen--Qwen3-235B-A22B.json", "sglang", "--tp", "8", gpu=H200)  # 4 KV heads
    finding = only(diagnose_ledger(plan), "tp_above_kv_heads")
    alt = ledger(
        "Qwen--Qwen3-235B-A22B.json", "sglang", "--tp", "8", "--dp", "2", "--enable-dp-attention", gpu=H200
    )
    assert finding.fix == "--tp-size 8 --dp-size 2 --enable-dp-attention"
    # 1,300,087 before session 62 r2: Qwen2MoeModel's embedding is over attention TP (8 ÷ 2) under DP attention from
    # SGLang 0.5.9 (qwen2_moe.py:577; sglang/vocab_split.py), 151,936 × 4,096 × 2 B ÷ 4, no longer ÷ 8
    assert finding.gain_tokens == 2 * alt.token_capacity - plan.token_capacity == 1_293_621
    assert finding.severity is Severity.WARNING
    assert "tp_above_kv_heads" not in {
        f.rule for f in diagnose_ledger(llama())
    }  # 8 heads over TP8: no copies


def test_tp_above_kv_heads_without_a_better_layout_is_advice() -> None:
    plan = ledger("Qwen--Qwen3-235B-A22B.json", "sglang", "--tp", "8")  # on H100 TP4 replicas do not fit
    finding = only(diagnose_ledger(plan), "tp_above_kv_heads")
    assert finding.severity is Severity.INFO and finding.tokens == 0


@pytest.mark.parametrize(
    ("engine", "fix", "alt_flags"),
    [
        (
            "sglang",
            "--tp-size 8 --dp-size 8 --enable-dp-attention",
            ["--tp", "8", "--dp", "8", "--enable-dp-attention"],
        ),
        (
            "vllm",
            "--data-parallel-size 8 --enable-expert-parallel",
            ["--dp", "8", "--enable-expert-parallel"],
        ),
    ],
)
def test_mla_under_attention_tp_recomputes_with_dp_attention(
    engine: str, fix: str, alt_flags: list[str]
) -> None:
    plan = ledger("deepseek-ai--DeepSeek-V3.json", engine, "--tp", "8", gpu=H200)
    finding = only(diagnose_ledger(plan), "mla_under_attention_tp")
    alt = ledger("deepseek-ai--DeepSeek-V3.json", engine, *alt_flags, gpu=H200)
    assert finding.fix == fix and finding.severity is Severity.WARNING
    assert finding.gain_tokens == 8 * alt.token_capacity - plan.token_capacity > 2 * plan.token_capacity
    spread = alt
    assert "mla_under_attention_tp" not in {f.rule for f in diagnose_ledger(spread)}


def test_large_req_to_token_table_names_the_max_running_requests_that_frees_it() -> None:
    plan = ledger("meta-llama--Llama-3.1-8B-Instruct.json", "sglang")  # 131,072 context × 2,048 requests
    finding = only(diagnose_ledger(plan), "req_to_token_large")
    assert finding.bytes == plan.engine.req_to_token_bytes == 2049 * 131076 * 4
    # SGLang's argparse takes options in any order (server_args.py, 0.5.5 wheel: --mem-fraction-static type=float at
    # :2094-2097, as tests/domain/test_fix_spelling.py cites): the two options and their values are checked, not the
    # writer's order (the figures 0.844 and 512 are the fixed ledger's above)
    words = finding.fix.split()
    assert dict(zip(words[::2], words[1::2], strict=True)) == {"--mem-fraction-static": "0.844", "--max-running-requests": "512"}
    fixed = predict(
        plan.model,
        plan.settings.model_copy(update={"max_running_requests": 512, "mem_fraction_static": 0.844}),
        gpu_total_bytes=H100,
    )
    assert finding.gain_tokens == fixed.token_capacity - plan.token_capacity > 0
    assert "req_to_token_large" not in {f.rule for f in diagnose_ledger(llama())}  # 8,192 context: 134 MB


def test_mamba_state_pool_capping_running_requests_is_named() -> None:
    plan = ledger("Qwen--Qwen3-Next-80B-A3B-Thinking.json", "sglang", "--tp", "4")
    finding = only(diagnose_ledger(plan), "mamba_state_caps_requests")
    assert plan.engine.max_running_requests == 242 and "242" in finding.summary
    assert finding.fix == "--disable-radix-cache" and finding.bytes == plan.engine.state_pool_bytes
    # SGLang 0.5.9 (handle_max_mamba_cache): K = int(share // per_req), share = rest × 0.9 ÷ 1.9 (the mamba
    # full-memory ratio) with rest = 84,447,068,160 − 39,925,738,176 weights (Qwen3-Next's gated q_proj counted,
    # as the engines build it) − 14,862,683,996 reserve: int(14,048,832,310.1 // 19,316,736) = 727 slots, 3 per
    # request with the radix cache (242), 1 without it (727)
    assert any("727 running requests" in fact for fact in finding.evidence)
    assert any("3 state slots" in fact for fact in finding.evidence)


def test_vllm_hybrid_kv_manager_disabled_costs_swa_layers_full_length() -> None:
    plan = ledger("google--gemma-3-27b-it.json", "vllm", "--tp", "2", "--disable-hybrid-kv-cache-manager")
    finding = only(diagnose_ledger(plan), "hybrid_kv_manager_disabled")
    enabled = ledger("google--gemma-3-27b-it.json", "vllm", "--tp", "2")
    # 1 full + 6 SWA groups of 10: 8,192 + 6 × (cdiv(1,023 + 2 × 8,192 in flight, 16) + 1) = 14,726 blocks a
    # request (async scheduling's 2 batches, vLLM's default: docs/engines/vllm.md §3). The weights hold
    # Gemma-3's four norms a layer (input, post-attention, pre- and post-feedforward: Gemma3DecoderLayer) and
    # the SigLIP tower and projector vLLM builds on every rank: 422,452,080 + 12,388,608 B at TP 2
    # (test_vision_towers.test_gemma3_siglip_tower_by_hand), which the KV budget loses
    assert finding.gain_tokens == enabled.token_capacity - plan.token_capacity == 666_655 - 193_280
    assert finding.fix_settings is not None and not finding.fix_settings.disable_hybrid_kv_cache_manager
    assert "hybrid_kv_manager_disabled" not in {f.rule for f in diagnose_ledger(enabled)}

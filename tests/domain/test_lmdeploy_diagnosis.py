"""LMDeploy's fixes in its own flags (kvtop/domain/engines/lmdeploy/diagnosis.py), from a plan alone."""

from __future__ import annotations

from kvtop.domain.diagnose import diagnose_ledger
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS


def test_a_truncated_session_length_names_the_share_that_holds_it() -> None:
    """Case 3950's node (free 1.7925 GiB, int4 KV, 884,736 B blocks): 0.8 → 1,740 blocks = 111,360 tokens <
    131,072; 0.85 → 1,849 and 0.9 → 1,957 blocks still fall short; 0.95 → 2,066 blocks = 132,224 tokens."""
    free = int(1.7925 * GIB)
    ledger = predict(
        load_model(str(CONFIGS / "openai--gpt-oss-20b.json")),
        parse_flags("lmdeploy", ["--quant-policy", "4", "--engine-version", "0.10.0"]),
        gpu_total_bytes=8 * GIB, measured=MeasuredInputs(free_after_load_bytes=free),
    )  # fmt: skip
    assert [int(free * r) // 884_736 for r in (0.85, 0.9, 0.95)] == [1_849, 1_957, 2_066]
    finding = next(f for f in diagnose_ledger(ledger) if f.rule == "session_len_truncated")
    assert finding.summary == "session_len 131,072 does not fit: LMDeploy truncates it to 111,360 tokens"
    assert (finding.fix, finding.gain_tokens) == ("--cache-max-entry-count 0.95", 2_066 * 64 - 111_360)


def test_bf16_kv_advice_is_lmdeploys_int8_policy_not_an_fp8_flag() -> None:
    """The generic FP8 rule would write `--kv-cache-dtype`, a flag LMDeploy lacks: LMDeploy's own rule says
    `--quant-policy 8` (int8 + a bf16 scale and zero per token-head: 128 + 4 B vs 256 B per head per K/V)."""
    ledger = predict(
        load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")), parse_flags("lmdeploy", ["--engine-version", "0.10.0"]),
        gpu_total_bytes=80 * GIB, measured=MeasuredInputs(free_after_load_bytes=60 * GIB),
    )  # fmt: skip
    rules = {f.rule: f for f in diagnose_ledger(ledger)}
    assert "bf16_kv_where_fp8_supported" not in rules
    advice = rules["bf16_kv_where_int8_supported"]
    assert advice.fix == "--quant-policy 8" and advice.fix_settings is not None
    assert f"{32 * 8 * 2 * 128 * 2:,} B → {32 * 8 * 2 * (128 + 4):,} B" in advice.evidence[0]

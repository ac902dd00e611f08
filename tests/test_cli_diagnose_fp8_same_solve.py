"""Both sides of diagnose's FP8 KV advice come from one solve: the re-solve at FP8 keeps the speculative draft.

Before, the modern-deployment demo's SGLang engine (Qwen3-235B-A22B TP 4 with an EAGLE3 draft,
examples/scenarios/modern-deployment.json) was advised "capacity 117,552 → 263,185 tokens per rank" (× 2.24): the
what-if at FP8 re-solved the calibrated launch without its draft, so it no longer charged the draft's weights
(682,917,888 B per rank) and the extra KV budget showed up as tokens. The KV cell by hand from the config
(tests/data/configs: 94 layers, 4 KV heads of 128, bf16; TP 4 → 1 head per rank): 94 × 2 × 128 × 2 B = 48,128 B,
and the draft's one layer 2 × 128 × 2 B = 512 B, pooled with the target's (SGLang): 48,640 B; FP8 halves both,
24,320 B. The budget does not depend on the KV dtype, so the tokens at FP8 are twice the tokens at bf16
(each the budget ÷ the cell, floored: 5,717,744,798 B ÷ 48,640 = 117,552; ÷ 24,320 = 235,104).
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main


def test_sglang_s_fp8_advice_doubles_with_its_draft_kept(capsys: pytest.CaptureFixture[str]) -> None:
    # 0, or 1 where the demo's tick shows a problem finding (commands/diagnose.py): the advice is the same either way
    assert main(["--demo", "modern-deployment", "diagnose", "--json"]) in (0, 1)
    advice = json.loads(capsys.readouterr().out)["advice"]
    fp8 = next(f for f in advice if f["rule"] == "bf16_kv_where_fp8_supported" and f["engine_id"].startswith("sglang"))
    assert fp8["evidence"][:2] == [
        "KV bytes per token per rank: 48,640 B (bf16) → 24,320 B (FP8)",
        "capacity 117,552 → 235,104 tokens per rank",
    ]
    assert fp8["gain_tokens"] == 235_104 - 117_552

"""MiMo-V2's own attention backend and fp8_e5m2 KV (backends.py, DIFFKV_FA_ERAS).

MiMoV2Attention (vLLM 0.33.0 vllm/model_executor/models/mimo_v2.py) runs its K 192 / V 128 layers on
FLASH_ATTN_DIFFKV wherever FA3/4 is usable, whatever the KV dtype, and the FlashAttention impl takes no fp8_e5m2
(fa_utils.flash_attn_supports_kv_cache_dtype returns False for it). Expected: the committed engine run
(tests/data/engine_diff/vllm-0.33.0.flags.json, row XiaomiMiMo--MiMo-V2-Flash / fp8_e5m2, TP 2 on sm90), which
refused with NotImplementedError.
"""

from __future__ import annotations

import json

from benchmarks.engine_diff.kvtop_side import kvtop_plan
from tests.data_paths import DATA


def test_mimo_v2_flash_with_fp8_e5m2_is_refused_on_hopper_as_vllm_refuses_it() -> None:
    rows = json.loads((DATA / "engine_diff" / "vllm-0.33.0.flags.json").read_text())["results"]
    row = next(r for r in rows if r["config"] == "XiaomiMiMo--MiMo-V2-Flash" and r["variant"] == "fp8_e5m2")
    assert (row["status"], row["error_type"]) == ("refused", "NotImplementedError")
    assert row["message"] == "FlashAttention does not support fp8_e5m2 kv-cache on this device."
    plan = kvtop_plan("vllm", "0.33.0", row)
    assert plan["status"] == "refused"
    assert plan["message"].startswith("--kv-cache-dtype: vLLM 0.33.0 refuses fp8_e5m2 KV for MiMoV2FlashForCausalLM")
    assert "(192 and 128)" in plan["message"] and row["message"] in plan["message"]

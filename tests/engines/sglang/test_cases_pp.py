"""A real SGLang pipeline-parallel startup (issue #28, class 5): Mistral-Small-3.1 at PP 4 (PR #14254's log).

Expected figures are the log's prints and the KV arithmetic on the model's config (40 layers, 8 KV heads ×
128, FP16), never kvtop's output.
"""

from __future__ import annotations

import json

from kvtop.domain.wording import GIB
from tests.cli_in_process import run_kvtop
from tests.conftest import CASES, CONFIGS

CASE = CASES / "sglang" / "sglang-pr14254-mistral-small31-pp4"
CONFIG = CONFIGS / "heldout" / "mistralai--Mistral-Small-3.1-24B-Instruct-2503.json"
K_BYTES_PER_TOKEN = 40 * 8 * 128 * 2  # every one of the 40 layers, FP16: not a stage's 10


def explain_json() -> dict:
    result = run_kvtop("explain", str(CASE / "engine.log"), "--model", str(CONFIG), "--json")  # fmt: skip
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_every_pp4_stage_sizes_k_and_v_for_all_40_layers() -> None:
    """`KV Cache is allocated. #tokens: 351850, K size: 26.84 GB` on each of PP0–PP3: (351,850 + 1 padding row) ×
    81,920 B = 26.844 GiB, which only the whole model's 40 layers give (a stage's 10 would print 6.71)."""
    out = explain_json()
    assert out["engine_version"] == "0.5.5.post3"  # the release out on the log's date, 2025-12-01
    assert out["logged"]["token_capacity"] == 351_850
    assert (351_850 + 1) * K_BYTES_PER_TOKEN == 28_823_633_920  # 26.8441 GiB, printed 26.84
    for check in out["pool_checks"]:
        assert check["name"] in ("K", "V") and check["logged_text"] == "26.84"
        assert check["predicted_bytes_per_token"] == K_BYTES_PER_TOKEN and check["within_rounding"]
    assert out["predicted"]["kv_bytes_per_token"] == 2 * K_BYTES_PER_TOKEN


def test_the_hidden_stages_least_free_memory_is_the_estimated_input() -> None:
    """PP0's own figures give 351,725–351,816 tokens ((69.15 − 77.37 × 0.2) GiB ÷ 163,840 B); the engine's 351,850
    is 34 more. SGLang takes the least free memory over every stage (`get_available_gpu_memory(distributed=True,
    cpu_group=world group)`), and the excerpt shows only PP0's load line: the least pre-load free memory over
    the stages is the estimated input. By SGLang's formula the logged pool needs pre = (69.15 GiB − 351,850 ×
    163,840 B) ÷ 0.2 = 77.3098 GiB, inside [69.15 (free after the load), 77.37 (PP0's)]: a match with an
    estimated input (before: a mismatch by +34 tokens with an unknown cause)."""
    out = explain_json()
    assert out["verdict"] == "match"
    estimated = out["estimated"]
    assert estimated["field"] == "free_before_load_bytes" and estimated["source"] == "assumed"
    implied = (69.15 * GIB - 351_850 * 2 * K_BYTES_PER_TOKEN) / (1 - 0.8)
    assert abs(implied - 77.3098 * GIB) < 0.0001 * GIB
    assert abs(estimated["implied_bytes"] - implied) <= 1 << 20  # kvtop solves to the MiB
    assert estimated["high_bytes"] == round(77.37 * GIB) and estimated["low_bytes"] == round(69.15 * GIB)
    assert out["predicted"]["token_capacity_min"] <= 351_850 <= out["predicted"]["token_capacity_max"]

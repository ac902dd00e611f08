"""The window vLLM's spec of a sliding layer holds, as kvtop's vLLM rules give it (engines/vllm/windows.py), and the
registry judge's comparison of it (benchmarks/engine_diff/architectures.py `window_differences`).

Oracle: the engines' meta builds (tests/data/engine_diff/registry/vllm-0.33.0.json, registry_sweep.py `--set classes`)
of the composed configs tests/data/engine_diff/registry/configs/{Cohere2ForCausalLM,MiMoV2ForCausalLM}.json (SOURCES.md
beside them); the figures below are written out from vLLM 0.33.0's code, never from kvtop.

- Cohere-2: commandr.py:237-244 builds a sliding layer at `config.sliding_window + 1` ("cohere swa layer sees
  [pos - sliding_window, pos]"): SlidingWindowSpec.sliding_window 4,097 for the config's 4,096; cohere2_moe.py:256
  the same for Cohere2MoeForCausalLM. First in the v0.29.0 wheel; v0.13.0 … v0.28.0's commandr.py:190 passes the
  config's own.
- MiMo-V2: mimo_v2.py:416 passes `config.sliding_window_size` (128 in the composed config, whose `sliding_window` is
  129: transformers' MiMoV2FlashConfig default); SGLang 0.5.23 mimo_v2.py:891 reads the same field.
"""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.engine_diff.architectures import window_differences
from benchmarks.engine_diff.registry_judge import judge, kvtop_answer
from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.wording import GIB

BLOCK = 16
COHERE2 = ("default--Cohere2ForCausalLM", "default--Cohere2MoeForCausalLM", "default--Cohere2VisionForConditionalGeneration")


def _row(config: str, tp: int) -> dict[str, Any]:
    return row_of("vllm", "0.33.0", config, tp)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _windows(row: dict[str, Any]) -> set[int]:
    return {s["sliding_window"] for s in row["stages"][0]["layer_specs"] if s["kind"] == "SlidingWindowSpec"}


@pytest.mark.parametrize("config", COHERE2)
@pytest.mark.parametrize("tp", [1, 2])
def test_cohere2_window_is_the_config_window_plus_the_query(config: str, tp: int) -> None:
    row = _row(config, tp)
    assert row["status"] == "ok" and _windows(row) == {4096 + 1}  # commandr.py:244 / cohere2_moe.py:256
    plan = kvtop_answer("vllm", "0.33.0", row)
    assert plan["spec_window"] == 4097
    assert judge("vllm", "0.33.0", row).verdict == "equal"


@pytest.mark.parametrize("tp", [1, 2])
def test_cohere2_window_blocks_a_request_follow_the_spec_window(tp: int) -> None:
    """Where the in-flight tokens are 1 more than a multiple of 16, the +1 is one more block a sliding group."""
    row = {**_row("default--Cohere2ForCausalLM", tp), "flags": [
        "--no-async-scheduling", "--max-num-batched-tokens", "2049"]}  # fmt: skip
    plan = kvtop_answer("vllm", "0.33.0", row)
    # 40 layers, 3 sliding then 1 full: 10 full, 30 sliding; 64 KV heads × 128, bf16: a page of K and V for 16 tokens
    page = BLOCK * 2 * (64 // tp) * 128 * 2  # TP 1: 524,288 B (the meta build's page_size_bytes)
    assert {s["page_size_bytes"] for s in row["stages"][0]["layer_specs"]} == {page}
    # kv_cache_utils: group size 10 (the least count, 30 ≥ 1.5 × 10): 1 full group, 3 sliding; the sweep's 40 GiB
    # of KV (cases.VLLM_KV_BYTES) over one block of each of 10 layers: 8,192 blocks at TP 1, 16,384 at TP 2
    blocks = 40 * GIB // (page * 10)
    assert plan["num_blocks"] == blocks
    # kv_cache_interface.py:918-944 SlidingWindowSpec.max_admission_blocks_per_request: cdiv(min(window − 1 + in
    # flight, L), 16) + 1, in flight 1 batch (async scheduling off) × 2,049; full: cdiv(L, 16); L = 8,192
    in_flight, length = 2049, 8192
    per_request = _cdiv(length, BLOCK) + 3 * (_cdiv(min(4097 - 1 + in_flight, length), BLOCK) + 1)
    assert per_request == 512 + 3 * 386  # 1,670 (the config's 4,096 would give 3 × 385: 1,667)
    assert plan["tokens"] == int(blocks / per_request * length)  # TP 1: 40,184 (40,257 at a window of 4,096)


@pytest.mark.parametrize("tp", [1, 2])
def test_mimo_v2_window_is_sliding_window_size(tp: int) -> None:
    row = _row("default--MiMoV2ForCausalLM", tp)
    assert row["status"] == "ok" and _windows(row) == {128}  # mimo_v2.py:416 config.sliding_window_size
    assert kvtop_answer("vllm", "0.33.0", row)["spec_window"] == 128
    assert judge("vllm", "0.33.0", row).verdict == "equal"


def test_judge_names_a_window_kvtop_does_not_hold() -> None:
    """The comparison itself: a sliding pool both sides hold, the engine's window against kvtop's."""
    specs = [{"kind": "SlidingWindowSpec", "sliding_window": 4097, "layers": 3},
             {"kind": "FullAttentionSpec", "layers": 1},
             {"kind": "ChunkedLocalAttentionSpec", "attention_chunk_size": 8192, "layers": 1}]  # fmt: skip
    assert window_differences(0, specs, {"full", "swa"}, {"spec_window": 4096}) == [
        "stage 0 KV swa window (tokens): kvtop 4096, engine 4097, 8192"
    ]
    assert window_differences(0, specs[:2], {"full", "swa"}, {"spec_window": 4097}) == []
    assert window_differences(0, specs[:2], {"full"}, {"spec_window": None}) == []  # no pool of kvtop's: told apart


@pytest.mark.parametrize(("version", "window"), [("0.13.0", 4096), ("0.28.0", 4096), ("0.29.0", 4097)])
def test_cohere2_window_is_the_config_window_before_v0_29(version: str, window: int) -> None:
    """commandr.py:190 passes config.sliding_window itself in every wheel v0.13.0 … v0.28.0; the v0.29.0 wheel's
    commandr.py:245 (cohere2_moe.py:211) is the first with `config.sliding_window + 1` (WINDOW_PLUS_QUERY_ERAS)."""
    plan = kvtop_answer("vllm", version, _row("default--Cohere2ForCausalLM", 1))
    assert plan["status"] == "ok" and plan["spec_window"] == window


def test_the_spec_window_is_a_vllm_reading_only() -> None:
    """vLLM's harness spec names the reading (engines.py VLLM.plan_readings); SGLang's meta rows record no spec window,
    so its kvtop row carries none (the harness asks no engine's name)."""
    row = row_of("sglang", "0.5.23", "default--Cohere2ForCausalLM", 1)
    plan = kvtop_answer("sglang", "0.5.23", row)
    assert plan["status"] == "ok" and "spec_window" not in plan and "dsv4_specs" not in plan

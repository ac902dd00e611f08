"""A pipeline-parallel start's logged KV figure is one stage's, or the least over the stages (corpus `kv_stage`).

vLLM's workers each profile and log their own stage's KV memory, and the engine pools the least of the stages' blocks
(v1/core/kv_cache_utils.py:2210-2222 at v0.27.1; vllm-project/vllm#32105). The judge compares a stage's figure with
that stage's budget (benchmarks/calibration/evaluate.py `at_logged_stage`, which `blind` applies). The launch is
kubesimplify's Qwen3-235B-A22B-Instruct-2507-FP8 at PP 4 on RTX PRO 6000s (corpus record
`kubesimplify-qwen3-235b-a22b-2507-fp8-4xrtxpro6000-pp4-v0271`): 94 layers over stages of 23, 24, 24 and 23, every
stage holding the embedding and the head (qwen3_moe.py builds both with no PP guard, lines 466 and 578 at v0.27.1),
so a middle stage's budget is one decoder layer's weights below an end stage's. That layer, from the config
(hidden 4,096, 128 experts of 1,536, 64 query and 4 KV heads of 128, FP8 with 128 × 128 block scales in float32, the
router and norms in bf16), is the expected shift.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.calibration.corpus import resolve
from benchmarks.calibration.evaluate import Judged, at_logged_stage
from kvtop.domain.wording import GIB
from tests.data_paths import DATA

MIB = 1 << 20
RECORD = "kubesimplify-qwen3-235b-a22b-2507-fp8-4xrtxpro6000-pp4-v0271"

EXPERTS = 128 * 3 * 1536 * 4096 + 128 * ((3072 // 128) * (4096 // 128) + (4096 // 128) * (1536 // 128)) * 4
ATTENTION = 4096 * (8192 + 512 + 512) + 8192 * 4096 + ((9216 // 128) * (4096 // 128) + (4096 // 128) * (8192 // 128)) * 4
ONE_LAYER = EXPERTS + ATTENTION + 128 * 4096 * 2 + 2 * 4096 * 2 + 2 * 128 * 2  # + router, layer norms, q/k norms


def raw_record(**update: object) -> dict[str, object]:
    for line in (DATA / "calibration" / "vllm.jsonl").read_text().splitlines():
        raw = json.loads(line)
        if raw["id"] == RECORD:
            logged = {"kv": "26.84", "weights": raw["logged"]["weights"]}  # the post's KV per GPU; no pool tokens
            return {**raw, "logged": logged, **update}
    raise AssertionError(RECORD)


def judged(stage: object) -> Judged:
    record = resolve(raw_record(kv_stage=stage))
    return Judged(record, "KV GiB", truth=26.84, predicted=28.0, low=26.0, high=30.0, dominant="—")


def staged(judged: Judged) -> Judged:
    """`at_logged_stage` with the launch's own plan (`blind` hands it the plan it judged)."""
    ledger = judged.record.ledger()
    assert ledger is not None
    return at_logged_stage(judged, ledger)


def test_a_middle_stage_is_judged_one_layer_below_an_end_stage() -> None:
    end, middle, least = (staged(judged(stage)) for stage in (0, 1, "min"))
    assert end is not None and middle is not None and least is not None
    assert (end.predicted, end.low, end.high) == (28.0, 26.0, 30.0)  # stage 0 is the plan's reported stage
    shift = (middle.predicted - end.predicted) * GIB
    assert abs(shift + ONE_LAYER) < MIB
    assert middle.high - middle.low == pytest.approx(4.0)  # the interval moves with it
    assert least.predicted == pytest.approx(middle.predicted)  # the least budget is a middle stage's


def test_without_a_stage_or_on_tokens_nothing_moves() -> None:
    plain = Judged(resolve(raw_record()), "KV GiB", truth=26.84, predicted=28.0, low=26.0, high=30.0, dominant="—")
    assert staged(plain) == plain
    tokens = Judged(resolve(raw_record(kv_stage=1)), "tokens", 555680, 600000, 550000, 650000, "—")
    assert staged(tokens) == tokens


@pytest.mark.parametrize("stage", [4, -1, "last", True])
def test_a_stage_the_launch_lacks_is_refused(stage: object) -> None:
    with pytest.raises(ValueError, match="kv_stage"):
        resolve(raw_record(kv_stage=stage))


def test_a_one_stage_start_takes_no_stage() -> None:
    with pytest.raises(ValueError, match="pp > 1"):
        resolve(raw_record(kv_stage=0, pp=1))

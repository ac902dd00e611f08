"""The budget's `− weights` line says where its figure came from, as the terms table says it.

`kvtop plan` printed the weights term as calibrated in its "Before the start" table and the same bytes in its
budget with no source, as if a fact; a figure a person sees states measured, calibrated or assumed. Llama-3-70B
at TP 8 on H100 (the bundled name): 70,553,706,496 parameters, the 80 × 2 + 1 norms of 8,192 (1,318,912) whole on
every rank and the rest split 8 ways, 2 B each: 17,640,734,720 B a rank; each engine holds its rope's cos/sin cache
beside them, vLLM in the model's dtype (8,192 positions × 128 dims × 2 B), SGLang in float32 (8,192 × 128 × 4 B).
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.calibrated_figures import SGLANG_LLAMA_70B_SEGMENT_TAILS


def plan_json(capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, object]:
    assert main(["plan", "--model", "llama-3-70b", "--tp", "8", "--gpu", "H100", "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def weights_step(plan: dict[str, object]) -> dict[str, object]:
    [step] = [step for step in plan["steps"] if step["label"] == "− weights"]  # type: ignore[union-attr,index]
    return step  # type: ignore[no-any-return]


BOOK = (70_553_706_496 - 1_318_912) * 2 // 8 + 1_318_912 * 2


SGLANG_BESIDE = 8_192 * 128 * 4 + SGLANG_LLAMA_70B_SEGMENT_TAILS[8]  # the rope cache and the allocator's tails


@pytest.mark.parametrize(("engine", "weights"), [("sglang", BOOK + SGLANG_BESIDE), ("vllm", BOOK + 8_192 * 128 * 2)])
def test_a_plan_s_weights_line_is_the_weights_term_and_says_calibrated(
    capsys: pytest.CaptureFixture[str], engine: str, weights: int
) -> None:
    plan = plan_json(capsys, "--engine", engine)
    [term] = [term for term in plan["terms"] if term["term"] == "weights"]  # type: ignore[union-attr,index]
    step = weights_step(plan)
    assert -step["bytes"] == term["bytes"] == weights
    assert step["source"] == term["source"] == "calibrated" and step["measured"] is False


def test_weights_the_operator_measured_say_measured(capsys: pytest.CaptureFixture[str]) -> None:
    step = weights_step(plan_json(capsys, "--weights-memory", "16.5GiB"))
    assert step["measured"] is True and step["source"] is None  # printed as "measured"
    assert -step["bytes"] == round(16.5 * 2**30)

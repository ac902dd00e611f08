"""explain labels the logged weights in the engine's own words (the line it read them from), set by each engine's
explainer (`Logged.weights_label`): TensorRT-LLM's figure is never shown under SGLang's "weights (mem usage)".

Real logs (tests/data/cases/trtllm, case.json beside each names its source):
- TensorRT-LLM#5872: no profile line; the creation summary `Model: 139.55 / 110.70` gives 139.55 − 110.70 = 28.85 GiB.
- DGX Spark gpt-oss-120b (1.1.0rc3): `Memory used after loading model weights (inside torch) ...: 63.52 GiB`.
"""

from __future__ import annotations

from kvtop.commands.explain import explanation_text
from kvtop.domain.explain import explain
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.launch import parse_flags
from kvtop.sources.engine_logs import read_engine_log
from kvtop.sources.hub import load_model
from tests.conftest import CASES, CONFIGS


def _text(case: str, config: str, *flags: str) -> str:
    log = read_engine_log(CASES / "trtllm" / case / "engine.log")
    settings = parse_flags("trtllm", list(flags))
    result = explain(ExplainRequest(log=log, model=load_model(str(CONFIGS / config)), settings=settings))
    return explanation_text(result, [], "engine.log")


def test_trtllm_model_line_weights_are_labelled_by_that_line() -> None:
    text = _text("trtllm-5872-qwen3-235b-kv-not-created", "Qwen--Qwen3-235B-A22B-FP8.json", "--tp_size", "8", "--ep_size", "8")
    (line,) = [row for row in text.splitlines() if row.strip().startswith("weights")]
    assert line.split()[:3] == ["weights", "(Model:", "line)"] and line.endswith("(28.85 GiB)")
    assert "mem usage" not in text


def test_trtllm_profiled_weights_are_labelled_inside_torch() -> None:
    text = _text("trtllm-dgxspark-gptoss120b-v110rc3", "openai--gpt-oss-120b.json")
    (line,) = [row for row in text.splitlines() if row.strip().startswith("weights")]
    assert line.split()[:3] == ["weights", "(inside", "torch)"] and line.endswith("(63.52 GiB)")
    assert "mem usage" not in text

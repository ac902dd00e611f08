"""The registry sweep's vLLM rows that say the engine cannot build a config (benchmarks/engine_diff/
vllm_config_failures.py, matched by the engine-neutral engine_failures.py that SGLang's list uses too): the reason's
premise holds in the config the engine was given, and a failure a stand-in causes is never taken for the engine's.

The rows are vLLM 0.33.0's own answers (tests/data/engine_diff/registry/vllm-0.33.0.json, `registry_sweep.py --engine
vllm --set classes --only default--Step3p7ForConditionalGeneration`, run on meta); the premise is read from the
config file itself (the class default under tests/data/engine_diff/registry/configs), not from the harness.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from benchmarks.engine_diff.registry_configs import DEFAULT_CONFIGS
from benchmarks.engine_diff.registry_judge import BOTH_REFUSE, judge
from benchmarks.engine_diff.registry_sweep import load_rows

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks" / "engine_diff"))  # the runner's modules import each other by name

from engine_failures import known_failure  # noqa: E402
from vllm_config_failures import CANNOT, ENGINE_FAILURES, VLLM_SOURCE, classify  # noqa: E402

STEP3P7 = "default--Step3p7ForConditionalGeneration"


@pytest.mark.parametrize("tp", [1, 2])
def test_step3p7_is_refused_where_step_vl_reads_stepfun_s_vision_names(tp: int) -> None:
    """vLLM 0.33.0's step_vl.py PerceptionEncoder.__init__ reads config.output_dim or config.width, config.heads,
    config.width and config.layers (lines 361-364); transformers 5.20.2's Step3p7VisionConfig pops width, layers and
    heads into hidden_size, num_hidden_layers and num_attention_heads on load and defines no output_dim. The default
    (transformers' own class, its names) holds none of vLLM's: the build fails at output_dim, at TP 1 and 2 alike,
    and kvtop refuses the class on 0.33.0 with that reason: both refuse."""
    vision = json.loads((DEFAULT_CONFIGS / "Step3p7ForConditionalGeneration.json").read_text())["vision_config"]
    assert not {"output_dim", "width", "heads", "layers"} & set(vision)
    assert (vision["hidden_size"], vision["num_hidden_layers"], vision["num_attention_heads"]) == (1536, 47, 16)
    (row,) = [r for r in load_rows("vllm", "0.33.0") if r["config"] == STEP3P7 and r["tp"] == tp]
    assert row["status"] == "refused", row["status"]
    assert row["message"].startswith(CANNOT) and "step_vl.py:361-364" in row["message"]
    assert row["message"].endswith("'Step3p7VisionConfig' object has no attribute 'output_dim'")
    judged = judge("vllm", "0.33.0", row)  # kvtop refuses it too (engines/vllm/config_checks.py BROKEN_CLASSES_ERAS)
    assert judged.verdict == BOTH_REFUSE and CANNOT in judged.detail


def _raised_in(path: str, function: str, message: str) -> AttributeError:
    """An AttributeError raised by a function `function` of a file at `path` (its traceback names that file)."""
    namespace: dict[str, object] = {}
    source = f"def {function}():\n    raise AttributeError({message!r})\n"
    exec(compile(source, path, "exec"), namespace)  # noqa: S102 — a frame that names the engine's file
    try:
        namespace[function]()  # type: ignore[operator]
    except AttributeError as exc:
        return exc
    raise AssertionError("not raised")


def test_the_shared_matcher_reads_the_innermost_engine_file_and_the_message() -> None:
    step_vl = f"/venv/lib/python3.11{VLLM_SOURCE}model_executor/models/step_vl.py"
    for missing in ("output_dim", "heads", "width"):  # a config with StepFun's names fails at heads (line 362)
        exc = _raised_in(step_vl, "__init__", f"'Step3p7VisionConfig' object has no attribute '{missing}'")
        status, message = classify(exc, {"dir": str(ROOT)}) or ("", "")
        assert status == "refused" and message.startswith(CANNOT) and message.endswith(f"'{missing}')")
    # the same words from another file or function are not this failure
    other = _raised_in(f"/venv{VLLM_SOURCE}model_executor/models/step3_vl.py", "__init__",
                       "'Step3p7VisionConfig' object has no attribute 'width'")  # fmt: skip
    assert classify(other, {"dir": str(ROOT)}) is None
    elsewhere = _raised_in(step_vl, "forward", "'Step3p7VisionConfig' object has no attribute 'width'")
    assert known_failure(elsewhere, VLLM_SOURCE, ENGINE_FAILURES) is None


def test_a_stand_ins_failure_is_not_taken_for_the_engines() -> None:
    """A shell's missing field raised inside vLLM's code is no config failure (the runner's own rule stands)."""
    exc = _raised_in(f"/venv{VLLM_SOURCE}v1/worker/gpu_model_runner.py", "__init__",
                     "stand-in model-runner (GPUModelRunner without __init__) does not hold 'foo'")  # fmt: skip
    assert classify(exc, {"dir": str(ROOT)}) is None

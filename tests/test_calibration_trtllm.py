"""TensorRT-LLM's corpus records plan as an operator would, with the engine's build flags (#27).

Expected values are the logs' own figures (tests/data/calibration/trtllm.jsonl, SOURCES.md): the memory docs'
FP8 Llama-2-7B engine printed `Allocated 63.44 GiB for max tokens in paged KV cache (259840)`; issue #1400's
SmoothQuant engine `Using 132608 tokens in paged KV cache`.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load_all, resolve
from benchmarks.calibration.evaluate import blind, fit_all, judge_all

CORPUS = load_all()
TRTLLM = {record.id: record for record in CORPUS["trtllm"]}
DOCS_FP8 = "case-trtllm-docs-memory-llama-2-7b-fp8-80gb"
SMOOTHQUANT = "case-trtllm-1400-llama7b-sq-a100-80gb"


def test_records_with_their_weights_logged_are_planned() -> None:
    judged = judge_all({"trtllm": CORPUS["trtllm"]}, weights_logged=True).get("trtllm", [])
    assert {DOCS_FP8, SMOOTHQUANT} <= {j.record.id for j in judged}


def test_the_fp8_engine_planned_blind_lands_on_its_logged_tokens() -> None:
    record = TRTLLM[DOCS_FP8]
    judged = blind(record, fit_all(CORPUS, leave_out=record.id), weights_logged=False)
    assert judged is not None and judged.truth == 259_840
    assert abs(judged.error) < 0.02 and judged.covered


def test_without_its_build_flag_the_same_engine_is_planned_at_16_bit_and_misses() -> None:
    """The build flag is what the blind plan rests on: the same record planned as a 16-bit engine (the book's
    12.55 GiB where the engine holds 6.54) loses about a tenth of its tokens."""
    raw = dict(TRTLLM[DOCS_FP8].raw)
    flags = [str(flag) for flag in raw["flags"]]  # type: ignore[attr-defined]
    at = flags.index("--qformat")
    raw["flags"] = flags[:at] + flags[at + 2 :]
    sixteen_bit = resolve(raw)
    judged = blind(sixteen_bit, fit_all(CORPUS, leave_out=sixteen_bit.id), weights_logged=False)
    assert judged is not None and judged.error < -0.05


def test_the_smoothquant_engine_with_its_logged_weights() -> None:
    record = TRTLLM[SMOOTHQUANT]
    judged = blind(record, fit_all(CORPUS, leave_out=record.id), weights_logged=True)
    assert judged is not None and judged.truth == 132_608
    assert abs(judged.error) < 0.05 and judged.covered

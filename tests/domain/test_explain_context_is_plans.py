"""One truth for the memory taken before the weights load: `kvtop explain` on a log that does not print the free memory
before the load estimates it from the very context term `kvtop plan` charges for the same start (engine, era, GPU,
TP), calibrated or assumed, and the same interval: `calibration.ranges.free_before_load_range`, the one function both
read. Before, explain fell back to a figure of its own where the context was assumed (GPU total − 1 GiB within
0.25–2 GiB) while plan charged 0.75 GiB + 0.75 GiB per doubling of TP ± the assumption's measured error.

Each test runs `plan --json` and `explain --json` on one real start (tests/data/cases/) and checks explain's estimate
against plan's printed terms by hand: the free memory before the load is CUDA's total less the context (and a
unified host's share; plan's `terms`), its interval ± the terms' errors together (root of their squares) × the
engine's interval scale (plan's `interval_scale`); explain's basis names the context figure and its error as plan's
row does.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from kvtop.cli import main
from kvtop.domain.wording import GIB
from tests.conftest import CASES, CONFIGS
from tests.explain_cli import explain_json

LLAMA_31_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")


def _plan(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["plan", *argv, "--no-calibration-store", "--json"]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def _same_context(plan: dict[str, Any], explained: dict[str, Any], context_gib: float, source: str) -> None:
    """Explain's estimated free memory before load is plan's CUDA total less plan's context, within plan's errors."""
    terms = {term["term"]: term for term in plan["terms"]}
    total, context = terms["cuda_total"], terms["context"]
    assert round(context["bytes"] / GIB, 2) == context_gib and context["source"] == source  # the rule's own figure
    estimated = explained["estimated"]
    assert estimated["field"] == "free_before_load_bytes" and estimated["source"] == source
    host = terms.get("host", {"bytes": 0, "error_bytes": 0})  # a unified-memory host's share, where plan charges one
    # its readings were taken after the engine's context: the context lies within it, not taken off again
    within = "host" in terms and context["within"] is not None
    central = total["bytes"] - (0 if within else context["bytes"]) - host["bytes"]
    errors = (total["error_bytes"], context["error_bytes"], host["error_bytes"])
    error = plan["interval_scale"] * math.sqrt(sum(each**2 for each in errors))
    assert estimated["value_bytes"] == central
    assert abs(estimated["low_bytes"] - (central - error)) <= 2 and abs(estimated["high_bytes"] - (central + error)) <= 2
    said = (f"({context['label']}, {context['bytes'] / GIB:.2f} GiB, within it)" if within else
            f"{context['bytes'] / GIB:.2f} ± {context['error_bytes'] / GIB:.2f} GiB ({source}")  # fmt: skip
    assert said in estimated["basis"]


def _excerpt(tmp_path: Path, case: str, dropped: str) -> Path:
    """The case's log without the lines that print the free memory before the load, as excerpts are pasted."""
    text = (CASES / case / "engine.log").read_text()
    excerpt = tmp_path / "excerpt.log"
    excerpt.write_text("\n".join(line for line in text.splitlines() if dropped not in line))
    return excerpt


def test_sglang_c13_assumed_context_is_plans(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """SGLang C13 (Llama-3.1-8B, mem_fraction_static 0.88, TP 1) without its `Load weight` lines, on an 80 GiB total
    given by --gpu-memory: no GPU model names the SM count `sglang.context` is fitted on, so plan assumes 0.75 GiB at
    TP 1; explain's estimate is 80 − 0.75 = 79.25 GiB (it was 79.00: GPU total − 1 GiB), and the free memory the
    dropped line printed (78.81 GiB) lies inside its interval."""
    log = _excerpt(tmp_path, "sglang/C13", "Load weight")
    launch = ("--model", LLAMA_31_8B, "--mem-fraction-static", "0.88", "--gpu-memory", "80GiB")
    plan = _plan(capsys, "--engine", "sglang", "--engine-version", "0.4.1.post7", *launch)
    explained = explain_json(capsys, log, *launch, "--no-calibration-store")
    _same_context(plan, explained, 0.75, "assumed")
    assert explained["estimated"]["value_bytes"] == 80 * GIB - round(0.75 * GIB)
    assert explained["estimated"]["low_bytes"] <= 78.81 * GIB <= explained["estimated"]["high_bytes"]


def test_sglang_c13_calibrated_context_is_plans(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The same start on an H100 named by --gpu: the context is `sglang.context`'s fit (by SM count and TP), the total
    CUDA's calibrated H100 figure; both commands read the same terms."""
    log = _excerpt(tmp_path, "sglang/C13", "Load weight")
    launch = ("--model", LLAMA_31_8B, "--mem-fraction-static", "0.88", "--gpu", "H100")
    plan = _plan(capsys, "--engine", "sglang", "--engine-version", "0.4.1.post7", *launch)
    explained = explain_json(capsys, log, *launch, "--no-calibration-store")
    context = next(term for term in plan["terms"] if term["term"] == "context")
    _same_context(plan, explained, round(context["bytes"] / GIB, 2), "calibrated")
    assert "sglang.context, fitted on" in explained["estimated"]["basis"]


def test_trtllm_224_context_is_plans(capsys: pytest.CaptureFixture[str]) -> None:
    """TensorRT-LLM#224 (Triton, v0.8 lines, Llama-2-7B, fraction 0.95, A10, TP 1): no budget line, so explain
    estimates the free memory before load; no fit of `trtllm.context` exists, so plan charges one process's CUDA
    context by the A10's 72 SMs of 1,536 threads (compute capability 8.6: 72 × 1536 ÷ 204,800 = 0.54; cuda_context.py's engine-neutral fit; docs/engines/trtllm.md §22), taken from the
    A10's calibrated CUDA total (the fitted one, below nvidia-smi's 22.49 GiB; it was nvidia-smi's 22.49 GiB − 1 GiB
    = 21.49 GiB). Beside it, a TensorRT 9 engine's cuBLAS/cuBLASLt and cuDNN handles, 34 MiB: the 0.8.0 logs' `Init
    cuBLAS/cuBLASLt … GPU +8`, `Init cuDNN … GPU +10` at deserialization and `+8`, `+8` at the execution context (§27)."""
    from kvtop.domain.calibration.cuda_context import CUDA_CONTEXT_FITS, CUDA_CONTEXT_KEY

    log = CASES / "trtllm/trtllm-224-llama2-7b-a10-fraction/engine.log"
    launch = ("--model", str(CONFIGS / "meta-llama--Llama-2-7b-hf.json"), "--kv_cache_free_gpu_mem_fraction", "0.95",
              "--tokens_per_block", "16", "--gpu", "A10")  # fmt: skip
    plan = _plan(capsys, "--engine", "trtllm", "--engine-version", "0.8.0", *launch)
    explained = explain_json(capsys, log, *launch, "--no-calibration-store")
    assert explained["engine_version"] == "0.8.0"
    per_100_sms = CUDA_CONTEXT_FITS[CUDA_CONTEXT_KEY].coefficients[0]
    handles_gib = ((8 + 10) + (8 + 8)) / 1024
    _same_context(plan, explained, round(per_100_sms * 0.54 + handles_gib, 2), "calibrated")
    assert explained["estimated"]["value_bytes"] < 22.49 * GIB - per_100_sms * 0.54 * GIB  # CUDA's total, not nvidia-smi's


def test_lmdeploy_4285_assumed_context_at_tp8_is_plans(capsys: pytest.CaptureFixture[str]) -> None:
    """InternLM/lmdeploy#4285 (TurboMind, 8 × A800-80G, TP 8, Qwen2.5-72B's geometry, 19,591 blocks of 64 tokens a
    rank): TurboMind before v0.15 prints no free memory; LMDeploy's context is always assumed (no line measures it),
    0.75 + 0.75 × log2(8) = 3.00 GiB at TP 8 in plan, where explain charged 1 GiB at any TP before. With plan's
    context the logged blocks now lie inside the interval (the free memory they imply, 76.72 GiB, was outside the old
    78.00–79.75 GiB)."""
    log = CASES / "lmdeploy/lmdeploy-4285-internvl3-78b-tp8-a800/engine.log"
    launch = ("--model", str(CONFIGS / "Qwen--Qwen2.5-72B.json"), "--tp", "8", "--gpu", "A800")
    explained = explain_json(capsys, log, *launch, "--no-calibration-store")
    plan = _plan(capsys, "--engine", "lmdeploy", "--engine-version", explained["engine_version"], *launch)
    _same_context(plan, explained, 3.0, "assumed")
    assert explained["logged"]["token_capacity"] == 19_591 * 64
    assert explained["verdict"] == "match"


def test_a_unified_hosts_share_is_plans_too(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """C13's excerpt read as if on a GB10 (unified memory): the free memory before the load is plan's CUDA total less
    the host's assumed share, the host's error in the interval, its assumed context (kvtop lists no GB10 SM count)
    within that share (the share's readings were taken after the engine's context: session 72). Before, explain
    charged GPU total − 1 GiB there and no host share at all."""
    log = _excerpt(tmp_path, "sglang/C13", "Load weight")
    launch = ("--model", LLAMA_31_8B, "--mem-fraction-static", "0.88", "--gpu", "GB10")
    plan = _plan(capsys, "--engine", "sglang", "--engine-version", "0.4.1.post7", *launch)
    explained = explain_json(capsys, log, *launch, "--no-calibration-store")
    terms = {term["term"]: term for term in plan["terms"]}
    assert terms["context"]["within"].startswith(terms["host"]["label"]) and terms["context"]["error_bytes"] == 0
    _same_context(plan, explained, 0.75, "assumed")

"""One truth for every term a rebuild with an estimated input charges: where a log lacks an input, `kvtop explain`
solves the engine's budget with plan's own figures for what the log does not state (`EstimateRun.with_plans_terms`:
plan's central `PreloadEstimate.figures`), and what the log states wins over them. Before, explain's rebuild charged
TensorRT-LLM's flat 2 GiB runtime where plan charged the v0.8 engine's logits buffer, and SGLang's bare weights book
where plan charged the rope cache the load holds beside it.

Each test runs `plan --json` and `explain --json` on one real start (tests/data/cases/) and compares the budget's
steps, with the figure itself checked against an independent source: the engine's arithmetic, by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kvtop.cli import main
from kvtop.domain.wording import GIB
from tests.conftest import CASES, CONFIGS
from tests.explain_cli import explain_json

LLAMA_2_7B = str(CONFIGS / "meta-llama--Llama-2-7b-hf.json")
LLAMA_31_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")


def _plan(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["plan", *argv, "--no-calibration-store", "--json"]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def _steps(out: dict[str, Any]) -> dict[str, tuple[int | None, float | None, str | None]]:
    return {step["label"]: (step["bytes"], step["value"], step["source"]) for step in out["steps"]}


def _excerpt(tmp_path: Path, case: str, dropped: str) -> Path:
    """The case's log without the lines that hold `dropped`, as excerpts are pasted."""
    text = (CASES / case / "engine.log").read_text()
    excerpt = tmp_path / "excerpt.log"
    excerpt.write_text("\n".join(line for line in text.splitlines() if dropped not in line))
    return excerpt


def test_trtllm_224_runtime_is_plans_v08_logits_term(capsys: pytest.CaptureFixture[str]) -> None:
    """TensorRT-LLM#224 (Triton, v0.8 lines, Llama-2-7B, fraction 0.95, A10): no budget line, so explain estimates the
    free memory before load; the runtime it charges is plan's v0.8 term, one float32 logit per vocabulary entry for
    each of max_num_tokens: 8,192 × 32,000 × 4 B = 1,048,576,000 B (0.98 GiB; `trtllm.md` §18), not the 2 GiB
    assumption. Every budget step is plan's, and the interval holds the runtime term's error as plan's does."""
    log = CASES / "trtllm/trtllm-224-llama2-7b-a10-fraction/engine.log"
    launch = ("--model", LLAMA_2_7B, "--kv_cache_free_gpu_mem_fraction", "0.95", "--tokens_per_block", "16",
              "--gpu", "A10")  # fmt: skip
    plan = _plan(capsys, "--engine", "trtllm", "--engine-version", "0.8.0", *launch)
    explained = explain_json(capsys, log, *launch, "--no-calibration-store")
    runtime = "− execution context, runtime buffers, decoder"
    by_hand = 8_192 * 32_000 * 4  # max_num_tokens × Llama-2's vocab × float32
    assert _steps(plan)[runtime] == (-by_hand, None, "assumed")
    assert _steps(explained) == _steps(plan)
    predicted = explained["predicted"]
    assert predicted["token_capacity"] == plan["token_capacity"]
    # the same terms' errors together, shared as plan shares them (explain_estimate.py `plans_ends`): one interval
    # (before session 72 explain added the moves in tokens as independent errors, within 3 blocks of plan's ends)
    assert (predicted["token_capacity_min"], predicted["token_capacity_max"]) == (
        plan["token_capacity_min"], plan["token_capacity_max"])
    terms = {term["term"]: term for term in plan["terms"]}
    assert terms["activation"]["bytes"] == by_hand and terms["activation"]["error_bytes"] > 0
    others = {other["term"]: other["error_bytes"] for other in explained["estimated"]["others"]}
    assert others["activation"] == terms["activation"]["error_bytes"]  # the runtime's error is in the interval


def test_sglang_c13_weights_hold_the_rope_cache_as_plans(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """SGLang C13 (Llama-3.1-8B, mem_fraction_static 0.88) without its `Load weight` lines on an H100: explain's
    weights step is plan's, the book (16,060,522,496 B) and the rope's float32 cos/sin cache SGLang builds beside it
    on the GPU (131,072 positions × 128 × 4 B = 67,108,864 B; srt/layers/rotary_embedding/base.py), and the tail of
    the segment PyTorch's caching allocator opened for the norms (c10/cuda/CUDACachingAllocator.cpp; SGLang measures
    the load as free memory before less after): 65 norms of 4,096 × 2 B = 532,480 B in one 2 MiB small segment,
    1,564,672 B unused (every matrix, the rope cache included, is a whole number of 2 MiB): 16.13 GB, where it was
    the bare book (16.06 GB). Every other step is plan's too."""
    log = _excerpt(tmp_path, "sglang/C13", "Load weight")
    launch = ("--model", LLAMA_31_8B, "--mem-fraction-static", "0.88", "--gpu", "H100")
    plan = _plan(capsys, "--engine", "sglang", "--engine-version", "0.4.1.post7", *launch)
    explained = explain_json(capsys, log, *launch, "--no-calibration-store")
    weights = 16_060_522_496 + 131_072 * 128 * 4 + (2 << 20) - 65 * 4_096 * 2
    assert _steps(plan)["− weights"] == (-weights, None, "calibrated")
    assert _steps(explained)["− weights"] == (-weights, None, "calibrated")
    plan_steps, explained_steps = _steps(plan), _steps(explained)
    total = "GPU memory (nvidia-smi's total)"  # the table's total: plan gives it no source word, explain "assumed"
    assert plan_steps.pop(total)[0] == explained_steps.pop(total)[0]
    assert explained_steps == plan_steps
    assert explained["predicted"]["token_capacity"] == plan["token_capacity"]


def test_vllm_v041_without_its_weights_line_is_plans_budget(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """vLLM 0.4.1 on an RTX 3090 (Llama-3-8B's geometry, utilisation 0.9) prints no KV memory, so explain estimates
    the non-KV memory; without its `Loading model weights took` line the weights are plan's calibrated term, and the
    total is CUDA's calibrated one, named as plan names it ("GPU memory as CUDA reports it", where explain called it
    nvidia-smi's): every step is plan's."""
    log = _excerpt(tmp_path, "vllm/file29429054722-v041-llama3-8b-3090", "Loading model weights")
    launch = ("--model", LLAMA_31_8B, "--gpu-memory-utilization", "0.9", "--max-model-len", "8192", "--gpu", "RTX3090")
    plan = _plan(capsys, "--engine", "vllm", "--engine-version", "0.4.1", *launch)
    explained = explain_json(capsys, log, *launch, "--no-calibration-store")
    assert explained["estimated"]["field"] == "non_kv_bytes"
    assert _steps(explained) == _steps(plan)
    (total,) = [step for step in explained["steps"] if step["role"] == "cuda_total"]
    assert explained["estimated"]["origin"] == "plan_terms"  # solved at CUDA's total because plan's terms made it
    assert total["label"] == "GPU memory as CUDA reports it" and total["bytes"] < 24 * GIB  # below nvidia-smi's 24 GiB
    assert explained["predicted"]["token_capacity"] == plan["token_capacity"]


def test_vllm_v041_weights_the_log_states_win(capsys: pytest.CaptureFixture[str]) -> None:
    """The same start with its `Loading model weights took 14.96 GB` line: the log's figure wins over plan's
    calibrated weights (measured), every other term stays plan's."""
    log = CASES / "vllm/file29429054722-v041-llama3-8b-3090/engine.log"
    launch = ("--model", LLAMA_31_8B, "--gpu-memory-utilization", "0.9", "--max-model-len", "8192", "--gpu", "RTX3090")
    plan = _plan(capsys, "--engine", "vllm", "--engine-version", "0.4.1", *launch)
    explained = explain_json(capsys, log, *launch, "--no-calibration-store")
    weights_bytes, _, source = _steps(explained)["− weights"]
    assert source == "measured" and weights_bytes is not None and round(-weights_bytes / 1e9, 2) == 16.06  # 14.96 GiB
    plan_steps, explained_steps = _steps(plan), _steps(explained)
    for label in ("GPU memory as CUDA reports it", "requested: ceil(total × 0.9)",
                  "− activation peak, non-torch, CUDA graphs"):  # fmt: skip
        assert explained_steps[label] == plan_steps[label]


def test_llamacpp_fit_is_solved_on_the_gpu_named_as_plans(capsys: pytest.CaptureFixture[str]) -> None:
    """An Ollama log of Llama-3.1-8B (4 slots × 2,048 cells) read with --gpu RTX3090: the steps that say whether the
    cache fits beside the weights are plan's for that GPU (CUDA's calibrated total less the assumed 0.75 GiB context;
    the weights 8,030,261,248 parameters × 2 B), where explain solved them on an 80 GiB stand-in (79.00 GiB free)."""
    log = CASES / "llamacpp/ollama-llama31-8b-np4-kv-self-size/engine.log"
    model = ("--model", str(CONFIGS / "meta-llama--Llama-3.1-8B.json"))
    explained = explain_json(capsys, log, *model, "--gpu", "RTX3090", "--no-calibration-store")
    plan = _plan(capsys, "--engine", "llamacpp", *model, "--gpu", "RTX3090", "-np", "4", "-c", "8192")
    assert _steps(explained) == _steps(plan)
    free_before, _, source = _steps(explained)["free before the weights load"]
    assert free_before is not None and free_before < 24 * GIB - 0.75 * GIB and source == "assumed"  # an RTX 3090's
    assert _steps(explained)["− weights"] == (-8_030_261_248 * 2, None, "calibrated")
    assert explained["verdict"] == "match" and explained["predicted"]["token_capacity"] == 8_192


def test_lmdeploy_4285_every_step_is_plans(capsys: pytest.CaptureFixture[str]) -> None:
    """InternLM/lmdeploy#4285 (TurboMind, TP 8 on A800s, no free memory printed): the rebuild's every step, the
    context, the weights and the blocks, is plan's for the same start."""
    log = CASES / "lmdeploy/lmdeploy-4285-internvl3-78b-tp8-a800/engine.log"
    launch = ("--model", str(CONFIGS / "Qwen--Qwen2.5-72B.json"), "--tp", "8", "--gpu", "A800")
    explained = explain_json(capsys, log, *launch, "--no-calibration-store")
    plan = _plan(capsys, "--engine", "lmdeploy", "--engine-version", explained["engine_version"], *launch)
    assert _steps(explained) == _steps(plan)
    assert explained["predicted"]["token_capacity"] == plan["token_capacity"]

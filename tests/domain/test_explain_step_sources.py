"""A step of `explain` is measured only where the log or the operator printed its figure (operator trial, I1).

SGLang case C04 (Llama-3-70B, TP 8) logs `Load weight begin. avail mem=137.29 GiB` and no `Load weight end`: with
--gpu H200 kvtop estimates the free memory after the load, and the GPU's total is its table's nvidia-smi figure.
Both steps read "measured" before; now the estimate and the table figure say where they came from."""

from __future__ import annotations

import json

from tests.data_paths import CASES, CONFIGS

LOG = str(CASES / "sglang/C04/engine.log")
ARGV = ["explain", LOG, "--model", str(CONFIGS / "meta-llama--Meta-Llama-3-70B.json"), "--tp", "8", "--json",
        "--no-calibration-store"]  # fmt: skip
# Llama-3-70B per rank at TP 8 in bf16: (70,553,706,496 − 1,318,912 norm parameters) ÷ 8 × 2 B + the 1,318,912 norm
# parameters (80 layers × 2 × 8,192 + 8,192, replicated) × 2 B = 17,640,734,720 B
WEIGHTS_PER_RANK = (70_553_706_496 - 1_318_912) // 8 * 2 + 1_318_912 * 2
# and what SGLang's plan holds beside them (engines/sglang/weights_held.py): the rope's float32 cache 8,192 × 128 × 4 B
# = 4,194,304 B, under 10 MiB so in a 20 MiB segment of its own (16 MiB unused), the embedding and LM head shards
# 16,032 × 8,192 × 2 B = 250.5 MiB each in 252 MiB segments (3 MiB), the norms' 2,637,824 B in two 2 MiB segments
# (1,556,480 B): 25,673,728 B
BESIDE_BOOK = 4_194_304 + 16 * 2**20 + 3 * 2**20 + (4 * 2**20 - 2_637_824)
PRE_LOAD = round(137.29 * 2**30)  # the log's `Load weight begin. avail mem=137.29 GiB` (least over its ranks)


def _steps(capsys, *extra: str) -> dict[str, tuple[int | None, bool, str | None]]:
    from kvtop.cli import main

    assert main([*ARGV, *extra]) == 0
    out = json.loads(capsys.readouterr().out)
    return {s["label"]: (s["bytes"], s["measured"], s["source"]) for s in out["steps"]}


def test_the_estimated_free_memory_and_the_table_total_are_not_measured(capsys) -> None:
    steps = _steps(capsys, "--gpu", "H200")
    # kvtop's H200 row: nvidia-smi's 143,771 MiB, said as that
    assert steps["GPU memory (nvidia-smi's total)"] == (143_771 * 2**20, False, "assumed")
    assert steps["free before weight load (min over ranks)"] == (PRE_LOAD, True, "measured")
    # 147,414,015,017 − 17,640,734,720 − 25,673,728 = 129,747,606,569 B (120.84 GiB): the weights plan charges (the
    # book and what SGLang holds beside it), within its calibrated error
    assert steps["free after weight load"] == (PRE_LOAD - WEIGHTS_PER_RANK - BESIDE_BOOK, False, "calibrated")


def test_a_total_the_operator_gives_is_measured(capsys) -> None:
    steps = _steps(capsys, "--gpu", "H200", "--gpu-memory", "140GiB")
    assert steps["GPU memory"] == (140 * 2**30, True, "measured")  # one word for a measured step, JSON as text
    assert steps["free after weight load"][1:] == (False, "calibrated")


def test_vllm_s_estimated_non_kv_memory_says_calibrated() -> None:
    """vllm#10517 (v0.6.4, RTX 3090) without its `Memory profiling results` line: the non-KV memory is the
    calibration's estimate (test_explain_estimates.py), so its step says calibrated, never measured; the weights
    the log printed (`Loading model weights took 14.99 GB`) stay measured. Before, both read measured."""
    from kvtop.domain.explain import explain
    from kvtop.domain.explain_request import ExplainRequest
    from kvtop.domain.gpus import gpu_total_bytes
    from kvtop.domain.launch import parse_flags
    from kvtop.sources.engine_logs import parse_engine_log
    from kvtop.sources.hub import load_model

    text = (CASES / "vllm/vllm-10517-llama31-8b-3090-v0/engine.log").read_text()
    excerpt = "\n".join(line for line in text.splitlines() if "Memory profiling results" not in line)
    settings = parse_flags("vllm", ["--engine-version", "0.6.4", "--max-model-len", "20000",
                                    "--gpu-memory-utilization", "0.9"])  # fmt: skip
    result = explain(ExplainRequest(
        log=parse_engine_log(excerpt), model=load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")),
        settings=settings, gpu_total_bytes=gpu_total_bytes("RTX3090"), gpu_name="RTX3090",
    ))  # fmt: skip
    assert result.ledger is not None and result.estimated is not None
    steps = {step.label: step for step in result.ledger.engine.steps}
    non_kv = steps["− activation peak, non-torch, CUDA graphs"]
    assert (non_kv.bytes, non_kv.measured, non_kv.source) == (-result.estimated.value_bytes, False, "calibrated")
    weights = steps["− weights"]
    assert weights.measured and round(-weights.bytes / 2**30, 2) == 14.99  # the log's figure (GiB, printed "GB")

"""`plan --compile-cache` where the engine's rule does not read torch.compile's cache: named, never ignored in silence.

Before, SGLang, TensorRT-LLM, LMDeploy and llama.cpp took the flag and planned the same tokens with no word. Each
engine's code says why a warm or cold cache moves no token of its pool (the expected equality below):
- SGLang 0.5.12: `init_memory_pool` (model_runner.py:749) before `kernel_warmup` (:767) and the graph runners
  (:791, piecewise :825), where `--enable-torch-compile` compiles (torch_compile.py);
- TensorRT-LLM: `PyExecutor.__init__` runs `model_engine.warmup` (torch.compile's first) before
  `configure_kv_cache_capacity` takes its baseline; `torch_compile_config` is off by default (llmapi/llm_args.py);
- LMDeploy: the PyTorch engine's free memory is measured before the graph runner and its warm-up (§4.2); TurboMind
  runs no torch.compile;
- llama.cpp: a C++ engine on ggml, no torch.compile at all.
vLLM reads it (compile_cache.py) and names nothing.
"""

from __future__ import annotations

import pytest

from tests.engines.measured_flags import named, plan_json

H100 = ("--model", "llama-3.1-8b", "--gpu", "H100")
UNREAD = {  # the engine's display name, and a launch at a release its rule was read at
    "SGLang": (*H100, "--engine", "sglang", "--engine-version", "0.5.12", "--enable-torch-compile"),
    "TensorRT-LLM": (*H100, "--engine", "trtllm", "--engine-version", "1.0.0"),
    "LMDeploy": (*H100, "--engine", "lmdeploy", "--engine-version", "0.10.0"),
    "llama.cpp": (*H100, "--engine", "llamacpp", "--engine-version", "b6500"),
}


@pytest.mark.parametrize("rule", list(UNREAD))
def test_a_said_cache_is_named_and_moves_nothing(capsys: pytest.CaptureFixture[str], rule: str) -> None:
    args = UNREAD[rule]
    bare = plan_json(capsys, args)
    assert named(bare, rule) == []
    for state in ("warm", "cold"):
        said = plan_json(capsys, args, "--compile-cache", state)
        assert (said["token_capacity"], said["token_capacity_min"], said["token_capacity_max"]) == (
            bare["token_capacity"], bare["token_capacity_min"], bare["token_capacity_max"])
        assert named(said, rule) == ["--compile-cache"]
        note = next(n for n in said["notes"] if n.startswith("--compile-cache not read by "))
        assert "torch.compile" in note and "docs/engines/" in note


def test_vllm_reads_it_and_names_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    """v0.30.0 (V2 on an H100): said warm, the plan moves (v2_graphs.py WARM_CACHE_UNCHARGED) and no note says unread.
    At 512 batched tokens, so the compile's figure stands above V2's counted peak (at the default 8,192 the forward
    hides it and nothing is charged cold either: v2_graphs.compile_above_peak)."""
    args = (*H100, "--engine", "vllm", "--engine-version", "0.30.0", "--max-num-batched-tokens", "512")
    bare, warm = plan_json(capsys, args), plan_json(capsys, args, "--compile-cache", "warm")
    assert warm["token_capacity"] > bare["token_capacity"] and named(warm, "vLLM") == []

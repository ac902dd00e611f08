"""max_num_tokens as each TensorRT-LLM release lowers it (kvtop/domain/engines/trtllm/build_tokens.py, budget.py).

Expected values are the engine's own arithmetic, written out from the code read (docs/engines/trtllm.md §6):
* trtllm-build 0.8–0.10, tensorrt_llm/_common.py `check_max_num_tokens` (89ba1b1a, 0.10.0.dev2024050700, lines 206-207
  and 221-222): an unset max_num_tokens becomes max_input_len × max_batch_size, a larger one is lowered to it;
* trtllm-build 0.11 on (2a115dae, 0.11.0.dev2024061800, lines 237-238): lowered to max_seq_len × max_batch_size;
* 0.7.1's trtllm-build (c8965302) passes it on unchecked;
* the PyTorch backend, `PyTorchModelEngine._init_max_num_tokens`: lowered to max_seq_len × max_batch_size, handed to
  the executor by py_executor_creator, whose profiling run cuts it into dummy requests.
The 5060 Ti start (tests/data/cases/trtllm/trtllm-qwen3-8b-fp8-v120rc2-estimation) is the log check: max_batch_size 1
and max_seq_len 9,192 leave 8,192, and its estimation pool prints `(8224)` = ceil(8,193 / 32) × 32.
"""

from __future__ import annotations

from kvtop.domain.engines.trtllm.budget import estimation_tokens, executor_max_num_tokens
from kvtop.domain.engines.trtllm.build_tokens import engine_max_num_tokens
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.launch import LaunchSettings

V010 = ResolvedVersion(text="0.10.0")


def test_v010_unset_max_num_tokens_becomes_batch_times_input() -> None:
    settings = LaunchSettings(engine="trtllm", max_input_len=1024)
    assert engine_max_num_tokens(settings, 4, 4096, V010) == 4 * 1024


def test_v010_larger_request_is_lowered_to_batch_times_input() -> None:
    settings = LaunchSettings(engine="trtllm", max_num_batched_tokens=12288, max_input_len=2048)
    assert engine_max_num_tokens(settings, 2, 4096, V010) == 2 * 2048


def test_v010_without_max_input_len_keeps_the_launch() -> None:
    settings = LaunchSettings(engine="trtllm", max_num_batched_tokens=12288)
    assert engine_max_num_tokens(settings, 1, 4096, V010) == 12288


def test_v011_caps_at_batch_times_seq() -> None:
    settings = LaunchSettings(engine="trtllm", max_input_len=1024)  # the 8,192 default, not 1 × 1,024
    assert engine_max_num_tokens(settings, 1, 2048, ResolvedVersion(text="0.11.0")) == 2048


def test_v071_is_unchecked() -> None:
    settings = LaunchSettings(engine="trtllm", max_num_batched_tokens=12288, max_input_len=1024)
    assert engine_max_num_tokens(settings, 1, 2048, ResolvedVersion(text="0.7.1")) == 12288


def test_pytorch_model_engine_caps_at_batch_times_seq() -> None:
    settings = LaunchSettings(engine="trtllm", backend="pytorch", max_running_requests=2)
    assert executor_max_num_tokens(settings, 1024) == 2 * 1024
    # the profiling run's dummy requests: two of min(2,048, 1,023) = 1,023 and one of 2 tokens, each + 1 generated
    # token (+ 1 for the overlap scheduler before 2026), in 32-token blocks: 2 × ceil(1,025 / 32) + ceil(4 / 32) = 67
    assert estimation_tokens(settings, 1024, 32, ResolvedVersion(text="1.1.0")) == 67 * 32


def test_5060ti_start_keeps_8192_and_its_estimation_pool() -> None:
    settings = LaunchSettings(engine="trtllm", backend="pytorch", max_running_requests=1, context_length=9192)
    assert executor_max_num_tokens(settings, 9192) == 8192  # 1 × 9,192 does not bind
    assert estimation_tokens(settings, 9192, 32, ResolvedVersion(text="1.2.0rc2")) == 8224  # the log's (8224)

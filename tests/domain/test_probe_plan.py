"""kvtop/domain/probe_plan.py: the probe's buffers from a predicted ledger, and the TUI's request.

Ledgers come from the real `predict()` on real configs in tests/data, on an H100 (81,559 MiB).
"""

from __future__ import annotations

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.probe import ProbeRequest, bytes_for_tokens
from kvtop.domain.probe_plan import (
    DEFAULT_TIMEOUT_S,
    MIN_GPU_RESERVE_BYTES,
    buffers_from_ledger,
    fill_budget_bytes,
    tokens_within,
    tui_probe_request,
)
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS

MIB = 2**20
H100_TOTAL_BYTES = 81_559 * MIB


def _ledger(engine: str, config: str, *flags: str) -> Ledger:
    path = str(CONFIGS / config)
    argv = ["--model-path" if engine == "sglang" else "--model", path, *flags]
    return predict(
        load_model(path), parse_flags(engine, argv), gpu_total_bytes=H100_TOTAL_BYTES, gpu_name="H100"
    )


@pytest.fixture(scope="module")
def llama_tp8() -> Ledger:
    return _ledger("sglang", "meta-llama--Meta-Llama-3-70B.json", "--tp-size", "8")


@pytest.fixture(scope="module")
def qwen_vllm() -> Ledger:
    return _ledger("vllm", "Qwen--Qwen2.5-7B.json", "--engine-version", "0.33.0")  # pages of 16: 0.33.0's (pinned)


def test_llama_70b_tp8_buffers_are_k_and_v_of_one_kv_head_per_rank(llama_tp8: Ledger) -> None:
    buffers, page = buffers_from_ledger(llama_tp8)
    assert page == 1
    assert [(b.name, b.tensors, b.row_shape, b.dtype) for b in buffers] == [
        ("full_k", 80, (1, 128), "bfloat16"),
        ("full_v", 80, (1, 128), "bfloat16"),
    ]
    assert sum(b.bytes_per_token for b in buffers) == 40_960 == llama_tp8.kv_bytes_per_token


def test_deepseek_v3_mla_buffer_is_one_latent_row() -> None:
    ledger = _ledger("sglang", "deepseek-ai--DeepSeek-V3.json", "--tp-size", "8")
    buffers, _ = buffers_from_ledger(ledger)
    assert [(b.name, b.tensors, b.row_shape) for b in buffers] == [("full_kv", 61, (1, 576))]
    assert buffers[0].bytes_per_token == 70_272 == ledger.kv_bytes_per_token


def test_kvtop_probe_command_uses_the_domain_buffers() -> None:
    from kvtop.commands import probe as probe_command

    assert probe_command.buffers_from_ledger is buffers_from_ledger


def test_tui_request_fills_cuda_n_keeping_the_engines_runtime_reserve(llama_tp8: Ledger) -> None:
    request = tui_probe_request(llama_tp8, 3, 6 * GIB)
    assert request.device == "cuda:3"
    assert request.fill and request.target_tokens is None
    assert llama_tp8.engine.reserve_bytes > MIN_GPU_RESERVE_BYTES
    assert request.reserve_bytes == llama_tp8.engine.reserve_bytes  # SGLang's 14.31 GiB
    assert request.memory_limit_bytes is None
    assert request.timeout_s == DEFAULT_TIMEOUT_S == 120.0
    # one K (or V) tensor holds 1 head x 128 x 2 B = 256 B a token: 64 MiB of it is 262,144 tokens (32 x 2 MiB)
    assert request.chunk_tokens == 262_144
    assert request.bytes_per_token_predicted == 40_960


def test_the_reserve_is_never_below_2_gib_on_a_gpu(llama_tp8: Ledger) -> None:
    small = llama_tp8.model_copy(
        update={"engine": llama_tp8.engine.model_copy(update={"reserve_bytes": GIB})}
    )
    assert tui_probe_request(small, 0, 6 * GIB).reserve_bytes == 2 * GIB


def test_tokens_mode_and_an_explicit_reserve(llama_tp8: Ledger) -> None:
    request = tui_probe_request(llama_tp8, 0, None, tokens=100_000, reserve_bytes=3 * GIB)
    assert (request.target_tokens, request.fill, request.reserve_bytes) == (100_000, False, 3 * GIB)


def test_cpu_override_uses_the_free_bytes_as_the_memory_limit_and_keeps_no_reserve(llama_tp8: Ledger) -> None:
    request = tui_probe_request(llama_tp8, 3, 512 * MIB, device="cpu")
    assert (request.device, request.memory_limit_bytes, request.reserve_bytes) == ("cpu", 512 * MIB, 0)
    with pytest.raises(InputError, match="free_bytes"):
        tui_probe_request(llama_tp8, 3, None, device="cpu")


def test_bad_requests_name_what_is_wrong(llama_tp8: Ledger) -> None:
    with pytest.raises(InputError, match="target_tokens"):
        tui_probe_request(llama_tp8, 0, GIB, tokens=0)
    with pytest.raises(InputError, match="gpu"):
        tui_probe_request(llama_tp8, -1, GIB)


def test_tokens_within_one_gib_counts_the_padding_page(llama_tp8: Ledger) -> None:
    request = tui_probe_request(llama_tp8, 0, GIB)
    tokens = tokens_within(request, GIB)
    assert tokens == 26_213  # (26,213 + 1 padding) × 40,960 B ≤ 1 GiB
    assert (
        bytes_for_tokens(request.buffers, tokens, 1) <= GIB < bytes_for_tokens(request.buffers, tokens + 1, 1)
    )
    assert tokens_within(request, 2 * 40_960 - 1) == 0


def test_tokens_within_rounds_to_vllm_pages_of_16(qwen_vllm: Ledger) -> None:
    request: ProbeRequest = tui_probe_request(qwen_vllm, 0, 10 * GIB)
    assert (request.page_size, request.bytes_per_token_predicted) == (16, 57_344)
    assert request.reserve_bytes == 2 * GIB
    assert tokens_within(request, GIB) == 18_704  # (18,704 + 16) × 57,344 ≤ 1 GiB; one page more is not


def test_fill_budget_is_free_less_reserve_never_negative() -> None:
    assert fill_budget_bytes(6 * GIB, 2 * GIB) == 4 * GIB
    assert fill_budget_bytes(GIB, 2 * GIB) == 0

"""Where llama.cpp keeps the KV (docs/engines/llamacpp.md §10): `-nkvo` puts every layer's KV in host memory,
`-ngl N` the first n_layer + 1 − N layers'; the plan keeps that KV out of the GPU ledger, and `explain`
checks the log's `<device> KV buffer size` lines against the same rule.

Expected bytes are hand arithmetic (cells × layers × (K + V elements) × 2 B for f16) and the real logs' own
lines: tests/data/cases/llamacpp/ollama-hermes3-… (`offloading 14 repeating layers to GPU`,
`CPU KV buffer size = 2304.00 MiB`, `CUDA0 KV buffer size = 1792.00 MiB`) and gemma2-2b-… (27/27 layers
offloaded, yet both caches' buffers on `CPU`, 416.00 MiB each)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.domain.engines.llamacpp.log_records import LlamacppRankLog
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.wording import GIB
from kvtop.sources.engine_logs import read_engine_log
from kvtop.sources.hub import load_model
from tests.data_paths import CASES, CONFIGS
from tests.engines.llamacpp.gguf_files import GEMMA2_2B, write_gguf

MIB = 1 << 20
LOGS = CASES / "llamacpp"
HERMES = LOGS / "ollama-hermes3-llama31-8b-q4_0-rtx2060" / "engine.log"
GEMMA2 = LOGS / "gemma2-2b-it-q4_k_m-np-auto-unified" / "engine.log"
LLAMA = str(CONFIGS / "meta-llama--Llama-3.1-8B.json")


def solve(flags: str):  # type: ignore[no-untyped-def]
    return predict(load_model(LLAMA), parse_flags("llamacpp", flags.split()), gpu_total_bytes=24 * GIB).engine


def test_ngl_15_keeps_18_layers_kv_in_host_memory_as_the_hermes_log_prints() -> None:
    """Llama-3.1-8B, 32 layers, -ngl 15: i_gpu_start = 32 + 1 − 15 = 18 layers on the CPU. Host KV = 32768 cells ×
    18 layers × (1024 + 1024) × 2 B = 2304 MiB, GPU KV = × 14 layers = 1792 MiB: the log's CPU and CUDA0 lines."""
    result = solve("-c 32768 -np 1 -ngl 15")
    assert result.token_capacity == 32768  # the cells are the same, wherever they live
    assert result.kv_pool_bytes == 32768 * 14 * 2048 * 2 == 1792 * MIB
    host = next(step for step in result.steps if step.label.startswith("of which in host memory"))
    assert host.bytes == 32768 * 18 * 2048 * 2 == 2304 * MIB and "18 layers" in host.label
    assert any("in host memory" in note and "not in the GPU ledger" in note for note in result.notes)
    assert any("weights of CPU layers" in note for note in result.notes)  # named, not modelled


def test_nkvo_puts_every_layers_kv_on_the_host() -> None:
    """-nkvo: offload_kqv false, every layer's KV on the CPU buffer type: 32768 × 32 × 2048 × 2 B = 4096 MiB."""
    result = solve("-c 32768 -np 1 -nkvo")
    assert result.token_capacity == 32768 and result.kv_pool_bytes == 0
    host = next(step for step in result.steps if step.label.startswith("of which in host memory"))
    assert host.bytes == 32768 * 32 * 2048 * 2 == 4096 * MIB
    assert not any("weights of CPU layers" in note for note in result.notes)  # -nkvo alone moves no weights


def test_every_layer_offloaded_keeps_the_whole_cache_on_the_gpu() -> None:
    """-ngl 33 (32 layers + the output) and -ngl 99: i_gpu_start = 0, no host KV."""
    for flags in ("-c 32768 -np 1 -ngl 33", "-c 32768 -np 1 -ngl 99", "-c 32768 -np 1"):
        result = solve(flags)
        assert result.kv_pool_bytes == 4096 * MIB
        assert not any(step.label.startswith("of which in host memory") for step in result.steps)


def test_a_cache_too_large_for_the_gpu_fits_once_it_is_on_the_host() -> None:
    """-c 131072 asks 16 GiB of KV (131072 × 32 × 2048 × 2 B): beside 15 GiB of weights on 24 GiB it does not
    fit on the GPU; with -nkvo it takes no GPU memory."""
    assert not solve("-c 131072 -np 1").fits
    assert solve("-c 131072 -np 1 -nkvo").fits


def test_the_kv_buffer_lines_are_read_per_device() -> None:
    (hermes,) = read_engine_log(str(HERMES)).ranks(LlamacppRankLog)
    assert [(b.device, b.size.text, b.on_host) for b in hermes.kv_buffers] == [
        ("CPU", "2304.00", True), ("CUDA0", "1792.00", False)]  # fmt: skip
    assert hermes.repeating_on_gpu == (14,)
    (gemma,) = read_engine_log(str(GEMMA2)).ranks(LlamacppRankLog)
    assert [(b.device, b.size.text, b.sliding) for b in gemma.kv_buffers] == [
        ("CPU", "416.00", False), ("CPU", "416.00", True)]  # fmt: skip


def explain_notes(capsys: pytest.CaptureFixture[str], *args: str) -> list[str]:
    assert main(["explain", "--json", *args]) == 0
    return list(json.loads(capsys.readouterr().out)["notes"])


def test_explain_agrees_with_the_hermes_logs_host_and_gpu_bytes(capsys: pytest.CaptureFixture[str]) -> None:
    """14 repeating layers on the GPU (the log's line): 18 on the CPU, 2304.00 MiB, as its CPU line prints."""
    (note,) = [n for n in explain_notes(capsys, str(HERMES), "--model", LLAMA) if "KV buffers" in n]
    assert "CPU 2,304.00 MiB, CUDA0 1,792.00 MiB" in note
    assert "gives 2,304.00 MiB on the host and 1,792.00 MiB on the GPU: they agree" in note


def test_explain_says_gemma2s_kv_is_in_host_memory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """27/27 layers offloaded, yet each cache's buffer is on CPU: 8192 cells × 13 layers × (1024 + 1024) × 2 B =
    416 MiB each, 832 MiB in host memory where the rule (every layer on the GPU) puts none."""
    model = write_gguf(tmp_path / "gemma2.gguf", GEMMA2_2B, "Gemma 2 2b It")
    (note,) = [n for n in explain_notes(capsys, str(GEMMA2), "--model", str(model)) if "KV buffers" in n]
    assert "CPU 832.00 MiB" in note and "in host memory 832.00 MiB" in note
    assert "gives 0.00 MiB on the host and 832.00 MiB on the GPU" in note and "plan it with -nkvo" in note


def test_a_gpu_budget_buys_cells_at_their_gpu_share() -> None:
    """`compare`'s same-budget context: with -ngl 15 a cell holds 14 of 32 layers on the GPU (14 × 4096 B = 57,344 B),
    so 1792 MiB of GPU KV is 32768 cells; under -nkvo no context spends GPU memory on KV."""
    from kvtop.domain.engines.llamacpp.diagnosis import absolute_budget

    model = load_model(LLAMA)
    partial = predict(model, parse_flags("llamacpp", ["-c", "4096", "-np", "1", "-ngl", "15"]), gpu_total_bytes=24 * GIB)
    assert absolute_budget(partial, 1792 * MIB) == {"context_length": 1792 * MIB // (14 * 2048 * 2)} == {"context_length": 32768}
    host = predict(model, parse_flags("llamacpp", ["-c", "4096", "-np", "1", "-nkvo"]), gpu_total_bytes=24 * GIB)
    assert absolute_budget(host, 1792 * MIB) is None


def test_the_pasted_engine_flags_keep_ngl(capsys: pytest.CaptureFixture[str]) -> None:
    """`-ngl` decides where the KV sits (§10), so the launch line plan prints keeps it (an operator trial found
    `engine flags: -c 32768` with `-ngl 15` dropped: the pasted launch would offload every layer)."""
    code = main(["plan", "--model", "llama-3.1-8b", "--engine", "llamacpp", "-c", "32768", "-ngl", "15", "--gpu", "H100"])
    out = capsys.readouterr().out
    assert code == 0
    assert "engine flags: -c 32768 -ngl 15" in out

"""llama.cpp's KV book from a GGUF file and from a config.json: cells by -c/-np/--kv-unified, K and V
types apart, the sliding-window cache. Expected bytes are hand arithmetic from ggml's type sizes
(`ggml.c` type_traits: f16 2 B, q8_0 34 B per 32, q4_0 18 B per 32) and the real logs' own figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS
from tests.engines.llamacpp.gguf_files import GEMMA3_27B, LLAMA_31_8B, QWEN3_8B, write_gguf

MIB = 1 << 20


def ledger(model_ref: str, flags: str, gpu: int = 80 * GIB):  # type: ignore[no-untyped-def]
    model = load_model(model_ref)
    return predict(model, parse_flags("llamacpp", flags.split()), gpu_total_bytes=gpu)


def test_llama_31_8b_gguf_32k_f16_is_the_logs_4096_mib(tmp_path: Path) -> None:
    """tests/data/cases/llamacpp/ollama-hermes3-…: `size = 4096.00 MiB (32768 cells, 32 layers, 1/1 seqs)`."""
    path = write_gguf(tmp_path / "llama.gguf", LLAMA_31_8B, "Meta Llama 3.1 8B")
    result = ledger(str(path), "-c 32768 -np 1").engine
    assert result.token_capacity == 32768
    # 32768 cells × 32 layers × (1024 K + 1024 V elements) × 2 B
    assert result.kv_pool_bytes == 32768 * 32 * 2048 * 2 == 4096 * MIB


def test_the_same_from_config_json() -> None:
    result = ledger(str(CONFIGS / "meta-llama--Llama-3.1-8B.json"), "-c 32768 -np 1").engine
    assert result.kv_pool_bytes == 4096 * MIB


def test_q8_0_k_and_q4_0_v_apart(tmp_path: Path) -> None:
    """Qwen3-8B (36 layers, 8 KV heads × 128): K rows of 1024 q8_0 elements = 32 blocks × 34 B = 1088 B,
    V rows of 1024 q4_0 elements = 32 blocks × 18 B = 576 B."""
    path = write_gguf(tmp_path / "qwen3.gguf", QWEN3_8B, "Qwen3 8B")
    result = ledger(str(path), "-c 16384 -np 1 -ctk q8_0 -ctv q4_0").engine
    assert result.kv_pool_bytes == 16384 * 36 * (1088 + 576)


def test_context_is_padded_to_256_and_split_over_slots() -> None:
    """-c 10000 → GGML_PAD(10000, 256) = 10240; over 3 slots (not unified) each gets GGML_PAD(3413, 256) = 3584,
    so n_ctx = 3 × 3584 = 10752 cells (src/llama-context.cpp)."""
    config = str(CONFIGS / "meta-llama--Llama-3.1-8B.json")
    assert ledger(config, "-c 10000 -np 1").engine.token_capacity == 10240
    assert ledger(config, "-c 10000 -np 3").engine.token_capacity == 10752
    assert ledger(config, "-c 10000 -np 3 --kv-unified").engine.token_capacity == 10240


def test_defaults_are_the_training_context_and_four_unified_slots(tmp_path: Path) -> None:
    """tests/data/cases/llamacpp/gemma2-…: no -c, no -np → n_ctx 8192 (its training context), n_seq_max 4,
    kv_unified true."""
    path = write_gguf(tmp_path / "llama.gguf", LLAMA_31_8B, "Meta Llama 3.1 8B")
    result = ledger(str(path), "").engine
    assert (result.token_capacity, result.max_running_requests) == (131072, 4)
    assert any("--fit" in note for note in result.notes)  # its context search is named, not modelled


def test_gemma3_sliding_window_cache(tmp_path: Path) -> None:
    """Gemma 3 27B: 62 layers, every 6th full (llama.cpp's set_swa_pattern(6)): 10 full, 52 sliding; 16 KV
    heads × 128. -c 32768 -np 4 (not unified): 4 streams of 8192 cells; the SWA cache holds
    GGML_PAD(min(8192, 1024 + 512), 256) = 1536 cells per stream."""
    path = write_gguf(tmp_path / "gemma3.gguf", GEMMA3_27B, "Gemma 3 27b It")
    result = ledger(str(path), "-c 32768 -np 4").engine
    row = 16 * 128 * 2 * 2  # K + V, f16
    assert result.swa_token_capacity == 4 * 1536
    assert result.kv_pool_bytes == 4 * 8192 * 10 * row + 4 * 1536 * 52 * row
    full = ledger(str(path), "-c 32768 -np 4 --swa-full").engine
    assert full.kv_pool_bytes == 4 * 8192 * 62 * row


def test_a_cache_that_does_not_fit_beside_the_gguf_weights(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "llama.gguf", LLAMA_31_8B, "Meta Llama 3.1 8B", tensor_bytes=1 << 20)
    result = ledger(str(path), "-c 131072 -np 1", gpu=8 * GIB).engine
    assert not result.fits and result.token_capacity == 0
    assert result.shortfall_bytes == 16 * GIB - (8 * GIB - (1 << 30) - (1 << 20))


def test_bad_cache_types_and_ranks_name_the_flag() -> None:
    with pytest.raises(InputError, match="-ctk"):
        parse_flags("llamacpp", ["-ctk", "q9_9"])
    config = str(CONFIGS / "meta-llama--Llama-3.1-8B.json")
    with pytest.raises(InputError, match="-ctv"):
        ledger(config, "-c 4096 -ctv fp8")
    with pytest.raises(InputError, match="--tp"):
        ledger(config, "-c 4096 --tp 2")


def test_partial_offload_keeps_the_cpu_layers_kv_off_the_gpu_and_names_their_weights() -> None:
    """-ngl 15 of 32 layers: 18 layers' KV on the host (test_kv_placement.py); their weights are not modelled."""
    engine = ledger(str(CONFIGS / "meta-llama--Llama-3.1-8B.json"), "-c 4096 -ngl 15").engine
    assert engine.kv_pool_bytes == 4096 * 14 * 2048 * 2  # 14 layers on the GPU, f16
    assert any(note.startswith("not modelled: the weights of CPU layers") for note in engine.notes)


def test_the_weights_book_is_the_gguf_tensors_it_charges(tmp_path: Path) -> None:
    """One truth: the weights a GGUF plan shows (the ledger's book, "Before the start", the rank ledger) are
    the bytes its budget takes away, the file's tensors as stored (here one 1 MiB f16 tensor written by
    gguf.GGUFWriter), not the config's parameters × 2 B (Llama-3.1-8B: ~16 GB)."""
    path = write_gguf(tmp_path / "llama.gguf", LLAMA_31_8B, "Meta Llama 3.1 8B", tensor_bytes=1 << 20)
    plan = ledger(str(path), "-c 8192 -np 1")
    (rank,) = plan.ranks
    assert rank.weights.total_bytes == 1 << 20
    charged = [step for step in plan.engine.steps if step.label.startswith("− weights")]
    assert [step.bytes for step in charged] == [-(1 << 20)]
    assert rank.weights.total_params == 8_030_261_248  # the architecture's count stays (Llama-3.1-8B, 128,256 vocab)

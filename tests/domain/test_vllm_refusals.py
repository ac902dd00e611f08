"""Launches vLLM itself refuses, by release and GPU generation: kvtop refuses them with one line naming the
flag and vLLM's reason, and plans them where vLLM runs them (each case's engine outcome is the committed
engine-diff fixture's, tests/data/engine_diff/vllm-<version>.json)."""

from __future__ import annotations

import pytest

from kvtop.domain.errors import InputError
from tests.domain.vllm_engine_cases import engine_figures, engine_row, figures, plan

GEMMA = "google--gemma-3-27b-it"
GPT_OSS = "openai--gpt-oss-20b"
PHI3 = "microsoft--Phi-3-mini-4k-instruct"
LLAMA = "meta-llama--Llama-3.1-8B"
DEEPSEEK = "deepseek-ai--DeepSeek-V3"
DSA = "deepseek-ai--DeepSeek-V3.2"
LLAMA_FP8 = "nvidia--Llama-3.1-70B-Instruct-FP8"
QUARK = "haoyangli-amd--DeepSeek-V3.2-exp-ptpc"
QWEN_FP8 = "Qwen--Qwen3-30B-A3B-FP8"

REFUSED = [
    # V6: 0.33's TRITON_ATTN / TRITON_MLA refuse FP8 KV below sm89 ('native FP8 (fp8e4nv) requires SM89+')
    ("0.33.0", GEMMA, 8, "fp8", "sm80", "--kv-cache-dtype", "TRITON_ATTN"),  # mm-prefix LM: no FlashInfer
    ("0.33.0", GPT_OSS, 8, "fp8", "sm80", "--kv-cache-dtype", "TRITON_ATTN"),  # attention sinks
    ("0.33.0", PHI3, 8, "fp8", "sm80", "--kv-cache-dtype", "TRITON_ATTN"),  # head size 96
    ("0.33.0", DEEPSEEK, 8, "fp8", "sm80", "--kv-cache-dtype", "TRITON_MLA"),
    # V8: no MLA backend with FP8 KV (0.13's TRITON_MLA has none), none for sparse MLA below Hopper
    ("0.13.0", DEEPSEEK, 8, "fp8", "sm80", "--kv-cache-dtype", "TRITON_MLA takes no FP8"),
    ("0.13.0", DSA, 8, "auto", "sm80", "--gpu", "sparse MLA"),
    ("0.33.0", DSA, 8, "auto", "sm80", "--gpu", "sparse MLA"),
    # V9: the weight format's minimum compute capability
    ("0.13.0", LLAMA_FP8, 8, "auto", "sm80", "--gpu", "modelopt FP8 weights"),
    ("0.13.0", QUARK, 8, "auto", "sm80", "--gpu", "quark FP8 weights"),
    ("0.33.0", QUARK, 8, "auto", "sm80", "--gpu", "quark FP8 weights"),
    # V14 / V10: block-FP8 experts whose TP shard breaks the 128 blocks (768 / 4 = 192)
    ("0.13.0", QWEN_FP8, 4, "auto", "sm90", "--tp", "768 / 4 = 192"),
    ("0.13.0", QWEN_FP8, 8, "auto", "sm100", "--tp", "768 / 8 = 96"),
    ("0.33.0", QWEN_FP8, 4, "auto", "sm80", "--tp", "No FP8 MoE backend"),
]


@pytest.mark.parametrize(("version", "config", "tp", "kv", "gpu", "flag", "reason"), REFUSED)
def test_kvtop_refuses_where_vllm_does(
    version: str, config: str, tp: int, kv: str, gpu: str, flag: str, reason: str
) -> None:
    assert engine_row(version, config, tp, kv, gpu)["status"] == "refused"
    with pytest.raises(InputError) as refused:
        plan(version, config, tp, kv, gpu)
    message = str(refused.value)
    assert message.startswith(f"{flag}: vLLM {version} ") and reason in message and "\n" not in message


PLANNED = [
    ("0.13.0", GEMMA, 8, "fp8", "sm80"),  # before PR #43914 TRITON_ATTN takes FP8 KV on sm80
    ("0.33.0", LLAMA, 8, "fp8", "sm80"),  # FLASHINFER takes FP8 KV on sm80
    ("0.33.0", GEMMA, 8, "fp8", "sm90"),  # sm89+
    ("0.33.0", LLAMA_FP8, 8, "auto", "sm80"),  # ModelOpt FP8 from sm80 (PR #50019)
    ("0.33.0", QWEN_FP8, 4, "auto", "sm90"),  # an FP8 MoE kernel takes the 192-wide shard
    ("0.33.0", QWEN_FP8, 2, "auto", "sm80"),  # 768 / 2 = 384: whole blocks
]


@pytest.mark.parametrize(("version", "config", "tp", "kv", "gpu"), PLANNED)
def test_kvtop_plans_what_vllm_runs(version: str, config: str, tp: int, kv: str, gpu: str) -> None:
    assert figures(plan(version, config, tp, kv, gpu)) == engine_figures(
        engine_row(version, config, tp, kv, gpu)
    )


def test_expert_parallel_keeps_whole_blocks() -> None:
    """With --enable-expert-parallel each rank holds whole experts, so no shard check applies."""
    assert plan("0.13.0", QWEN_FP8, 4, "auto", "sm90", "--enable-expert-parallel").engine.fits


def test_an_unnamed_gpu_refuses_nothing() -> None:
    """The GPU generation comes from its name; without one vLLM's choice is unknown and nothing is refused."""
    from kvtop.domain.launch import parse_flags
    from kvtop.domain.ledger import predict
    from kvtop.sources.hub import load_model
    from tests.data_paths import CONFIGS

    flags = parse_flags("vllm", ["--tp", "8", "--kv-cache-dtype", "fp8_e4m3", "--engine-version", "0.33.0"])
    model = load_model(str(CONFIGS / f"{GEMMA}.json"))
    assert predict(model, flags, gpu_total_bytes=80 << 30, gpu_name=None).engine.fits

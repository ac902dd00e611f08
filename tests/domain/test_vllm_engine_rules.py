"""vLLM's rules that its own sizing code showed kvtop had wrong (docs/fidelity.md, issue 20), by release and
GPU generation: each expected figure is the one vLLM printed for the same inputs (the committed engine-diff
fixture, cited per case), asserted literally and against the fixture row."""

from __future__ import annotations

import pytest

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.eras import (
    ASYNC_SCHEDULING_ERAS,
    BACKEND_SELECTION_ERAS,
    CHECKPOINT_KV_DTYPE_ERAS,
    CHUNKED_LOCAL_HYBRID_ERAS,
    chunked_local_hybrid,
    honours_checkpoint_kv_dtype,
)
from kvtop.domain.gpus import compute_capability
from tests.domain.vllm_engine_cases import engine_figures, engine_row, figures, plan

LLAMA_FP8 = "nvidia--Llama-3.1-70B-Instruct-FP8"
QWEN_NVFP4 = "nvidia--Qwen3-235B-A22B-NVFP4"
DEEPSEEK = "deepseek-ai--DeepSeek-V3"
DSA = "deepseek-ai--DeepSeek-V3.2"
GEMMA = "google--gemma-3-27b-it"
PHI3 = "microsoft--Phi-3-mini-4k-instruct"
MISTRAL = "mistralai--Mistral-7B-v0.1"
LLAMA4 = "meta-llama--Llama-4-Scout-17B-16E-Instruct"
QWEN_NEXT = "Qwen--Qwen3-Next-80B-A3B-Thinking"
NANO = "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"
NEMOTRON_H = "nvidia--Nemotron-H-56B-Base-8K"


def _same_as_engine(version: str, config: str, tp: int, kv: str, gpu: str) -> tuple[int, int, int, int]:
    kvtop = figures(plan(version, config, tp, kv, gpu))
    assert kvtop == engine_figures(engine_row(version, config, tp, kv, gpu))
    return kvtop


@pytest.mark.parametrize(
    ("config", "tokens", "blocks"),
    [(LLAMA_FP8, 2_097_152, 131_072), (QWEN_NVFP4, 1_784_800, 111_550)],
)
def test_auto_kv_follows_a_modelopt_checkpoints_fp8_from_v0_14(config: str, tokens: int, blocks: int) -> None:
    """V2, vllm-0.33.0.json TP 8 auto sm90: `kv_cache_quant_algo: FP8` (hf_quant_config.json) makes `auto`
    fp8_e4m3, half the bytes per token of bf16; v0.13.0 keeps the model dtype (vllm-0.13.0.json: half the tokens)."""
    ledger = plan("0.33.0", config, 8, "auto", "sm90")
    assert ledger.kv_format == "fp8_e4m3"
    assert _same_as_engine("0.33.0", config, 8, "auto", "sm90")[:2] == (tokens, blocks)
    old = plan("0.13.0", config, 8, "auto", "sm90")
    assert old.kv_format == "bf16" and figures(old) == engine_figures(
        engine_row("0.13.0", config, 8, "auto", "sm90")
    )
    assert [honours_checkpoint_kv_dtype(ResolvedVersion(text=v)) for v in ("0.13.0", "0.14.0", None)] == [
        False,
        True,
        True,
    ]
    assert CHECKPOINT_KV_DTYPE_ERAS[-1].since == "0.14.0" and "#30785" in CHECKPOINT_KV_DTYPE_ERAS[-1].source


@pytest.mark.parametrize(
    ("version", "kv", "gpu", "expected"),
    [
        ("0.33.0", "auto", "sm90", (611_184, 38_199, 16, 1_124_352)),  # FLASH_ATTN_MLA
        ("0.33.0", "fp8", "sm90", (1_222_336, 19_099, 64, 2_248_704)),  # FLASHMLA (FLASH_ATTN_MLA: no FP8)
        ("0.33.0", "auto", "sm100", (611_168, 19_099, 32, 2_248_704)),  # FLASHINFER_MLA
        ("0.33.0", "auto", "sm80", (611_184, 38_199, 16, 1_124_352)),  # TRITON_MLA
        ("0.13.0", "auto", "sm90", (611_136, 9_549, 64, 4_497_408)),  # forced 64 for FlashMLA
        ("0.13.0", "auto", "sm100", (611_072, 4_774, 128, 8_994_816)),  # CUTLASS_MLA
        ("0.13.0", "auto", "sm80", (611_184, 38_199, 16, 1_124_352)),  # TRITON_MLA
    ],
)
def test_mla_block_is_the_backends_by_gpu_and_release(
    version: str, kv: str, gpu: str, expected: tuple[int, int, int, int]
) -> None:
    """V3, DeepSeek-V3 TP 8 (61 layers × 576-wide latent, 70,272 B per block-token of bf16): the block size is
    the attention backend's; tokens = int(blocks / cdiv(32,768, block) × 32,768) (vllm-<version>.json)."""
    assert _same_as_engine(version, DEEPSEEK, 8, kv, gpu) == expected


def test_two_batches_in_flight_by_default_from_v0_14() -> None:
    """V5, Gemma-3-27B TP 8 auto sm90, vllm-0.33.0.json: async scheduling is on by default, so each sliding-window
    group reserves 2 × 8,192 tokens in flight: 1,000,924 tokens; `--no-async-scheduling` is the one batch
    kvtop planned before (hand arithmetic: 2,048 + 6 × (cdiv(1,023 + 8,192, 16) + 1) = 5,510 blocks a
    request ⇒ int(262,144 / 5,510 × 32,768) = 1,558,971)."""
    assert _same_as_engine("0.33.0", GEMMA, 8, "auto", "sm90")[0] == 1_000_924
    one_batch = plan("0.33.0", GEMMA, 8, "auto", "sm90", "--no-async-scheduling")
    assert one_batch.token_capacity == 1_558_971 == int(262_144 / 5_510 * 32_768)
    assert ASYNC_SCHEDULING_ERAS[-1].since == "0.14.0"


def test_b200_takes_the_16384_batch_tier() -> None:
    """V5 on sm100, vllm-0.33.0.json: B200 (≥ 160 GiB) defaults to 16,384 batched tokens: 2 × 16,384 in flight,
    598,935 tokens for Gemma-3 TP 8; 0.13.0 keeps 8,192 and one batch (its figure is blocks // 7 × 16)."""
    assert _same_as_engine("0.33.0", GEMMA, 8, "auto", "sm100")[0] == 598_935
    assert engine_row("0.33.0", GEMMA, 8, "auto", "sm100")["max_num_batched_tokens"] == 16_384
    assert engine_row("0.13.0", GEMMA, 8, "auto", "sm100")["max_num_batched_tokens"] == 8_192


def test_before_pr_41069_the_token_print_divides_by_every_group() -> None:
    """V12, Gemma-3-27B TP 8 auto, vllm-0.13.0.json: 1 full + 6 sliding-window groups of 10:
    262,144 blocks // 7 × 16 = 599,184 (not // 2 kinds = 2,097,152)."""
    tokens, blocks, _, _ = _same_as_engine("0.13.0", GEMMA, 8, "auto", "sm90")
    assert (tokens, blocks) == (599_184, 262_144) and tokens == blocks // 7 * 16


@pytest.mark.parametrize(
    ("config", "gpu", "tokens"),
    [(PHI3, "sm90", 870_407), (MISTRAL, "sm90", 4_191_029), (MISTRAL, "sm80", 10_465_319)],
)
def test_a_configs_sliding_window_windows_every_layer(config: str, gpu: str, tokens: int) -> None:
    """V4, vllm-0.33.0.json TP 8 auto: Phi-3-mini-4k (window 2,047) and Mistral-7B-v0.1 (4,096) state
    `sliding_window` with no `layer_types`: every layer is a SlidingWindowSpec (A100's 2,048-token batch
    reserves fewer blocks than H100's 8,192)."""
    assert _same_as_engine("0.33.0", config, 8, "auto", gpu)[0] == tokens


def test_v0_13_turns_the_hybrid_manager_off_for_chunked_local_attention() -> None:
    """V11, Llama-4-Scout TP 8 auto, vllm-0.13.0.json: one full-attention group of 48 layers,
    109,226 blocks × 16 = 1,747,616 tokens; v0.33.0 keeps chunked groups (its own figure). The env default flips to
    1 in v0.14.0 (its wheel's envs.py:1468-1469; v0.13.0's reads "0")."""
    assert _same_as_engine("0.13.0", LLAMA4, 8, "auto", "sm90")[:2] == (1_747_616, 109_226)
    assert _same_as_engine("0.33.0", LLAMA4, 8, "auto", "sm90")[0] == 2_150_921
    assert [chunked_local_hybrid(ResolvedVersion(text=v)) for v in ("0.13.0", "0.14.0", None)] == [
        False,
        True,
        True,
    ]
    assert [era.since for era in CHUNKED_LOCAL_HYBRID_ERAS] == ["", "0.10.1", "0.14.0"]


@pytest.mark.parametrize(
    ("version", "gpu", "fmt", "expected"),
    [
        (
            "0.33.0",
            "sm90",
            "fp8_ds_mla",
            (893_504, 13_961, 64, 3_076_352),
        ),  # FLASHMLA_SPARSE: 64 × 61 × (656 + 132)
        ("0.33.0", "sm100", "fp8_e4m3", (994_432, 15_538, 64, 2_764_032)),  # FLASHINFER_MLA_SPARSE: 576 + 132
        ("0.13.0", "sm100", "fp8_e4m3", (893_504, 13_961, 64, 3_076_352)),  # every GPU: fp8 → fp8_ds_mla
    ],
)
def test_deepseek_v32_fp8_is_stored_as_fp8_ds_mla_where_flashmla_sparse_runs_it(
    version: str, gpu: str, fmt: str, expected: tuple[int, int, int, int]
) -> None:
    """V13, DeepSeek-V3.2 TP 8 fp8 (vllm-<version>.json)."""
    assert _same_as_engine(version, DSA, 8, "fp8", gpu) == expected
    assert plan(version, DSA, 8, "fp8", gpu).kv_format == fmt


def test_backend_eras_and_gpu_generations() -> None:
    assert [era.since for era in BACKEND_SELECTION_ERAS] == ["", "0.18.0"]
    assert [
        compute_capability(n) for n in ("A100-80GB", "H100", "B200", "NVIDIA H100 80GB HBM3", "L40S")
    ] == [
        (8, 0),
        (9, 0),
        (10, 0),
        (9, 0),
        (8, 9),
    ]
    assert compute_capability("TPU-v5") is None and compute_capability(None) is None


@pytest.mark.parametrize(
    ("version", "config", "tp", "kv", "gpu", "expected"),
    [
        # align mode (0.33): 16 × cdiv(137,216, 16 × 1,024) = 144; 228 + 3 groups × 2 state blocks = 234 a request
        ("0.33.0", QWEN_NEXT, 8, "auto", "sm80", (3_398_909, 24_272, 144, 1_769_472)),
        # H100: FlashInfer's GDN prefill checkpoints on 64: 64 × cdiv(137,216, 65,536) = 192; 171 + 3 × 3 = 180
        ("0.33.0", QWEN_NEXT, 8, "auto", "sm90", (3_313_937, 18_204, 192, 2_359_296)),
        ("0.33.0", QWEN_NEXT, 8, "fp8", "sm90", (6_391_222, 21_845, 320, 1_966_080)),
        ("0.33.0", NANO, 8, "auto", "sm80", (11_568_851, 26_479, 528, 1_622_016)),  # Mamba2: 3 state blocks
        ("0.33.0", NEMOTRON_H, 1, "auto", "sm90", (104_038, 254, 4_128, 169_082_880)),  # L 8,192: 2 + 6 × 3
        # 0.13: no prefix caching for hybrids, 16-aligned (32 on Blackwell for head size 256); blocks // 4 × block
        ("0.13.0", QWEN_NEXT, 8, "auto", "sm90", (873_792, 24_272, 144, 1_769_472)),
        ("0.13.0", QWEN_NEXT, 8, "auto", "sm100", (873_760, 21_845, 160, 1_966_080)),
    ],
)
def test_hybrid_mamba_block_covers_the_state_page(
    version: str, config: str, tp: int, kv: str, gpu: str, expected: tuple[int, int, int, int]
) -> None:
    """V1 (vllm-<version>.json): the attention block grows until its page covers one Mamba layer's state
    (docs/engines/vllm.md §4.4); Mamba layers group with the attention layers (§4.1)."""
    assert _same_as_engine(version, config, tp, kv, gpu) == expected


def test_gdn_state_page_is_conv_and_ssm_in_the_model_dtype() -> None:
    """Qwen3-Next TP8: conv (2 × 16 × 128 + 32 × 128) / 8 × 3 × 2 B + ssm 32 / 8 × 128 × 128 × 2 B = 137,216 B;
    vLLM pads it to the 144-token attention page: 144 × 1,024 B = 147,456 ('Padding mamba page size by 7.46%')."""
    state = plan("0.33.0", QWEN_NEXT, 8, "auto", "sm80").ranks[0].kv.pool("state")
    assert state is not None and state.layers == 36
    assert state.bytes_per_request == 36 * (1_024 * 3 * 2 + 4 * 128 * 128 * 2) == 36 * 137_216
    log = engine_row("0.33.0", QWEN_NEXT, 8, "auto", "sm80")["log"]
    assert any("Padding mamba page size by 7.46%" in line for line in log)
    assert round(100 * (147_456 - 137_216) / 137_216, 2) == 7.46


def test_hybrid_without_prefix_caching_takes_one_state_block_and_no_checkpoint_alignment() -> None:
    """`--no-enable-prefix-caching` (mamba_cache_mode 'none', MambaSpec.max_memory_usage_bytes = one page):
    Qwen3-Next TP8 on H100, hand arithmetic from §4.4: block 16 × cdiv(137,216, 16 × 1,024) = 144 (no FlashInfer
    checkpoint alignment), 18,204 → 24,272 blocks of 12 × 144 × 1,024 B; a request 228 + 3 × 1 = 231 blocks."""
    ledger = plan("0.33.0", QWEN_NEXT, 8, "auto", "sm90", "--no-enable-prefix-caching")
    assert figures(ledger)[1:3] == (24_272, 144)
    assert ledger.token_capacity == int(24_272 / 231 * 32_768)


def test_hybrid_under_pipeline_parallelism_is_refused_by_name_before_0_11() -> None:
    """From 0.11.0 kvtop plans it (every stage's groups projected per worker: v0.11.0 kv_cache_utils.py :1211,
    :1249-1271; v0.21.0 :1880, :1922; tests/engines/test_pp_stage_parts.py, the engine's own runs at 0.33.0); v0.10.2
    groups each worker's own specs (v1/engine/core.py:193), which kvtop does not model for a Mamba hybrid."""
    from kvtop.domain.errors import UnsupportedModelError
    from kvtop.domain.launch import parse_flags
    from kvtop.domain.ledger import predict
    from kvtop.sources.hub import load_model
    from tests.conftest import CONFIGS

    model = load_model(str(CONFIGS / f"{QWEN_NEXT}.json"))
    flags = parse_flags("vllm", ["--engine-version", "0.10.2", "--tp", "4", "--pp", "2"])
    with pytest.raises(UnsupportedModelError, match=r"^engine: vLLM's hybrid Mamba layout .* at pp 1 only before 0.11"):
        predict(model, flags, gpu_total_bytes=80 << 30, gpu_name="H100")


def test_a_hybrid_refusal_names_every_condition_it_breaks() -> None:
    """Kimi-Linear (MLA + KDA) at pp 2 on 0.26.0 breaks two conditions: an MLA hybrid's block is read from 0.27.0
    (platforms/interface.py:883-889, absent from v0.26.0) and PP hybrids from 0.11.0 (pp_groups.MERGED_GROUPS_ERAS):
    at 0.10.2 both are broken. The message once named one (the MLA reason dropped); at pp 1 it names the MLA reason
    alone."""
    from kvtop.domain.errors import UnsupportedModelError
    from kvtop.domain.launch import parse_flags
    from kvtop.domain.ledger import predict
    from kvtop.sources.hub import load_model
    from tests.conftest import CONFIGS

    model = load_model(str(CONFIGS / "heldout" / "wave5" / "moonshotai--Kimi-Linear-48B-A3B-Instruct.json"))

    def refusal(*flags: str) -> str:
        with pytest.raises(UnsupportedModelError) as found:
            predict(model, parse_flags("vllm", ["--engine-version", "0.10.2", *flags]), gpu_total_bytes=80 << 30,
                    gpu_name="H100")  # fmt: skip
        return str(found.value)

    assert "(an MLA hybrid before 0.27.0; pp 2 before 0.11.0; vLLM 0.10.2)" in refusal("--pp", "2")
    assert "(an MLA hybrid before 0.27.0; vLLM 0.10.2)" in refusal()

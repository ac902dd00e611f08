"""LMDeploy's rules by release (docs/engines/lmdeploy.md §1–§6), each against hand arithmetic from the
spec and the engine source it cites, on real configs from tests/data/configs."""

from __future__ import annotations

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.lmdeploy.eras import default_max_batch
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

MIB, GIB = 1 << 20, 1 << 30
A100_BYTES = 81_920 * MIB
LLAMA_8B = "meta-llama--Llama-3.1-8B-Instruct.json"
LLAMA_8B_BLOCK = 32 * 8 * 2 * 64 * 128 * 2  # layers × KV heads × (K, V) × tokens × head_dim × bf16 = 8,388,608 B


def _model(name: str) -> ModelSpec:
    return load_model(str(CONFIGS / name))


def _plan(config: str, flags: list[str], *, free: int | None = None, total: int = A100_BYTES,
          gpu: str | None = "A100-80GB") -> Ledger:  # fmt: skip
    measured = MeasuredInputs(free_after_load_bytes=free)
    return predict(_model(config), parse_flags("lmdeploy", flags), gpu_total_bytes=total, gpu_name=gpu, measured=measured)


# --- §2.1 TurboMind block bytes ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "flags", "block_bytes"),
    [
        # case 1703: 60 layers × 40 KV heads (MHA) × 2 × 64 × 128 × 2 B = 75 MiB
        ("internlm--internlm-20b.json", ["--engine-version", "0.4.2"], 78_643_200),
        # case 3950: int4 = 64/2 + 4 B (fp16 scale + zero) per token-head per K/V; all 24 layers, the
        # 12 sliding-window ones too: 24 × 8 × 2 × 64 × 36 = 884,736 B ('0.844 MB')
        ("openai--gpt-oss-20b.json", ["--quant-policy", "4", "--engine-version", "0.10.0"], 884_736),
        # case 4285: 8 KV heads over TP 8 = 1 per rank: 80 × 1 × 2 × 64 × 128 × 2 = 2.5 MiB
        ("Qwen--Qwen2.5-72B.json", ["--tp", "8", "--engine-version", "0.11.1"], 2_621_440),
        # tutorial case: v0.1.0's 128-token blocks (cache_block_seq_len 128 ≤ v0.2.x): 32 × 32 × 2 × 128 × 128 × 2
        ("meta-llama--Llama-2-7b-hf.json", ["--engine-version", "0.1.0"], 67_108_864),
        # int8 (v0.4.0+): 128 + 4 B per token-head per K/V
        (LLAMA_8B, ["--quant-policy", "8", "--engine-version", "0.10.0"], 32 * 8 * 2 * 64 * (128 + 4)),
        # before v0.4.0 (PR #1377) quant_policy 4 was offline int8 with per-layer scales: 1 B, no per-token params
        (LLAMA_8B, ["--quant-policy", "4", "--engine-version", "0.3.0"], 32 * 8 * 2 * 64 * 128),
    ],
)
def test_turbomind_block_bytes(config: str, flags: list[str], block_bytes: int) -> None:
    ledger = _plan(config, flags, free=40 * GIB)
    assert ledger.kv_bytes_per_token * ledger.engine.page_size == block_bytes
    assert ledger.engine.kv_pool_bytes == ledger.engine.num_blocks * block_bytes


@pytest.mark.parametrize(("version", "per_layer_token"), [("0.12.1", 2 * 576 * 2), ("0.12.2", 576 * 2)])
def test_turbomind_stores_the_mla_latent_once_from_v0_12_2(version: str, per_layer_token: int) -> None:
    """§2.1: `share_kv` (PR #4373, first in v0.12.2): head_dim 576 stored once; before, as K and as V."""
    ledger = _plan("deepseek-ai--DeepSeek-V3.json", ["--backend", "turbomind", "--tp", "8", "--engine-version", version],
                   free=40 * GIB, gpu="H200")  # fmt: skip
    assert ledger.kv_bytes_per_token == 61 * per_layer_token


@pytest.mark.parametrize(("version", "block_len"), [("0.2.6", 128), ("0.3.0", 64)])
def test_turbomind_block_length_default(version: str, block_len: int) -> None:
    """§5: cache_block_seq_len 128 up to v0.2.x (target_model/base.py), 64 from v0.3.0."""
    assert _plan(LLAMA_8B, ["--engine-version", version], free=40 * GIB).engine.page_size == block_len


def test_turbomind_refuses_fp8_kv() -> None:
    with pytest.raises(InputError, match="^--quant-policy: TurboMind has no FP8 KV cache"):
        _plan(LLAMA_8B, ["--quant-policy", "16"], free=40 * GIB)


# --- §1, §2.2 TurboMind block count by era ----------------------------------------------------------


def test_v0_1_0_takes_a_share_of_total_memory() -> None:
    """Tutorial case: size_t(20,470 MiB × 0.5) // 64 MiB = 159 (v0.1.0 GetBlockCount, default ratio 0.5)."""
    ledger = _plan("meta-llama--Llama-2-7b-hf.json", ["--engine-version", "0.1.0"], total=20_470 * MIB, gpu=None)
    assert (ledger.engine.num_blocks, ledger.token_capacity) == (159, 159 * 128)
    assert ledger.engine.memory_fraction == 0.5


@pytest.mark.parametrize(
    ("free", "blocks"),
    [
        (int(1.7925 * GIB), 1_740),  # case 3950: 1,740 blocks = session_len truncated to 111,360
        (1_924_300_800, 1_740),  # 1,740 × 884,736 / 0.8: the least free memory that gives 1,740
        (1_924_300_799, 1_739),
    ],
)
def test_from_v0_2_2_a_share_of_free_memory_after_the_weights(free: int, blocks: int) -> None:
    """PR #973 (v0.2.2): size_t(free × 0.8) // block_bytes; tokens = blocks × 64."""
    ledger = _plan("openai--gpt-oss-20b.json", ["--quant-policy", "4", "--engine-version", "0.10.0"], free=free,
                   total=8 * GIB, gpu="RTX2080")  # fmt: skip
    assert (ledger.engine.num_blocks, ledger.token_capacity) == (blocks, blocks * 64)
    assert ledger.context_length == 131_072 and ledger.engine.steps[-1].label == "session_len truncated to the tokens"


def test_a_ratio_of_one_or_more_is_a_block_count() -> None:
    ledger = _plan(LLAMA_8B, ["--cache-max-entry-count", "1000", "--engine-version", "0.10.0"], free=40 * GIB)
    assert (ledger.engine.num_blocks, ledger.token_capacity) == (1000, 64_000)
    with pytest.raises(InputError, match="^--cache-max-entry-count: LMDeploy 0.15.0 takes a share below 1"):
        _plan(LLAMA_8B, ["--cache-max-entry-count", "1000", "--engine-version", "0.15.0"], free=40 * GIB)


def test_v0_15_object_cache_budget() -> None:
    """§3 (PR #4717): cache_bytes = size_t(free × ratio); blocks ≤ cache_bytes // block_bytes."""
    ledger = _plan(LLAMA_8B, ["--engine-version", "0.15.0"], free=40 * GIB)
    assert ledger.engine.kv_budget_bytes == int(40 * GIB * 0.8)
    assert ledger.engine.num_blocks == int(40 * GIB * 0.8) // LLAMA_8B_BLOCK == 4096
    assert any(step.label.startswith("object cache") for step in ledger.engine.steps)


STAGING = "− torch's cache of the weights' staging (first GPU)"


def _staged(ledger: Ledger) -> int | None:
    return next((-step.bytes for step in ledger.engine.steps if step.label == STAGING and step.bytes), None)


@pytest.mark.parametrize(
    ("flags", "staged"),
    [
        # §15.1 (v0.8.0, PR #3423): the LM head staged transposed and made contiguous: 2 × 128,256 × 4,096 × 2 B (bf16),
        # beside one layer's MLP: 3 matrices of 14,336 × 4,096 read whole, their 3 zero-pad clones, one rank slice
        (["--engine-version", "0.8.0"], 2 * 128_256 * 4_096 * 2 + 7 * 14_336 * 4_096 * 2),
        # its rank slice at TP 2: 128,256 / 2 = 64,128 rows (the vocabulary divides: no `pad_weight` rows); the MLP's
        # matrices are read whole whatever the TP, the slice made contiguous is 7,168 rows
        (["--engine-version", "0.8.0", "--tp", "2"], 2 * 64_128 * 4_096 * 2 + (6 * 14_336 + 7_168) * 4_096 * 2),
        # PR #2621's loader (v0.6.2) is the first without the per-shard empty_cache; until v0.8.0 the LM head is
        # staged as it is stored (contiguous rows): one copy
        (["--engine-version", "0.6.2"], 128_256 * 4_096 * 2 + 7 * 14_336 * 4_096 * 2),
        (["--engine-version", "0.7.3"], 128_256 * 4_096 * 2 + 7 * 14_336 * 4_096 * 2),
        # until v0.6.1 each checkpoint shard's reader emptied torch's cache (BaseReader.clean_up)
        (["--engine-version", "0.6.1"], None),
        (["--engine-version", "0.4.2"], None),
        # PR #3570 (first in v0.9.0) empties torch's cache after the conversion
        (["--engine-version", "0.9.0"], None),
        # a converted workspace is read by TurboMind itself: nothing staged
        (["--engine-version", "0.8.0", "--turbomind-workspace"], None),
    ],
)
def test_turbomind_before_v0_9_keeps_torchs_staging_of_the_lm_head(flags: list[str], staged: int | None) -> None:
    ledger = _plan(LLAMA_8B, flags)
    assert _staged(ledger) == staged
    if staged is not None:  # the share is of the free memory less the staging
        free = next(step.bytes for step in ledger.engine.steps if step.label.startswith("free after weights"))
        assert free is not None
        tp = 2 if "--tp" in flags else 1  # 8 KV heads split over TP
        assert ledger.engine.num_blocks == int((free - staged) * 0.8) // (LLAMA_8B_BLOCK // tp)


def test_a_measured_free_memory_holds_the_staging_already() -> None:
    assert _staged(_plan(LLAMA_8B, ["--engine-version", "0.8.0"], free=40 * GIB)) is None


def test_a_workspace_is_turbominds() -> None:
    """§15.1: LMDeploy takes a model path holding `triton_models/` as TurboMind's (turbomind/supported_models.py
    `is_supported` asks for that directory before any architecture); the PyTorch engine reads a checkpoint's
    config.json, which a workspace has not: --backend pytorch with it is refused, not planned as a checkpoint."""
    ledger = _plan(LLAMA_8B, ["--engine-version", "0.8.0", "--turbomind-workspace"])
    assert any(note.startswith("backend: TurboMind: a converted workspace") for note in ledger.engine.notes)
    with pytest.raises(InputError, match="^--turbomind-workspace: a TurboMind workspace"):
        _plan(LLAMA_8B, ["--engine-version", "0.8.0", "--backend", "pytorch", "--turbomind-workspace"])


def test_case_3411_internvl_from_the_hub_before_v0_9() -> None:
    """Case 3411 (InternVL2.5-8B-MPO on an A100 80GB, a main build of mid-April 2025 whose version.py says
    0.7.2.post1, before PR #3423: 6,214 blocks of 8 MiB logged; lmdeploy.md §15.1, §15.4). The staging is
    InternLM2.5-7B's LM head, 92,553 × 4,096 × 2 B = 758,194,176 (bf16, one copy), and one layer's MLP: w1, w2, w3
    (14,336 × 4,096 × 2 B = 117,440,512 each) read whole, their three zero-pad clones and one contiguous copy, 7 ×
    117,440,512 = 822,083,584: 1,580,277,760 × 0.8 / 8 MiB = 150.7 blocks fewer than the same plan from v0.9.0,
    all of them toward the log's count (the plan stays above it)."""
    model = load_model(str(CONFIGS.parent / "calibration" / "configs" / "OpenGVLab--InternVL2_5-8B-MPO.RECONSTRUCTED.json"))

    def blocks(version: str) -> tuple[int, int | None]:
        ledger = predict(model, parse_flags("lmdeploy", ["--engine-version", version]), gpu_total_bytes=A100_BYTES,
                         gpu_name="A100-80GB")  # fmt: skip
        return ledger.engine.num_blocks, _staged(ledger)

    (before, staged), (after, _) = blocks("0.7.2.post1"), blocks("0.9.0")
    assert staged == 758_194_176 + 822_083_584
    assert after - before in (150, 151)
    assert before > 6_214


def test_every_rank_gets_the_count_of_the_least_free_one() -> None:
    """§6: free memory MIN-reduced over the TP group before dividing: one count for all ranks."""
    ledger = _plan("Qwen--Qwen2.5-72B.json", ["--tp", "8"], free=int(61_223 * MIB))
    assert {rank.token_capacity for rank in ledger.ranks} == {19_591 * 64}  # case 4285's count


@pytest.mark.parametrize(
    ("version", "gpu", "size"),
    [("0.5.3", "H100", 128), ("0.6.0", "A100-80GB", 256), ("0.6.0", "H100", 512), ("0.10.0", "A100-80GB", 384),
     ("0.10.0", "H200", 1024), ("0.10.0", "L40S", 128)],
)  # fmt: skip
def test_default_max_batch_size_by_release_and_gpu(version: str, gpu: str, size: int) -> None:
    """§5: `get_max_batch_size` (lmdeploy/utils.py): 128 ≤ v0.5; v0.6 a100/a800 256, h100/h800 512; v0.10 384/1024."""
    assert default_max_batch(ResolvedVersion(text=version), gpu)[0] == size


# --- §4 the PyTorch engine -------------------------------------------------------------------------


FREE = 60 * GIB
VOCAB = 128_256


@pytest.mark.parametrize(
    ("version", "blocks"),
    [
        ("0.2.0", int(FREE * 0.7 / LLAMA_8B_BLOCK)),  # gpu_mem_percent 0.7, the ratio ignored
        ("0.2.4", int(FREE * 0.8 / LLAMA_8B_BLOCK)),  # PR #1166
        # PR #1272: runtime = max_prefill_token_num (4,096 before v0.6.0's CLI default) × vocab × 7
        ("0.5.0", int((FREE - 4096 * VOCAB * 7) * 0.8 / LLAMA_8B_BLOCK)),
        # PR #3745: (8,192 + 2 × 256 batches on an A100 at v0.9.2) × vocab × 2
        ("0.9.2", int((FREE - (8192 + 2 * 256) * VOCAB * 2) * 0.8 / LLAMA_8B_BLOCK)),
        # PR #4552: int((free − runtime) × 0.8) // block; 384 batches on an A100 from v0.10.0
        ("0.13.0", int((FREE - (8192 + 2 * 384) * VOCAB * 2) * 0.8) // LLAMA_8B_BLOCK),
    ],
)
def test_pytorch_engine_blocks_by_era(version: str, blocks: int) -> None:
    ledger = _plan(LLAMA_8B, ["--backend", "pytorch", "--engine-version", version], free=FREE)
    assert ledger.engine.num_blocks == blocks
    assert ledger.token_capacity == blocks * 64


def test_pytorch_engine_halves_the_prefill_until_16_blocks_fit() -> None:
    """`_get_runtime_size`: with 2 GiB free the 8,192-token reserve leaves < 16 blocks; 4,096 fits."""
    free = 2 * GIB
    ledger = _plan(LLAMA_8B, ["--backend", "pytorch", "--engine-version", "0.13.0", "--max-batch-size", "128"],
                   free=free)  # fmt: skip
    runtime = (4096 + 2 * 128) * VOCAB * 2
    assert int((free - (8192 + 256) * VOCAB * 2) * 0.8) // LLAMA_8B_BLOCK < 16 <= int((free - runtime) * 0.8) // LLAMA_8B_BLOCK
    assert ledger.engine.reserve_bytes == runtime
    assert ledger.engine.num_blocks == int((free - runtime) * 0.8) // LLAMA_8B_BLOCK
    assert any("8,192 → 4,096" in note for note in ledger.engine.notes)


@pytest.mark.parametrize(("gpu", "block"), [("A100-80GB", 32), ("H100", 64)])
def test_pytorch_mla_block_is_32_without_flashmla(gpu: str, block: int) -> None:
    """`_adjust_block_size`: head 576 forces 32 tokens unless FlashMLA (SM90+) runs, which needs 64;
    the latent once per layer (v_head_dim 0), bf16: 61 × block × 576 × 2 B."""
    ledger = _plan("deepseek-ai--DeepSeek-V3.json", ["--tp", "8"], free=FREE, gpu=gpu)
    assert ledger.engine.page_size == block
    assert ledger.engine.steps[-3].value == 61 * block * 576 * 2


@pytest.mark.parametrize(("version", "block_bytes"), [("0.11.0", 24 * (512 + 512 + 64 + 64)), ("0.11.1", 24 * (512 + 512 + 256 + 256))])
def test_pytorch_descriptors_align_to_256_bytes_from_v0_11_1(version: str, block_bytes: int) -> None:
    """PR #4026 (v0.11.1) CacheDesc.aligned_size: gpt-oss at TP 8, int4, 16-token blocks: K and V 16 × 1 × 32 B,
    their scale-zero tensors 16 × 1 × 2 × 2 B = 64 B each, rounded up to 256."""
    flags = ["--backend", "pytorch", "--tp", "8", "--quant-policy", "4", "--block-size", "16", "--engine-version", version]
    assert _plan("openai--gpt-oss-20b.json", flags, free=FREE, gpu="H100").engine.steps[-3].value == block_bytes


@pytest.mark.parametrize(
    ("version", "budget", "slots"),
    [("0.11.0", None, 384 + 8), ("0.12.3", None, 384 + 1), ("0.13.0", None, 384 + 2), ("0.13.0", "10", 384 + 2 + 10)],
)  # fmt: skip
def test_pytorch_state_cache_slots_by_era(version: str, budget: str | None, slots: int) -> None:
    """§4.3: SSM state slots reserved before the KV budget: max_batches + 8 (PR #4039), + 1 (PR #4437),
    + 2 + prefix_cache_state_budget (PR #4552); 384 batches on an A100 (v0.10+)."""
    flags = ["--tp", "4", "--engine-version", version] + (["--prefix-cache-state-budget", budget] if budget else [])
    ledger = _plan("Qwen--Qwen3-Next-80B-A3B-Thinking.json", flags, free=FREE)
    per_slot = ledger.ranks[0].kv.state_bytes_per_request
    assert ledger.engine.state_pool_bytes == per_slot * slots
    assert any(step.label == f"− SSM state cache ({slots:,} slots)" for step in ledger.engine.steps)


def test_pytorch_engine_refusals_by_release() -> None:
    with pytest.raises(InputError, match="^--quant-policy: LMDeploy 0.13.0 has no FP8 KV"):
        _plan(LLAMA_8B, ["--backend", "pytorch", "--quant-policy", "fp8", "--engine-version", "0.13.0"], free=FREE)
    with pytest.raises(InputError, match="PyTorch engine has no int8/int4 KV \\(from v0.6.2\\)"):
        _plan(LLAMA_8B, ["--backend", "pytorch", "--quant-policy", "8", "--engine-version", "0.6.1"], free=FREE)
    with pytest.raises(InputError, match="^--cache-max-entry-count: the PyTorch engine takes a share below 1"):
        _plan(LLAMA_8B, ["--backend", "pytorch", "--cache-max-entry-count", "2"], free=FREE)
    with pytest.raises(InputError, match="has no PyTorch engine \\(it first shipped in v0.2.0\\)"):
        _plan(LLAMA_8B, ["--backend", "pytorch", "--engine-version", "0.1.0"], free=FREE)


def test_the_backend_follows_turbominds_architecture_list() -> None:
    """`autoget_backend`: TurboMind serves Llama; DeepSeek-V3 (no TurboMind support) goes to the PyTorch engine."""
    assert "TurboMind" in _plan(LLAMA_8B, [], free=FREE).engine.notes[0]
    assert "the PyTorch engine" in _plan("deepseek-ai--DeepSeek-V3.json", ["--tp", "8"], free=FREE).engine.notes[0]

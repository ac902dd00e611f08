"""NCCL's NVLS buffers in V0's non-torch memory (nvls_buffers.py) and V0's MLA absorbed matrices (mla_absorbed.py).

Expected figures come from elsewhere than the modules: NCCL's own log line in vllm#9699 (`NVLS comm … nHeads 8 buffSize
4194304 memSize 2097152 nvlsPerRankSize 301989888 nvlsTotalSize 2415919104`, 8 × H200), that issue's GPU blocks with
NVLS on and off, transport/nvls.cc's arithmetic at v2.21.5 (buffSize = 128 KiB × NCCL_STEPS 8), DeepSeek-R1's config
(tests/data/configs) and the weights vLLM 0.7.3 printed on 8 × H200 (tests/data/calibration/vllm.jsonl, search-index
file 20903468563: 83.88 GiB).
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm import mla_absorbed as mla
from kvtop.domain.engines.vllm import nvls_buffers as nvls
from kvtop.domain.engines.vllm.weights_held import held_beside
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.wording import GIB

MIB = 1 << 20
RECORDS = {record.id: record for record in load("vllm")}
R1 = "file20903468563-deepseek-r1-h200-tp8"


def test_one_communicator_is_the_size_nccl_printed_rounded_to_the_multicast_granularity() -> None:
    # vllm#9699: nvlsTotalSize 2,415,919,104 B (2,304 MiB) with NCCL 2.20's 4 MiB buffSize; 512 MiB granularity → 2.5 GiB
    assert nvls.communicator_bytes(4 * MIB) == 2560 * MIB
    assert nvls.CHANNELS_TP8 * 2 * (4 * MIB + 2 * MIB) * nvls.HEADS_TP8 == 2_415_919_104
    # NCCL 2.21.5: buffSize 128 KiB × 8 = 1 MiB; 24 × 2 × 3 MiB × 8 = 1,152 MiB → 1,536 MiB
    assert nvls.communicator_bytes(1 * MIB) == 1536 * MIB


def test_two_communicators_at_nccl_2_20_are_what_disabling_nvls_gave_back_in_vllm_9699() -> None:
    # 17,595 GPU blocks with NVLS on, 227xx off: 5,105–5,204 blocks of 16 tokens × 64,512 B (Llama-3.1-405B at TP 8:
    # 126 layers × 1 KV head × 128 × 2 × 2 B) = 4.91–5.00 GiB
    block = 16 * 126 * 1 * 128 * 2 * 2
    low, high = (22_700 - 17_595) * block, (22_799 - 17_595) * block
    assert low <= 2 * nvls.communicator_bytes(4 * MIB) <= high + block


def test_the_deepseek_r1_h200_start_holds_two_communicators_of_nccl_2_21() -> None:
    inputs = RECORDS[R1].inputs()
    found = nvls.nvls_buffers(inputs, 32_000)
    assert found is not None and found.bytes == 2 * 1536 * MIB  # 3 GiB of its 7.16 GiB of non-torch memory
    # the NCCL named is the era's (vLLM 0.7.3's torch 2.5.1 pins 2.21.5), not guessed from the buffer's size
    assert "(24 channels x 2 x (1 + 2 MiB) x 8 heads" in found.why and "NCCL 2.21.5" in found.why


def test_nvls_is_not_taken_off_nvswitch_hopper_at_tp_8_or_in_v1() -> None:
    inputs = RECORDS[R1].inputs()
    assert nvls.nvls_buffers(inputs.model_copy(update={"layout": ParallelLayout(tp=4)}), 32_000) is None
    assert nvls.nvls_buffers(inputs.model_copy(update={"gpu_name": "A100-80GB"}), 32_000) is None
    v1 = ResolvedVersion(text="0.8.5")
    assert nvls.nvls_buffers(inputs.model_copy(update={"version": v1}), 32_000) is None


def test_deepseek_r1_at_tp_8_absorbs_4_05_gib_a_rank() -> None:
    inputs = RECORDS[R1].inputs()
    found = mla.absorbed_matrices(inputs)
    assert found is not None
    # config: 61 layers, 128 heads (16 a rank), q_lora_rank 1,536, kv_lora_rank 512, hidden 7,168; FP8 (1 B):
    # 61 × (1,536 × 16 × 512 + 16 × 512 × 7,168) = 61 × 71,303,168 = 4,349,493,248 B
    assert found[0] == 4_349_493_248
    assert found[1].endswith(": 4.05 GiB)")  # 4,349,493,248 / 2^30 = 4.0508…: the one GiB (wording.gib)
    # the weights vLLM 0.7.3 printed: 83.88 GiB; the book's count with what vLLM holds beside it now lands within
    # 0.6 GiB of it (the book alone: 4.57 GiB short)
    ledger, held = RECORDS[R1].ledger(), held_beside(inputs)
    assert ledger is not None and held is not None
    assert abs(ledger.weights_bytes + held[0] - round(83.88 * GIB)) < 0.6 * GIB


def test_no_absorption_before_v0_7_1_or_from_v0_8() -> None:
    inputs = RECORDS[R1].inputs()
    for text in ("0.7.0", "0.8.0"):
        assert mla.absorbed_matrices(inputs.model_copy(update={"version": ResolvedVersion(text=text)})) is None


def test_deepseek_r1_at_tp_8_keeps_w_qr_and_the_dequantized_kv_b_proj() -> None:
    """v0.7.3's `process_weights_after_loading` (attention/backends/mla/utils.py:297-350) keeps `self.W_QR`, the
    query's rope columns copied contiguous in the activation dtype (q_lora_rank 1,536 × 16 heads a rank × rope dim 64
    × 2 B = 3,145,728 B a layer), and `self.W_UK, self.W_UV`, views of kv_b_proj dequantized through an identity in
    bf16 (kv_lora_rank 512 × 16 × (nope 128 + v 128) × 2 B = 4,194,304 B a layer): 61 × 7,340,032 B = 0.42 GiB."""
    inputs = RECORDS[R1].inputs()
    found = mla.kept_copies(inputs)
    assert found is not None and found[0] == 61 * (1536 * 16 * 64 * 2 + 512 * 16 * 256 * 2) == 447_741_952
    # the book with what vLLM holds beside it now lands within 0.15 GiB of the 83.88 GiB printed (0.52 short before)
    ledger, held = RECORDS[R1].ledger(), held_beside(inputs)
    assert ledger is not None and held is not None
    assert abs(ledger.weights_bytes + held[0] - round(83.88 * GIB)) < 0.15 * GIB


def test_v0_7_1_and_v0_7_2_dequantize_kv_b_proj_to_float32() -> None:
    """`scaled_dequantize`'s out_dtype defaults to float32 at v0.7.1-v0.7.2 (quantization/utils/quant_utils.py:103-107
    at v0.7.1): the kept kv_b_proj is 512 × 16 × 256 × 4 B = 8,388,608 B a layer; W_QR is still cast to bf16."""
    inputs = RECORDS[R1].inputs().model_copy(update={"version": ResolvedVersion(text="0.7.2")})
    found = mla.kept_copies(inputs)
    assert found is not None and found[0] == 61 * (1536 * 16 * 64 * 2 + 512 * 16 * 256 * 4)
    for text in ("0.7.0", "0.8.0"):
        assert mla.kept_copies(inputs.model_copy(update={"version": ResolvedVersion(text=text)})) is None


def test_an_unquantized_mla_checkpoint_keeps_w_qr_only() -> None:
    """Unquantized, `get_and_maybe_dequant_weights` returns the registered weight, so W_UK and W_UV are its views;
    W_QR is a contiguous copy whatever the checkpoint."""
    inputs = RECORDS[R1].inputs()
    assert inputs.model is not None
    bf16 = inputs.model.model_copy(update={"quant": inputs.model.quant.model_copy(update={"method": "none"})})
    found = mla.kept_copies(inputs.model_copy(update={"model": bf16}))
    assert found is not None and found[0] == 61 * 1536 * 16 * 64 * 2

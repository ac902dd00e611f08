"""CUDA's total of a card kvtop has no model of may be a slice's: no driver reserve under nvidia-smi's (session 50, #27).

LMDeploy v0.1.0 on InternStudio's 'A100 (1/4)' (tests/data/cases/lmdeploy/lmdeploy-tutorial-v010-internlm-chat-7b-
vgpu, vgpu-smi's `20470MiB`) printed `max_block_count = 159` of 64 MiB: `size_t(total × 0.5) // block`
(BlockManager.cc:84-89 at v0.1.0) puts CUDA's total in [159 × 128, 160 × 128) = [20,352, 20,480) MiB, at most 118 MiB
under vgpu-smi's. A software limiter reports its limit as NVML's total and as CUDA's (HAMi-core src/nvml/hook.c
`total = limit`, src/cuda/memory.c `cuMemGetInfo_v2`): the driver's reserve, the ~0.4 GiB kvtop takes off an
unnamed card, is outside the slice. The interval of an unnamed card's total now reaches the total itself; a card of
kvtop's table (a whole card) keeps the fitted gap's error.
"""

from __future__ import annotations

from kvtop.domain.calibration.gpu_totals import (
    CUDA_TOTAL_FITS,
    FALLBACK_KEY,
    cuda_total_estimate,
    gap_features,
)
from kvtop.domain.gpus import GPU_TOTAL_MIB, is_listed_card

MIB = 1 << 20
VGPU_SMI_TOTAL = 20_470 * MIB  # the log's nvidia-smi line: `14750MiB / 20470MiB`
BLOCK = 64 * MIB  # `[BlockManager] block_size = 64 MB`
LOGGED_BLOCKS = 159  # `[BlockManager] max_block_count = 159`


def _blocks(total: int) -> int:
    return int(total * 0.5) // BLOCK  # v0.1.0 GetBlockCount: size_t(total × cache_max_entry_count) / block_size


def test_an_unnamed_cards_interval_holds_the_slices_logged_blocks() -> None:
    term = cuda_total_estimate(None, VGPU_SMI_TOTAL, CUDA_TOTAL_FITS)
    low, high = term.bytes - term.error_bytes, term.bytes + term.error_bytes
    assert high >= VGPU_SMI_TOTAL  # a limiter's slice: CUDA's total is nvidia-smi's
    assert _blocks(low) <= LOGGED_BLOCKS <= _blocks(high)
    assert _blocks(term.bytes) < LOGGED_BLOCKS  # the centre stays a whole card's: the mean gap below the total
    assert "slice" in term.basis


def test_a_card_of_the_table_keeps_the_fitted_gaps_error() -> None:
    gap = CUDA_TOTAL_FITS[FALLBACK_KEY]
    # a card of the table with no log of its own (the B300 was one until session 54; the first such card now)
    card = next(key for key in GPU_TOTAL_MIB if f"cuda_total.{key}" not in CUDA_TOTAL_FITS and is_listed_card(key))
    term = cuda_total_estimate(card, GPU_TOTAL_MIB[card] * MIB, CUDA_TOTAL_FITS)
    assert term.error_bytes == gap.error_bytes
    assert term.bytes == GPU_TOTAL_MIB[card] * MIB - gap.predict(gap_features(GPU_TOTAL_MIB[card] * MIB))


def test_which_names_are_whole_cards() -> None:
    assert is_listed_card("NVIDIA B200") and is_listed_card("H100") and is_listed_card("NVIDIA A100-SXM4-80GB")
    assert is_listed_card("RTX6000ADA") and is_listed_card("NVIDIA RTX 6000 Ada Generation")  # the corpus's, NVML's
    assert not is_listed_card(None) and not is_listed_card("") and not is_listed_card("NVIDIA GeForce RTX 2070")

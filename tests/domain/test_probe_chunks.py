"""The probe's chunks are sized so that the CUDA caching allocator rounds nothing away.

An allocation of 10 MiB or more is given exactly its size rounded up to 2 MiB; smaller ones are packed into
20 MiB segments (torch's CUDACachingAllocator). On one H200 (benchmarks/gpu_device_run.sh, 2026-12-04) chunks of
~1 GiB of KV lost 4.4 % (Llama-3-70B TP 8: 160 tensors of 6.4 MiB) and 7.7 % (DeepSeek-V3: 61 tensors of
16.8 MiB) of what they took. The expected figures here are the allocator's rule applied by hand.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.model_config import model_from_config
from kvtop.domain.probe import (
    chunk_end,
    chunk_shapes,
    default_chunk_tokens,
    dsa_index_buffer,
    mha_buffers,
    mla_buffer,
    tensor_sizes,
)
from tests.data_paths import CONFIGS

MIB = 2**20
# DeepSeek-V3's latent as its config.json gives it (kv_lora_rank 512, qk_rope_head_dim 64), read as kvtop reads it
DSV3_MLA = model_from_config(json.loads((CONFIGS / "deepseek-ai--DeepSeek-V3.json").read_text())).mla
assert DSV3_MLA is not None


def _allocator_granted(size: int) -> int:
    """What torch's caching allocator takes from the driver for one tensor of `size` bytes, alone in its block."""
    return -(-size // (2 * MIB)) * (2 * MIB) if size >= 10 * MIB else size  # small ones share a segment


@pytest.mark.parametrize(
    ("buffers", "page", "expected_tokens", "tensor_mib"),
    [
        # Llama-3-70B at TP 8: K and V of (1 head, 128) bf16 = 256 B a token per tensor; 64 MiB / 256 B
        (mha_buffers(80, 1, 128, "bfloat16"), 1, 262_144, 64),
        (mha_buffers(80, 1, 128, "bfloat16"), 64, 262_144, 64),
        # DeepSeek-V3's latent: (512 + 64) x 2 B = 1,152 B a token; 2 MiB holds 16,384 x 1,152 B / 9, so tensors
        # grow by 9 x 2 MiB per 16,384 tokens: three steps (54 MiB) stay under 64 MiB
        ((mla_buffer(61, DSV3_MLA, "bfloat16"),), 64, 49_152, 54),
        # Qwen3-8B at TP 1: (8 heads, 128) bf16 = 2,048 B; 32,768 tokens = 64 MiB
        (mha_buffers(36, 8, 128, "bfloat16"), 16, 32_768, 64),
    ],
)
def test_chunk_tensors_are_whole_2_mib_granules(buffers, page, expected_tokens, tensor_mib) -> None:
    tokens = default_chunk_tokens(buffers, page)
    assert tokens == expected_tokens
    assert tokens % page == 0
    # the second chunk (the first carries the engine's padding page) asks for exactly what the allocator grants
    sizes = tensor_sizes(chunk_shapes(buffers, tokens, 2 * tokens, page))
    assert max(sizes) == tensor_mib * MIB
    assert all(_allocator_granted(size) == size for size in sizes)


def test_a_buffer_whose_alignment_would_swell_the_chunk_is_left_unaligned() -> None:
    # DeepSeek-V3.2: the latent (1,152 B) beside the DSA index key (128 + 4 = 132 B): aligning 132 B rows to 2 MiB
    # needs 524,288 tokens (a 576 MiB latent tensor per layer), so only the latent is aligned
    buffers = (mla_buffer(61, DSV3_MLA, "bfloat16"), dsa_index_buffer(61, 128))
    tokens = default_chunk_tokens(buffers, 64)
    assert tokens == 49_152
    latent, index = tensor_sizes(chunk_shapes(buffers, tokens, 2 * tokens, 64))[::61]
    assert latent == 54 * MIB and index == 49_152 * 132


def test_rows_wider_than_the_target_take_one_page() -> None:
    wide = mha_buffers(1, 64, 1024 * 1024, "float32")  # 256 MiB a token per tensor
    assert default_chunk_tokens(wide, 16) == 16


def test_the_first_chunk_leaves_room_for_the_padding_page_so_every_chunk_is_whole_granules() -> None:
    buffers = mha_buffers(80, 1, 128, "bfloat16")
    step, page = default_chunk_tokens(buffers, 64), 64
    ends = [0]
    for _ in range(3):
        ends.append(chunk_end(ends[-1], step, page, None))
    assert ends == [0, 262_080, 524_224, 786_368]  # 262,144 - 64, then whole steps
    for before, after in zip(ends[:-1], ends[1:], strict=True):
        assert set(tensor_sizes(chunk_shapes(buffers, before, after, page))) == {64 * MIB}
    assert chunk_end(0, step, page, 1_000) == 1_000  # a goal below one chunk is the goal
    assert chunk_end(0, 64, 64, None) == 64  # a one-page step cannot stop short

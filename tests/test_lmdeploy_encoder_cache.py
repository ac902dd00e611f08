"""The allocator replay behind docs/engines/lmdeploy.md §15.3 (case 3411's ImageEncoder): torch's block rules,
each expected figure worked by hand from CUDACachingAllocator.cpp's constants (kLargeBuffer 20 MiB for a
1 – 10 MiB request, kRoundLarge 2 MiB above 10 MiB, kSmallBuffer 2 MiB, a split only where > 1 MiB remains)."""

from __future__ import annotations

from benchmarks.lmdeploy_encoder_cache import (
    MIB,
    CachingAllocator,
    internvl25_8b_shards,
    replay_case_3411,
    replay_encoder_load,
    replay_export,
)


def test_mid_sized_requests_share_a_20_mib_segment() -> None:
    a = CachingAllocator()
    qkv, fc1 = a.malloc(6 * MIB), a.malloc(8 * MIB)  # 6 + 8 ≤ 20: one segment, 6 MiB left free in it
    assert a.reserved == 20 * MIB
    a.malloc(8 * MIB)  # 8 > 6: a second segment
    assert a.reserved == 40 * MIB
    a.free(qkv)
    a.free(fc1)
    a.empty_cache()  # the first segment is whole and free (6 + 8 + 6 merged): returned; the second holds a block
    assert a.reserved == 20 * MIB


def test_a_block_carved_from_a_freed_segment_keeps_it_reserved() -> None:
    a = CachingAllocator()
    big = a.malloc(16 * MIB)  # > 10 MiB: its own segment, 16 MiB (a multiple of 2 MiB)
    a.free(big)
    a.malloc(2 * MIB)  # best fit: carved from the cached 16 MiB, 14 MiB left (> 1 MiB: split)
    a.empty_cache()  # the segment is not whole: all 16 MiB stay
    assert a.reserved == 16 * MIB


def test_remainder_of_one_mib_or_less_is_not_split() -> None:
    a = CachingAllocator()
    a.malloc(19 * MIB + MIB // 2)  # 19.5 MiB > 10: segment rounded to 20 MiB, 0.5 MiB left (not > 1 MiB)
    a.malloc(MIB // 2 + 1)  # ≤ 1 MiB: the small pool's own 2 MiB segment, not the large block's tail
    assert a.reserved == 22 * MIB


def test_internvl25_8b_checkpoint_tensor_bytes() -> None:
    shards = internvl25_8b_shards()
    # InternLM2.5-7B-chat in bf16: 32 layers × (6,144 + 4,096 + 3 × 14,336) × 4,096 + 2 × 92,553 × 4,096 weights,
    # 65 norms of 4,096 (the reconstructed config's hidden, intermediate and vocabulary sizes; tensor names and
    # shards from the checkpoint's index, search-index id 47771165735)
    llm = sum(
        n for shard in shards.values() for name, n in shard.items() if name.startswith("language_model.")
    )
    assert llm == 2 * (32 * (6144 + 4096 + 3 * 14336) * 4096 + 2 * 92553 * 4096 + 65 * 4096)
    # InternViT-300M: 24 layers × (4 × 1,024² + 2 × 1,024 × 4,096 + 3,072 + 1,024 + 4,096 + 1,024 + 6 × 1,024),
    # embeddings 1,024 × (1 + 1 + 588 + 1,025); projector 2 × 4,096 + 4,096² + 4,096 + 4,096² + 4,096
    vision = sum(n for name, n in shards[1].items() if name.startswith("vision_model."))
    per_layer = 4 * 1024 * 1024 + 2 * 1024 * 4096 + 3072 + 1024 + 4096 + 1024 + 6 * 1024
    assert vision == 2 * (24 * per_layer + 1024 * (1 + 1 + 588 + 1025))
    projector = sum(n for name, n in shards[4].items() if name.startswith("mlp1."))
    assert projector == 2 * (2 * 4096 + 4096 * 4096 + 4096 + 4096 * 4096 + 4096)


def test_replay_keeps_the_tower_and_less_than_a_quarter_gib_more() -> None:
    held, reserved = replay_encoder_load(internvl25_8b_shards(), ("vision_model.", "mlp1."))
    # the fp16 tower and projector: 2 × (24 × 12,598,272 + 1,653,760 + 33,570,816) = 675,166,208 B (643.9 MiB),
    # each tensor rounded up to 512 B
    assert held >= 675_166_208
    # far from the 2.0 GiB case 3411 leaves (docs/engines/lmdeploy.md §15.3)
    assert held <= reserved < held + 256 * MIB


def test_the_export_alone_keeps_one_layers_staging_and_the_lm_head() -> None:
    """InternLM2.5-7B's conversion at TP 1 (docs/engines/lmdeploy.md §15.1), segments worked by hand: the embedding's
    92,553 × 4,096 × 2 = 758,194,176 B rounded up to 2 MiB, 724 MiB (the LM head, the same size, reuses it); the MLP's
    7 live matrices of 14,336 × 4,096 × 2 B = 112 MiB each, 784 MiB; the attention's wqkv (48 MiB), q (32), k and v
    (8 each, one 20 MiB segment), wo (32); q's permuted copy (32) and k's (8) carved from wqkv's freed 48, the merged
    qkv a new 48, wo's contiguous copy in the first 48 again; the norms a 2 MiB small segment. Every later layer
    reuses them: 724 + 784 + 48 + 32 + 20 + 32 + 48 + 2 = 1,690 MiB."""
    allocator = CachingAllocator()
    replay_export(allocator)
    assert allocator.reserved == 1_690 * MIB


def test_case_3411_torch_holds_more_than_the_lm_head_when_turbomind_counts() -> None:
    """After the ImageEncoder and the export: the tower, the LM head's 724 MiB segment and the MLP's 784 MiB that the
    staging charge now counts, the attention's 182 MiB and the encoder's fragments beside them."""
    tower, after_encoder, counted = replay_case_3411()
    assert after_encoder - tower < 256 * MIB
    assert counted - tower >= (724 + 784) * MIB
    assert counted - after_encoder <= 1_690 * MIB

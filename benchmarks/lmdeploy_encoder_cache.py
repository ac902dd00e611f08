"""How much torch's cache keeps on GPU 0 after LMDeploy's ImageEncoder loads InternVL2.5-8B's vision tower
(docs/engines/lmdeploy.md §15.3, case 3411), and after TurboMind's converter then stages the language model through
it (§15.1). A replay of the allocator's rules, not a GPU measurement.

What runs (LMDeploy 0.7.x, `InternVLVisionModel.build_model` → accelerate's `load_checkpoint_and_dispatch`, one
device in the map): every shard is read whole onto GPU 0 (`load_state_dict`: `safe_load_file(shard, device=0)`,
one allocation per tensor, in the file's sorted key order); each tower tensor is then cast to fp16
(`set_module_tensor_to_device(..., dtype=torch.half)`: a new tensor, while the shard's are still live); the
shard is dropped (`del loaded_checkpoint`); after the last shard `ImageEncoder.__init__` calls
`torch.cuda.empty_cache()`, which returns only segments with no live block.

torch's caching allocator (c10/cuda/CUDACachingAllocator.cpp, default settings, one stream): sizes rounded up to
512 B; a request of ≤ 1 MiB comes from the small pool (2 MiB segments), one of 1 – 10 MiB from a 20 MiB segment,
a larger one from a segment of its size rounded up to 2 MiB; a free block is found best-fit (smallest size, then
lowest address) and split when what remains is > 1 MiB (large pool) or ≥ 512 B (small pool); a freed block
merges with its free neighbours in its segment.

The checkpoint's tensors per shard are InternVL2.5-8B's `model.safetensors.index.json` (a copy in a public
repository, search-index id 47771165735: the vision tower and layers 0 – 7 with the embedding in shard 1, the
projector `mlp1` with layers 30 – 31 and the LM head in shard 4); the MPO checkpoint of case 3411 is assumed to
be sharded the same way.

The export (main 3f414b595, the case's build, = v0.7.x): `SafetensorsLoader.items` yields each layer once its tensors
are read (on the CPU) and each shard's other tensors after its layers; `InternLM2Reader` puts every attention and MLP
matrix on the GPU (`policy.to_cuda`); `module.py` then, per layer: the norms (`export_weight`: `.cuda()`), the
attention (wqkv whole, q/k/v reshaped copies, wo whole; wqkv freed; `permute_v2` copies of q and k, `merge_qkv_v2`'s
cat, the copies freed, wo's transposed view made contiguous), the MLP (w1, w2, w3 whole, a zero-pad clone of each,
`pad_out_dims`/`pad_in_dims`, each made contiguous in turn); the embedding after shard 1's layers, the LM head
after shard 4's (`Misc`: one contiguous copy each at TP 1). Nothing empties the cache before TurboMind counts.
Run: `python benchmarks/lmdeploy_encoder_cache.py`.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

MIB = 1 << 20
MIN_BLOCK = 512
SMALL_SIZE = MIB  # ≤ this: the small pool
SMALL_BUFFER = 2 * MIB  # a small-pool segment
LARGE_BUFFER = 20 * MIB  # a segment for a 1 – 10 MiB request
MIN_LARGE_ALLOC = 10 * MIB
ROUND_LARGE = 2 * MIB


@dataclass(eq=False)
class Block:
    size: int
    ptr: int
    small: bool
    prev: Block | None = None
    next: Block | None = None
    live: bool = False


@dataclass
class CachingAllocator:
    """torch's block rules for one device and one stream (what `empty_cache` can return, what it keeps)."""

    pools: dict[bool, list[tuple[int, int, Block]]] = field(default_factory=lambda: {True: [], False: []})
    reserved: int = 0
    _next_segment: int = 0

    def malloc(self, nbytes: int) -> Block:
        size = max(MIN_BLOCK, -(-nbytes // MIN_BLOCK) * MIN_BLOCK)
        small = size <= SMALL_SIZE
        pool = self.pools[small]
        i = bisect.bisect_left(pool, (size, -1))
        if i < len(pool):
            block = pool.pop(i)[2]
        else:
            block = Block(self._segment_size(size), self._next_segment, small)
            self._next_segment += block.size + (1 << 40)  # segments are never adjacent
            self.reserved += block.size
        remaining = block.size - size
        if remaining >= MIN_BLOCK if small else remaining > SMALL_SIZE:
            rest = Block(remaining, block.ptr + size, small, prev=block, next=block.next)
            if block.next is not None:
                block.next.prev = rest
            block.next, block.size = rest, size
            self._insert(rest)
        block.live = True
        return block

    def free(self, block: Block) -> None:
        block.live = False
        prev, nxt = block.prev, block.next
        if prev is not None and not prev.live:
            self._remove(prev)
            prev.size += block.size
            prev.next = nxt
            if nxt is not None:
                nxt.prev = prev
            block = prev
        nxt = block.next
        if nxt is not None and not nxt.live:
            self._remove(nxt)
            block.size += nxt.size
            block.next = nxt.next
            if nxt.next is not None:
                nxt.next.prev = block
        self._insert(block)

    def empty_cache(self) -> None:
        for small, pool in self.pools.items():
            whole = [entry for entry in pool if entry[2].prev is None and entry[2].next is None]
            for entry in whole:
                pool.remove(entry)
                self.reserved -= entry[2].size
            self.pools[small] = pool

    @staticmethod
    def _segment_size(size: int) -> int:
        if size <= SMALL_SIZE:
            return SMALL_BUFFER
        if size < MIN_LARGE_ALLOC:
            return LARGE_BUFFER
        return -(-size // ROUND_LARGE) * ROUND_LARGE

    def _insert(self, block: Block) -> None:
        bisect.insort(self.pools[block.small], (block.size, block.ptr, block), key=lambda e: (e[0], e[1]))

    def _remove(self, block: Block) -> None:
        self.pools[block.small].remove((block.size, block.ptr, block))


def internvl25_8b_shards() -> dict[int, dict[str, int]]:
    """Bytes of every bf16 tensor of InternVL2.5-8B per checkpoint shard (the index named in the module's doc)."""
    hidden, inter, vocab, vit, vit_inter = 4096, 14336, 92553, 1024, 4096
    layer = {"attention.wo.weight": hidden * hidden, "attention.wqkv.weight": 6144 * hidden,
             "attention_norm.weight": hidden, "feed_forward.w1.weight": inter * hidden,
             "feed_forward.w2.weight": hidden * inter, "feed_forward.w3.weight": inter * hidden,
             "ffn_norm.weight": hidden}  # fmt: skip
    # the layers split across two shards: the tensors the earlier shard holds, then the later shard
    split = {8: ({"attention.wo.weight", "attention.wqkv.weight"}, 1, 2),
             19: ({"attention.wo.weight", "attention.wqkv.weight", "feed_forward.w1.weight"}, 2, 3),
             30: ({"attention.wo.weight", "attention.wqkv.weight", "feed_forward.w1.weight",
                   "feed_forward.w3.weight"}, 3, 4)}  # fmt: skip
    shards: dict[int, dict[str, int]] = {1: {}, 2: {}, 3: {}, 4: {}}
    for n in range(32):
        for name, elems in layer.items():
            if n in split:
                first, early, late = split[n]
                shard = early if name in first else late
            else:
                shard = 1 if n < 8 else 2 if n < 19 else 3 if n < 30 else 4
            shards[shard][f"language_model.model.layers.{n}.{name}"] = elems * 2
    shards[1]["language_model.model.tok_embeddings.weight"] = vocab * hidden * 2
    shards[4]["language_model.model.norm.weight"] = hidden * 2
    shards[4]["language_model.output.weight"] = vocab * hidden * 2
    tower = {"vision_model.embeddings.class_embedding": vit, "vision_model.embeddings.patch_embedding.bias": vit,
             "vision_model.embeddings.patch_embedding.weight": vit * 3 * 14 * 14,
             "vision_model.embeddings.position_embedding": 1025 * vit}  # fmt: skip
    for n in range(24):
        p = f"vision_model.encoder.layers.{n}."
        tower |= {p + "attn.proj.bias": vit, p + "attn.proj.weight": vit * vit, p + "attn.qkv.bias": 3 * vit,
                  p + "attn.qkv.weight": 3 * vit * vit, p + "ls1": vit, p + "ls2": vit,
                  p + "mlp.fc1.bias": vit_inter, p + "mlp.fc1.weight": vit_inter * vit, p + "mlp.fc2.bias": vit,
                  p + "mlp.fc2.weight": vit * vit_inter, p + "norm1.bias": vit, p + "norm1.weight": vit,
                  p + "norm2.bias": vit, p + "norm2.weight": vit}  # fmt: skip
    shards[1] |= {name: elems * 2 for name, elems in tower.items()}
    merged = 4 * vit  # pixel shuffle 0.5: 4 × 1024 inputs
    shards[4] |= {"mlp1.0.bias": merged * 2, "mlp1.0.weight": merged * 2, "mlp1.1.bias": hidden * 2,
                  "mlp1.1.weight": hidden * merged * 2, "mlp1.3.bias": hidden * 2,
                  "mlp1.3.weight": hidden * hidden * 2}  # fmt: skip
    return shards


def replay_encoder_load(shards: dict[int, dict[str, int]], kept: tuple[str, ...]) -> tuple[int, int]:
    """(bytes of the kept tensors in fp16, bytes torch still reserves) after the load and `empty_cache`."""
    allocator = CachingAllocator()
    live: list[Block] = []
    for _, tensors in sorted(shards.items()):
        names = sorted(tensors)
        loaded = [allocator.malloc(tensors[name]) for name in names]
        # each kept tensor cast bf16 → fp16 (the same size) while the shard is live
        live += [allocator.malloc(tensors[name]) for name in names if name.startswith(kept)]
        for block in loaded:
            allocator.free(block)
    allocator.empty_cache()
    return sum(block.size for block in live), allocator.reserved


def _layer_export(allocator: CachingAllocator, hidden: int, inter: int, heads: int, kv_heads: int, dim: int) -> None:
    """One InternLM2 layer through `module.py` (bf16, TP 1), in the order its tensors are made and freed."""
    b = 2
    for _ in range(2):  # attention_norm, ffn_norm
        allocator.free(allocator.malloc(hidden * b))
    q_rows, kv_rows = heads * dim, kv_heads * dim
    wqkv = allocator.malloc((q_rows + 2 * kv_rows) * hidden * b)
    q, k, v = (allocator.malloc(rows * hidden * b) for rows in (q_rows, kv_rows, kv_rows))
    wo = allocator.malloc(q_rows * hidden * b)
    allocator.free(wqkv)
    q2, k2 = allocator.malloc(q_rows * hidden * b), allocator.malloc(kv_rows * hidden * b)
    qkv = allocator.malloc((q_rows + 2 * kv_rows) * hidden * b)
    allocator.free(q2)
    allocator.free(k2)
    allocator.free(allocator.malloc(q_rows * hidden * b))  # wo made contiguous
    for block in (qkv, q, k, v, wo):
        allocator.free(block)
    whole = [allocator.malloc(inter * hidden * b) for _ in range(3)]  # w1, w2, w3 read whole
    clones = [allocator.malloc(inter * hidden * b) for _ in range(3)]  # their zero-pad clones
    for _ in range(3):
        allocator.free(allocator.malloc(inter * hidden * b))  # each made contiguous in turn
    for block in clones + whole:
        allocator.free(block)


def replay_export(allocator: CachingAllocator, layers_per_shard: tuple[int, ...] = (8, 11, 11, 2)) -> None:
    """InternLM2.5-7B's conversion (32 layers; the embedding after shard 1's layers, the LM head after shard 4's)."""
    hidden, inter, vocab = 4096, 14336, 92553
    for shard, count in enumerate(layers_per_shard):
        for _ in range(count):
            _layer_export(allocator, hidden, inter, heads=32, kv_heads=8, dim=128)
        if shard == 0:
            allocator.free(allocator.malloc(vocab * hidden * 2))  # tok_embeddings
        if shard == len(layers_per_shard) - 1:
            allocator.free(allocator.malloc(hidden * 2))  # norm
            allocator.free(allocator.malloc(vocab * hidden * 2))  # output


def replay_case_3411() -> tuple[int, int, int]:
    """(fp16 tower bytes, reserved after the ImageEncoder, reserved when TurboMind counts) on GPU 0."""
    allocator = CachingAllocator()
    live: list[Block] = []
    for _, tensors in sorted(internvl25_8b_shards().items()):
        names = sorted(tensors)
        loaded = [allocator.malloc(tensors[name]) for name in names]
        live += [allocator.malloc(tensors[name]) for name in names if name.startswith(("vision_model.", "mlp1."))]
        for block in loaded:
            allocator.free(block)
    allocator.empty_cache()
    after_encoder = allocator.reserved
    replay_export(allocator)
    return sum(block.size for block in live), after_encoder, allocator.reserved


def main() -> None:
    held, reserved = replay_encoder_load(internvl25_8b_shards(), ("vision_model.", "mlp1."))
    print(f"InternVL2.5-8B tower and projector in fp16: {held / MIB:,.1f} MiB; torch reserves after "
          f"empty_cache: {reserved / MIB:,.1f} MiB; beyond the tensors: {(reserved - held) / MIB:,.1f} MiB")  # fmt: skip
    export_only = CachingAllocator()
    replay_export(export_only)
    tower, _, counted = replay_case_3411()
    print(f"the export alone reserves {export_only.reserved / MIB:,.1f} MiB; after the ImageEncoder and the export "
          f"torch reserves {counted / MIB:,.1f} MiB when TurboMind counts, {(counted - tower) / MIB:,.1f} MiB "
          "beyond the fp16 tower")  # fmt: skip


if __name__ == "__main__":
    main()

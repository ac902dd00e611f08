"""DeepSeek-V4 as vLLM sizes it (docs/engines/vllm.md §4.7), read in the v0.33.0 wheel.

Every layer registers KV cache specs of its own kinds (models/deepseek_v4/attention.py, compressor.py;
v1/attention/backends/mla/sparse_swa.py), each a page of `block` tokens padded to 576 B (the fp8_ds_mla
layout's `alignment`, `_apply_alignment_padding`):
- `swa_cache` on every layer (DeepseekV4SWACache): SlidingWindowMLASpec, window = config `sliding_window`,
  64 tokens a block, 584 B a token (448 NoPE + 128 RoPE + 8 scale bytes);
- `attn` on a layer of ratio r (4 or 128): MLAAttentionSpec at the backend's block (256, FLASHMLA_SPARSE_DSV4
  `get_supported_kernel_block_sizes`), one 584-B state per r tokens (`tokens_per_state`);
- `compressor.state_cache` (DeepseekCompressor's cache): SlidingWindowMLASpec float32 of width
  coff × head_dim × 2 (coff 2 on ratio 4), window coff × r, 4 tokens a block on ratio 4, 8 on ratio 128;
- on ratio-4 layers the indexer's `k_cache` (MLAAttentionSpec, 256 a block, index_head_dim + a fp32 scale per
  128 bytes a state per 4 tokens) and its `compressor.state_cache` (as above, width 2 × index_head_dim × 2).

`_get_packed_kv_cache_groups` (v1/core/kv_cache_planning.py; BLHNC, block-outermost) buckets the specs by type
(block size and window), splits the buckets whose page sizes repeat one layer each (the balanced ones) into
groups of `_approximate_gcd` repeats, and strides every block by the widest group's page: the pool holds
`available // widest page` blocks, and a request takes in each group cdiv(max_memory_usage, page) of them
(`get_max_concurrency_for_kv_cache_config`).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.engines.base import KvCell
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.gpus import compute_capability
from kvtop.domain.kv import KvBook
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.rounding import ceil_div, round_up

DSV4_ERAS: Eras[bool] = Eras((
    Era("", False, "not read before v0.33.0: DeepSeek-V4's specs and the packed groups of mixed page sizes"),
    Era("0.33.0", True, "v0.33.0 wheel: models/deepseek_v4, v1/core/kv_cache_planning.py "
        "_get_packed_kv_cache_groups; engine-diff runs of DeepSeek-V4-Flash/-Pro (and NVFP4) at TP 1 and 2"),
))  # fmt: skip

MLA_BLOCK = (
    256  # FLASHMLA_SPARSE_DSV4 and DEEPSEEK_V4_INDEXER take 256 only: "Setting kv cache block size to 256"
)
SWA_BLOCK = 64  # DeepseekV4SWACache(block_size=64)
STATE_BLOCK = {4: 4, 128: 8}  # DeepseekCompressor: the state's block shares the KV page's tensor
ROW_BYTES, PAGE_ALIGN = 584, 576  # fp8_ds_mla: state_content_bytes, alignment
STATE_DTYPE_BYTES = 4  # the compressor state is float32
SCALE_BLOCK = 128  # the FP8 indexer key's fp32 scale per 128 values


@dataclass(frozen=True)
class Dsv4Spec:
    """One layer's KV cache spec: its role (the module that registers it), type, tokens a block, window
    (0: full attention) and page bytes."""

    role: str
    kind: str  # "MLAAttentionSpec" or "SlidingWindowMLASpec"
    block: int
    window: int
    page_bytes: int


@dataclass(frozen=True)
class Dsv4Group:
    """One KV cache group: its layers' specs of one type, its page (their pages summed) and a request's blocks."""

    kind: str
    block: int
    window: int
    layers: int
    page_bytes: int

    def blocks_per_request(self, max_len: int, in_flight: int) -> int:
        """FullAttentionSpec: cdiv(L, block); SlidingWindowSpec: cdiv(min(window − 1 + in flight, L), block) + 1."""
        if not self.window:
            return ceil_div(max_len, self.block)
        return ceil_div(min(self.window - 1 + in_flight, max_len), self.block) + 1


@dataclass(frozen=True)
class Dsv4Packing:
    """A rank's groups; every block is strided by the widest group's page."""

    groups: tuple[Dsv4Group, ...]

    @property
    def block_bytes(self) -> int:
        return max(g.page_bytes for g in self.groups)

    def blocks_per_request(self, max_len: int, in_flight: int) -> int:
        return sum(g.blocks_per_request(max_len, in_flight) for g in self.groups)

    def cell(self, max_len: int, in_flight: int) -> KvCell:
        """What a token costs in the capacity vLLM logs: a max-length request's blocks, every block the widest
        group's page, over its tokens (tokens = blocks in the pool ÷ blocks a request × max_model_len). The
        request is carried in whole figures (blocks, a block's bytes, tokens), the views' words for it; the
        quotient a token is only the figure the capacity divides by."""
        per_group = [g.blocks_per_request(max_len, in_flight) for g in self.groups]
        blocks = sum(per_group)
        split = " + ".join(
            f"{n:,} ({g.block}-token blocks, {f'window {g.window:,}' if g.window else 'full'})"
            for n, g in zip(per_group, self.groups, strict=True)
        )
        return KvCell(bytes_per_token=blocks * self.block_bytes / max_len, unit="per token of a max-length request",
                      counts=f"{len(self.groups)} packed KV cache groups: {split}, every block the widest group's "
                      "page: every layer's sliding-window rows and compressor states, the compressed latents and "
                      "index keys",
                      request_pages=blocks, page_bytes=self.block_bytes, request_tokens=max_len)  # fmt: skip


def _page(tokens_per_block: int, tokens_per_state: int, content_bytes: int) -> int:
    """`page_size_bytes`: a block's states (block ÷ tokens per state) × their bytes, rounded up to 576."""
    raw = tokens_per_block // tokens_per_state * content_bytes
    return round_up(raw, PAGE_ALIGN)


def layer_specs(model: ModelSpec, layer: int) -> tuple[Dsv4Spec, ...]:
    """The specs one layer registers (the module docstring)."""
    c = model.compressed
    assert c is not None
    ratio = c.ratios[layer]
    specs = [
        Dsv4Spec("swa_cache", "SlidingWindowMLASpec", SWA_BLOCK, c.window, _page(SWA_BLOCK, 1, ROW_BYTES))
    ]
    if ratio:
        coff = 2 if ratio == 4 else 1
        state_block = STATE_BLOCK[ratio]
        state = model.head_dim * coff * 2 * STATE_DTYPE_BYTES
        specs.append(Dsv4Spec("attn", "MLAAttentionSpec", MLA_BLOCK, 0, _page(MLA_BLOCK, ratio, ROW_BYTES)))
        specs.append(Dsv4Spec("compressor.state_cache", "SlidingWindowMLASpec", state_block, coff * ratio,
                              _page(state_block, 1, state)))  # fmt: skip
        if ratio == 4:
            key = c.index_head_dim + c.index_head_dim // SCALE_BLOCK * 4
            index_state = c.index_head_dim * coff * 2 * STATE_DTYPE_BYTES
            specs.append(
                Dsv4Spec("indexer.k_cache", "MLAAttentionSpec", MLA_BLOCK, 0, _page(MLA_BLOCK, 4, key))
            )
            specs.append(Dsv4Spec("indexer.compressor.state_cache", "SlidingWindowMLASpec", state_block,
                                  coff * ratio, _page(state_block, 1, index_state)))  # fmt: skip
    return tuple(specs)


def _approximate_gcd(values: list[int], lower_bound: int) -> int:
    """`_approximate_gcd`: the repeats a group holds, least total padding, ties to the larger."""
    best, best_pad = lower_bound, None
    for d in range(lower_bound, max(max(values), lower_bound) + 1):
        pad = sum((d - x % d) % d for x in values)
        if best_pad is None or pad <= best_pad:
            best, best_pad = d, pad
    return best


def dsv4_packing(model: ModelSpec, layers: range, version: ResolvedVersion) -> Dsv4Packing:
    """`_get_packed_kv_cache_groups` over the specs of `layers` (the module docstring)."""
    c = model.compressed
    assert c is not None
    if not DSV4_ERAS.at(version):
        raise UnsupportedModelError(
            f"DeepSeek-V4's KV cache specs are not modelled for vLLM {version.label} (read in 0.33.0)",
            field="engine", source=model.source,
        )  # fmt: skip
    if not any(c.ratios[i] == 4 for i in layers):
        raise UnsupportedModelError(
            "DeepSeek-V4 without a ratio-4 layer (compress_ratios): vLLM's packed groups then cap the state "
            "buckets at the anchor page (is_state_bucket), which kvtop has not checked against a run",
            field="compress_ratios", source=model.source,
        )  # fmt: skip
    buckets: dict[tuple[str, int, int], dict[int, int]] = {}  # (type, block, window) -> page bytes -> layers
    for layer in layers:
        for spec in layer_specs(model, layer):
            pages = buckets.setdefault((spec.kind, spec.block, spec.window), {})
            pages[spec.page_bytes] = pages.get(spec.page_bytes, 0) + 1
    balanced = {key: len(set(pages.values())) == 1 for key, pages in buckets.items()}
    floor = max(max(p.values()) for k, p in buckets.items() if balanced[k] and len(p) > 1)
    repeats = _approximate_gcd([max(p.values()) for k, p in buckets.items() if balanced[k]], floor)
    groups = []
    for key, pages in buckets.items():
        kind, block, window = key
        if not balanced[key]:
            groups.append(
                Dsv4Group(kind, block, window, sum(pages.values()), sum(p * n for p, n in pages.items()))
            )
            continue
        count = max(pages.values())
        split = ceil_div(count, repeats)
        for i in range(split):  # pattern_repeats[i::split]: one layer of each page size a repeat
            held = len(range(i, count, split))
            groups.append(Dsv4Group(kind, block, window, held * len(pages), held * sum(pages)))
    return Dsv4Packing(tuple(groups))


def dsv4_rank(
    model: ModelSpec, layout: ParallelLayout, kv: KvBook, gpu_name: str | None, version: ResolvedVersion,
    block_flag: int | None = None,
) -> Dsv4Packing:  # fmt: skip
    """A DeepSeek-V4 rank's packed groups (every spec has max_tp_shards=1: the same on every TP rank); what
    kvtop has not read is refused by name."""
    cap = compute_capability(gpu_name)
    if cap is not None and cap[0] != 9:
        raise UnsupportedModelError(
            f"DeepSeek-V4's KV cache on vLLM off Hopper ({gpu_name}): its sparse-MLA backend and page layout "
            "there are not read (kvtop models FLASHMLA_SPARSE_DSV4's fp8_ds_mla pages on sm90)",
            field="--gpu", source=model.source,
        )  # fmt: skip
    if kv.kv_format != "fp8_e4m3":  # attention.py: the fp8_ds_mla layout takes auto or fp8, else ValueError
        raise InputError(
            f"vLLM's DeepSeek-V4 fp8_ds_mla layout only supports an FP8 KV cache, not {kv.kv_format} "
            "(models/deepseek_v4/attention.py); use --kv-cache-dtype auto or fp8",
            field="--kv-cache-dtype",
        )
    if model.num_attention_heads // layout.attn_tp > 128:  # nvidia/flashmla.py get_padded_num_q_heads
        raise InputError(f"vLLM's DeepSeek-V4 FlashMLA takes at most 128 q heads a rank, not "
                         f"{model.num_attention_heads // layout.attn_tp}: raise --tensor-parallel-size",
                         field="--tensor-parallel-size")  # fmt: skip
    if block_flag not in (None, MLA_BLOCK):
        raise UnsupportedModelError(f"vLLM's DeepSeek-V4 with --block-size {block_flag}: its sparse-MLA and indexer "
                                    f"backends take {MLA_BLOCK}-token kernel blocks; another size is not read",
                                    field="--block-size", source=model.source)  # fmt: skip
    if layout.pp > 1:
        raise UnsupportedModelError("DeepSeek-V4's packed KV groups under --pipeline-parallel-size > 1 (each "
                                    "stage's slice of compress_ratios) are not modelled", field="--pipeline-parallel-size")  # fmt: skip
    if layout.dcp > 1:
        raise UnsupportedModelError("DeepSeek-V4's KV cache under decode context parallel is not modelled",
                                    field="--decode-context-parallel-size")  # fmt: skip
    if kv.draft_layers:
        raise UnsupportedModelError("DeepSeek-V4's KV cache with an MTP draft (its layers' specs) is not modelled",
                                    field="--speculative-config")  # fmt: skip
    return dsv4_packing(model, range(model.num_layers), version)

"""DeepSeek-V4 as SGLang builds and sizes it (models/deepseek_v4.py; docs/engines/sglang.md §6.4, §20).

Weights, read at 0.5.23 and checked against its meta-built classes (engine-diff's registry rows of deepseek-ai
DeepSeek-V4-Flash/-Pro at TP 1 and 2, sm90):
- `wo_a` is built bf16 (`params_dtype=torch.bfloat16`, no quant config) unless `wo_a_fp8_gemm_enabled`: an
  Fp8Config with 128×128 blocks and SGLANG_OPT_FP8_WO_A_GEMM, which `serving_hook.py` turns off where DeepGEMM
  has no UE8M0 scales (sm90 without an explicit opt-in): weights_built.py `_dsv4_wo_a`, a row by GPU;
- MXFP4 routed experts (`Fp8Config.is_fp4_experts`, SGLANG_DSV4_FP4_EXPERTS) run on `flashinfer_mxfp4`, which the
  model's overrides pick on sm90/sm100/sm120 without an all-to-all backend (model_overrides/deepseek_v4.py): its
  Mxfp4FlashinferCutlassMoEMethod keeps the checkpoint's E8M0 scale, one byte per 32 (the book's MXFP4); the
  `auto` runner elsewhere stages them fp32 (Fp8MoEMethod.create_weights), not modelled.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engines.base import KvCell
from kvtop.domain.engines.budget_step import BudgetStep
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.kv import KvBook
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.rounding import round_down, round_up

if TYPE_CHECKING:
    from kvtop.domain.launch import LaunchSettings

# The pool (`DSV4PoolConfigurator`, model_executor/pool_configurator.py; deepseek_v4_memory_pool.py; 0.5.23), on
# CUDA without the unified ring (HIP only), HiSparse or speculative decoding, with FlashMLA's V4 row layout:
DSV4_PAGE = 256  # arg_groups/model_overrides/deepseek_v4.py: page_size = 256 on CUDA, over --page-size
V4_ROW, V4_PAGE_ALIGN = (
    584,
    576,
)  # kv_layout.py KVLayout.V4: 576 data + 8 scale bytes a row; a page padded to 576
STATE_BYTES = 4  # SGLANG_DSV4_COMPRESS_STATE_DTYPE float32
RING = {4: 8, 128: 128}  # get_compress_state_ring_size without draft tokens
DEFAULT_SWA_RATIO = 0.1  # the override's swa_full_tokens_ratio, which the pool reads as the operator's
DEFAULT_MAX_REQUESTS = 256  # deepseek_v4_hook.py apply_deepseek_v4_defaults: max_running_requests


class Dsv4Sizing(BaseModel):
    """What SGLang's DSV4 pool costs on one rank: a coefficient per full token and the bytes fixed before it."""

    model_config = ConfigDict(frozen=True)
    bytes_per_full_token: float  # compressed rows and index keys of the full token, and its SWA share
    bytes_per_swa_token: float  # one SWA slot: a raw row on every layer, the c4 compress states' share
    c128_state_bytes: int  # the ratio-128 compressors' state rings, fixed by the request slots
    swa_ratio: float

    def tokens(self, available: int, page: int) -> int:
        """`calculate_pool_sizes`: full tokens from the bytes left once the fixed states are taken, to the page."""
        left = max(available - self.c128_state_bytes, 0)
        return round_down(int(left / self.bytes_per_full_token), page) if self.bytes_per_full_token else 0


def paged_row_bytes(page: int, ratio: int = 0) -> float:
    """`_get_paged_kv_bytes_per_token`: a V4 row's bytes with its page's padding, a ratio's page holding page ÷ r."""
    rows = page // ratio if ratio else page
    return round_up(rows * V4_ROW, V4_PAGE_ALIGN) / rows


def dsv4_sizing(
    model: ModelSpec, layers: range, page: int, max_requests: int, swa_ratio: float
) -> Dsv4Sizing:
    """`DSV4PoolConfigurator` in ratio mode (the docstring above) for the stage holding `layers`."""
    c = model.compressed
    assert c is not None
    ratios = [c.ratios[i] for i in layers]
    c4, c128 = ratios.count(4), ratios.count(128)
    head, index = model.head_dim, c.index_head_dim
    index_key = index + index // 128 * 4  # get_dsv4_indexer_bytes_per_token: FP8 + an fp32 scale per 128
    c4_states = 2 * 2 * (head + index) * STATE_BYTES  # the c4 compressor's and its indexer's, per ring row
    swa = paged_row_bytes(page) * len(ratios) + RING[4] / page * c4_states * c4
    compressed = c4 * (paged_row_bytes(page, 4) / 4 + index_key / 4) + c128 * paged_row_bytes(page, 128) / 128
    rows = round_up((max_requests + 1) * RING[128] + RING[128] + 1, 128)  # _get_c128_state_fixed_bytes
    return Dsv4Sizing(bytes_per_full_token=swa_ratio * swa + compressed, bytes_per_swa_token=swa,
                      c128_state_bytes=rows * 2 * head * STATE_BYTES * c128, swa_ratio=swa_ratio)  # fmt: skip


def dsv4_pools(
    model: ModelSpec, settings: LaunchSettings, layout: ParallelLayout, kv: KvBook, budget: int, page: int,
    steps: list[BudgetStep],
) -> tuple[int, int, KvCell, int]:  # fmt: skip
    """(full tokens, SWA tokens, the cell, the pools' bytes) of a DeepSeek-V4 rank; what the pool does not model
    is refused by name (pipeline stages, a draft model's rings)."""
    if layout.pp > 1:
        raise UnsupportedModelError("DeepSeek-V4's pools under --pp-size > 1 (each stage's slice of "
                                    "compress_ratios) are not modelled", field="--pp-size")  # fmt: skip
    if kv.draft_layers:
        raise UnsupportedModelError("DeepSeek-V4's pools with speculative decoding (draft rings of 16 / 256 rows, "
                                    "the (L+1)/L inflation) are not modelled", field="--speculative-algorithm")  # fmt: skip
    if page % 128:  # calculate_pool_sizes asserts it
        raise InputError(
            f"DeepSeek-V4's pool needs a page that is a multiple of 128, not {page}", field="--page-size"
        )
    requests = max(1, (settings.max_running_requests or DEFAULT_MAX_REQUESTS) // layout.attn_dp)
    ratio = settings.swa_full_tokens_ratio or DEFAULT_SWA_RATIO
    sizing = dsv4_sizing(model, range(model.num_layers), page, requests, ratio)
    steps.append(BudgetStep(label="− c128 compress states", bytes=-sizing.c128_state_bytes,
                            note=f"{requests + 1} request slots × {RING[128]} rows (DSV4PoolConfigurator)"))  # fmt: skip
    steps.append(BudgetStep(label=f"cell: DSV4 bytes per full token (SWA × {ratio:g})",
                            value=sizing.bytes_per_full_token, note="compressed rows, index keys, SWA share"))  # fmt: skip
    full = sizing.tokens(budget, page) if budget > 0 else 0
    swa = round_down(int(full * ratio), page)
    cell = dsv4_cell(sizing, requests)
    return full, swa, cell, dsv4_pool_bytes(cell, full)


def dsv4_cell(sizing: Dsv4Sizing, requests: int) -> KvCell:
    """The figure every view shows for a DeepSeek-V4 rank: bytes per full token (the raw per-layer rows of the KV
    book are not what a token costs: a compressed row stands for 4 or 128 tokens, an SWA row for a tenth of one),
    and the c128 state rings the request slots fix beside them."""
    return KvCell(bytes_per_token=sizing.bytes_per_full_token, unit="per full token",
                  counts=f"compressed rows, index keys and {sizing.swa_ratio:g} × an SWA slot (DSV4PoolConfigurator)",
                  fixed_bytes=sizing.c128_state_bytes,
                  fixed_what=f"c128 compress states: {requests + 1} request slots × {RING[128]} rows")  # fmt: skip


def dsv4_pool_bytes(cell: KvCell, full_tokens: int) -> int:
    """The pools' bytes for `full_tokens` full tokens: the cell's share and the fixed state rings."""
    return math.ceil(full_tokens * cell.bytes_per_token) + cell.fixed_bytes

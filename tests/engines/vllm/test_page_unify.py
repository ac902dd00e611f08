"""vLLM's page-size unification for full and sliding-window layers of different KV sizes (page_unify.py, V29).

Expected figures come from the committed engine runs (tests/data/engine_diff/vllm-0.33.0.flags.json: vLLM 0.33.0's
own `KVCacheConfig` and `GPU KV cache size` line, 40 GiB of KV memory given by --kv-cache-memory-bytes) and from
vLLM's arithmetic written out below (unify_kv_cache_spec_page_size, get_kv_cache_config_from_groups,
get_max_concurrency_for_kv_cache_config in vllm/v1/core/kv_cache_{planning,utils}.py), never from kvtop.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from benchmarks.engine_diff.kvtop_side import kvtop_plan
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.page_unify import unified_pages
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS
from tests.data_paths import DATA

KV_MEMORY = 42_949_672_960  # --kv-cache-memory-bytes 40 GiB in every row
V033 = ResolvedVersion(text="0.33.0")
H200 = 143771 << 20


def _row(config: str, variant: str) -> dict[str, Any]:
    rows = json.loads((DATA / "engine_diff" / "vllm-0.33.0.flags.json").read_text())["results"]
    return next(r for r in rows if r["config"] == config and r.get("variant") == variant)


def _block_sizes(row: dict[str, Any]) -> dict[str, int]:
    return {g["kind"]: g["block_size"] for g in row["groups"]}


def test_gemma4_block32_full_layers_take_64_token_blocks() -> None:
    """Row google--gemma-4-26B-A4B / page32 (TP 2, --block-size 32, max_model_len 32,768). Per rank a sliding
    layer holds 4 KV heads × 256 × 2 (K, V) × 2 B = 4,096 B a token, a full layer 1 × 512 × 2 × 2 = 2,048 B: pages
    131,072 and 65,536 B at 32 tokens, so the full layers' block doubles to 64. 25 sliding + 5 full layers:
    group_size 5 (25 ≥ 1.5 × 5), 5 + 1 groups, 5 slots × 131,072 = 655,360 B a block; 40 GiB // 655,360 = 65,536
    blocks. A request: full cdiv(32,768, 64) = 512; sliding 5 × (cdiv(min(1,024 − 1 + 16,384, 32,768), 32) + 1)
    = 5 × 545 = 2,725; 65,536 / 3,237 × 32,768 = 663,417 tokens."""
    row = _row("google--gemma-4-26B-A4B", "page32")
    blocks = 5 * (math.ceil(min(1024 - 1 + 16_384, 32_768) / 32) + 1) + math.ceil(32_768 / 64)
    assert (row["bytes_per_block"], row["num_blocks"], blocks) == (655_360, KV_MEMORY // 655_360, 3_237)
    assert _block_sizes(row) == {"SlidingWindowSpec": 32, "FullAttentionSpec": 64}
    assert row["kv_cache_size_tokens"] == int(65_536 / blocks * 32_768) == 663_417
    plan = kvtop_plan("vllm", "0.33.0", row)
    assert (plan["block_size"], plan["num_blocks"], plan["tokens"]) == (32, 65_536, 663_417)
    assert plan["kv_pool_bytes"] == row["pool_bytes"] == 65_536 * 655_360


def test_mimo_v2_flash_pp2_projects_groups_with_full_blocks_of_32() -> None:
    """Row XiaomiMiMo--MiMo-V2-Flash / pp2 (TP 2 × PP 2, block 16). Per rank a sliding layer 4 heads × (192 + 128) ×
    2 B = 2,560 B a token, a full layer 2 heads × 320 × 2 = 1,280 B: the full layers' block becomes 32 (page
    40,960 B). 9 full + 39 sliding layers: 1 + 5 groups of 9; stage 0 holds 5 full and 4, 4, 4, 4, 3 sliding of
    them: 5 slots, 204,800 B a block; 40 GiB // 204,800 = 209,715 blocks. A request: full cdiv(32,768, 32) =
    1,024; sliding 5 × (cdiv(min(128 − 1 + 24,576, 32,768), 16) + 1) = 5 × 1,545 = 7,725 (3 batches of 8,192 in
    flight at PP 2); 209,715 / 8,749 × 32,768 = 785,454 tokens."""
    row = _row("XiaomiMiMo--MiMo-V2-Flash", "pp2")
    blocks = math.ceil(32_768 / 32) + 5 * (math.ceil(min(128 - 1 + 24_576, 32_768) / 16) + 1)
    assert (row["bytes_per_block"], row["num_blocks"], blocks) == (204_800, KV_MEMORY // 204_800, 8_749)
    assert _block_sizes(row) == {"FullAttentionSpec": 32, "SlidingWindowSpec": 16}
    assert row["kv_cache_size_tokens"] == int(209_715 / blocks * 32_768) == 785_454
    plan = kvtop_plan("vllm", "0.33.0", row)
    assert (plan["block_size"], plan["num_blocks"], plan["tokens"]) == (16, 209_715, 785_454)


@pytest.mark.parametrize(
    ("full", "window", "block", "mla", "expected"),
    [
        # Gemma-4 TP 2 (row pp2): 2,048 and 4,096 B → pages 32,768 and 65,536 at 16: the full block doubles
        (2_048.0, 4_096.0, 16, False, (65_536, 32, 16)),
        # MiMo-V2-Flash TP 1 (row pp4): 5,120 sliding, 2,560 full at 16 → 81,920 B pages, full blocks of 32
        (2_560.0, 5_120.0, 16, False, (81_920, 32, 16)),
        # a page that does not divide the largest (3,072 into 4,096 × 16): non-MLA attention keeps its block and
        # pads the page (page_size_padded = the largest)
        (3_072.0, 4_096.0, 16, False, (65_536, 16, 16)),
    ],
)  # fmt: skip
def test_unified_pages_follow_vllms_ratio_or_padding(
    full: float, window: float, block: int, mla: bool, expected: tuple[int, int, int]
) -> None:
    pages = unified_pages(full, window, block, mla, V033)
    assert (pages.page_bytes, pages.full_block, pages.window_block) == expected


def test_an_mla_page_that_does_not_divide_is_refused() -> None:
    """unify_kv_cache_spec_page_size raises NotImplementedError for an MLA page it can neither scale nor pad."""
    with pytest.raises(UnsupportedModelError, match="MLA page"):
        unified_pages(3_072.0, 4_096.0, 16, True, V033)


def test_releases_before_the_read_one_still_refuse_by_name() -> None:
    with pytest.raises(UnsupportedModelError, match="not modelled before 0.33.0"):
        unified_pages(2_048.0, 4_096.0, 16, False, ResolvedVersion(text="0.20.1"))


def test_gemma4_without_the_hybrid_manager_sums_every_layers_page() -> None:
    """--disable-hybrid-kv-cache-manager: unify_hybrid_kv_cache_specs makes the sliding layers FullAttentionSpec with
    their own heads, so the specs form one UniformTypeKVCacheSpecs group whose page is the sum of the layers' pages
    (kv_cache_interface.py page_size_bytes). At TP 2 and block 16 the layers' pages are 65,536 B (sliding) and
    32,768 B (full) — the pp2 row's stage layer_specs — so a block is 25 × 65,536 + 5 × 32,768 = 1,802,240 B;
    40 GiB // 1,802,240 = 23,831 blocks; a request cdiv(32,768, 16) = 2,048 of them: 381,296 tokens."""
    specs = {s["kind"]: s["page_size_bytes"] for s in _row("google--gemma-4-26B-A4B", "pp2")["stages"][0]["layer_specs"]}
    assert specs == {"SlidingWindowSpec": 65_536, "FullAttentionSpec": 32_768}
    model = load_model(str(CONFIGS / "heldout" / "google--gemma-4-26B-A4B.json"))
    flags = ["--tp", "2", "--max-model-len", "32768", "--disable-hybrid-kv-cache-manager",
             "--kv-cache-memory-bytes", str(KV_MEMORY)]  # fmt: skip
    engine = predict(model, parse_flags("vllm", flags), gpu_total_bytes=H200, gpu_name="H200").engine
    per_block = 25 * 65_536 + 5 * 32_768
    assert (engine.page_size, engine.num_blocks) == (16, KV_MEMORY // per_block) == (16, 23_831)
    assert engine.token_capacity == int(23_831 / 2_048 * 32_768) == 381_296

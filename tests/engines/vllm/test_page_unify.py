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


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        # v0.12.0 wheel kv_cache_utils.py:885-922: a page that does not divide raises NotImplementedError
        ("0.19.0", "Cannot unify by adjusting block_size"),
        # v0.24.0 :1049-1100: padded only where the backend reads KV by block stride, which kvtop does not read
        ("0.25.0", "indexes_kv_by_block_stride"),
    ],
)  # fmt: skip
def test_a_page_that_does_not_divide_before_v0_29(version: str, expected: str) -> None:
    with pytest.raises(UnsupportedModelError, match=expected):
        unified_pages(3_072.0, 4_096.0, 16, False, ResolvedVersion(text=version))


def test_from_v0_29_a_non_mla_page_that_does_not_divide_is_padded() -> None:
    """v0.29.0 wheel kv_cache_utils.py:1135-1197: replace(spec, page_size_padded=max_page_size), the block kept."""
    pages = unified_pages(3_072.0, 4_096.0, 16, False, ResolvedVersion(text="0.29.0"))
    assert (pages.page_bytes, pages.full_block, pages.window_block) == (65_536, 16, 16)


def test_before_v0_12_unequal_pages_are_refused_as_vllm_refuses_them() -> None:
    """v0.11.2 wheel kv_cache_utils.py:1140-1177: get_kv_cache_groups has no unification; unequal pages reach
    `raise NotImplementedError`."""
    with pytest.raises(UnsupportedModelError, match="NotImplementedError before 0.12.0"):
        unified_pages(2_048.0, 4_096.0, 16, False, ResolvedVersion(text="0.11.2"))


GEMMA4 = CONFIGS / "heldout" / "google--gemma-4-26B-A4B.json"
A100 = 80 << 30
KV_20_GIB = 21_474_836_480


def _gemma4_a100(version: str) -> Any:
    flags = ["--max-model-len", "32768", "--max-num-batched-tokens", "2048", "--kv-cache-memory-bytes",
             str(KV_20_GIB), "--engine-version", version]  # fmt: skip
    return predict(load_model(str(GEMMA4)), parse_flags("vllm", flags), gpu_total_bytes=A100, gpu_name="A100-80GB").engine


@pytest.mark.parametrize("version", ["0.19.0", "0.33.0"])
def test_gemma4_26b_a4b_tp1_pages_and_blocks(version: str) -> None:
    """TP 1 (config: 8 KV heads × 256 on the sliding layers; 2 global KV heads × 512 on the full ones, K and V
    both stored, gemma4.py Attention(num_kv_heads, head_dim) in v0.19.0 and v0.33.0): sliding 8 × (256 + 256) × 2 B
    = 8,192 B a token, full 2 × (512 + 512) × 2 = 4,096 B. At block 16 (TRITON_ATTN on A100, forced by
    Gemma4Config for head dims 256 ≠ 512 > 256: preferred block 16) the pages are 131,072 and 65,536 B; 65,536
    divides 131,072, so unify_kv_cache_spec_page_size gives the full layers 16 × 2 = 32 tokens a block (v0.19.0
    kv_cache_utils.py:914-951, v0.33.0 kv_cache_planning.py:346-408, the same arithmetic)."""
    pages = unified_pages(4_096.0, 8_192.0, 16, False, ResolvedVersion(text=version))
    assert (pages.page_bytes, pages.full_block, pages.window_block) == (131_072, 32, 16)


def test_gemma4_26b_a4b_at_v0_19_0_by_hand() -> None:
    """v0.19.0, A100, 20 GiB of KV (--kv-cache-memory-bytes), L 32,768. 25 sliding + 5 full layers:
    _get_kv_cache_groups_uniform_page_size group_size 5 (25 ≥ 1.5 × 5), 5 + 1 groups; get_num_blocks
    21,474,836,480 // 131,072 // 5 = 32,768 blocks. _report_kv_cache_config (v0.19.0 :1287-1329) prints
    num_blocks // 6 groups × min block 16 = 5,461 × 16 = 87,376 tokens. Maximum concurrency
    (get_max_concurrency_for_kv_cache_config :802-820): full cdiv(32,768, 32) = 1,024 blocks; each sliding group
    cdiv(min(1,024 − 1 + 2,048, 32,768), 16) + 1 = 193 (SlidingWindowSpec: max_num_batched_tokens, one batch):
    1,024 + 5 × 193 = 1,989; 32,768 / 1,989."""
    engine = _gemma4_a100("0.19.0")
    assert (engine.page_size, engine.num_blocks, engine.block_bytes) == (16, 32_768, 5 * 131_072)
    assert engine.token_capacity == 32_768 // 6 * 16 == 87_376
    assert engine.max_concurrency == pytest.approx(32_768 / 1_989)


def test_gemma4_26b_a4b_at_v0_33_0_by_hand() -> None:
    """The same launch at v0.33.0: the same 32,768 blocks of 655,360 B; a sliding group now counts
    max_in_flight_tokens = 2 batches (async scheduling) × 2,048: cdiv(1,023 + 4,096, 16) + 1 = 321 blocks;
    1,024 + 5 × 321 = 2,629 a request; int(32,768 / 2,629 × 32,768) = 408,422 tokens."""
    engine = _gemma4_a100("0.33.0")
    assert (engine.page_size, engine.num_blocks, engine.block_bytes) == (16, 32_768, 655_360)
    assert engine.token_capacity == int(32_768 / 2_629 * 32_768) == 408_422


def test_mimo_v2_before_v0_20_is_refused_for_its_padded_v() -> None:
    """v0.19.0 mimo_v2_flash.py:288-316 builds Attention(heads, head_dim 192) and pads V (128) to 192 in forward:
    the cache holds 192 + 192 a head, not kvtop's 192 + 128."""
    model = load_model(str(CONFIGS / "heldout" / "XiaomiMiMo--MiMo-V2-Flash.json"))
    flags = ["--tp", "2", "--max-model-len", "32768", "--engine-version", "0.19.0"]
    with pytest.raises(UnsupportedModelError, match="padded to K's width"):
        predict(model, parse_flags("vllm", flags), gpu_total_bytes=H200, gpu_name="H200")


def test_mimo_v2_before_v0_14_is_refused_as_the_unregistered_class_it_is() -> None:
    """v0.13.0's wheel has no models/mimo_v2_flash.py and its registry.py no MiMoV2 class (v0.14.0 registry.py:162
    adds MiMoV2FlashForCausalLM): vLLM 0.13.0 stops at 'Model architectures [...] are not supported', not at a padded
    V it never builds. The padding rule passes it by, and the plan is refused by the registry check."""
    from kvtop.domain.engines.vllm.page_unify import check_v_width
    from kvtop.domain.launch_check import launch_refusals

    model = load_model(str(CONFIGS / "heldout" / "XiaomiMiMo--MiMo-V2-Flash.json"))
    check_v_width(model, ResolvedVersion(text="0.13.0"))  # no refusal by this rule
    with pytest.raises(UnsupportedModelError, match="padded to K's width"):
        check_v_width(model, ResolvedVersion(text="0.14.0"))
    flags = ["--tp", "2", "--max-model-len", "32768", "--engine-version", "0.13.0"]
    ledger = predict(model, parse_flags("vllm", flags), gpu_total_bytes=H200, gpu_name="H200")
    refusals = launch_refusals(ledger)
    assert refusals and "are not supported for now" in refusals[0].message


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
             "--kv-cache-memory-bytes", str(KV_MEMORY), "--engine-version", "0.33.0"]  # fmt: skip  # block 16: 0.33.0's
    engine = predict(model, parse_flags("vllm", flags), gpu_total_bytes=H200, gpu_name="H200").engine
    per_block = 25 * 65_536 + 5 * 32_768
    assert (engine.page_size, engine.num_blocks) == (16, KV_MEMORY // per_block) == (16, 23_831)
    assert engine.token_capacity == int(23_831 / 2_048 * 32_768) == 381_296

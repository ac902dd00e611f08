"""vLLM's group size by release (`_get_kv_cache_groups_uniform_page_size`, pp_groups.MOST_LAYERS_RATIO_ERAS).

The engine's own comment names the case: "gpt-oss-20b + eagle, with 12 sw + 13 full. We pad it to (13 sw, 13 full)
instead of (12 sw, 24 full)" (v0.12.0 v1/core/kv_cache_utils.py:1018-1022): the least count (12) through v0.11.2,
whose code is `group_size = min(...)` (v0.11.0 :977), the most (13) from v0.12.0 under its 1.25 ratio; and a pair
between 1.25 and 1.5 × (20 and 28: 28 < 30) groups by 20 until v0.18.0 raised the ratio to 1.5 (v0.17.1 :1043
`* 1.25`, v0.18.0 :1043 `* 1.5`).
"""

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.pp_groups import group_size_of


def test_gpt_oss_with_eagle_groups_by_the_least_before_0_12() -> None:
    assert group_size_of((12, 13), ResolvedVersion(text="0.11.0")) == 12
    assert group_size_of((12, 13), ResolvedVersion(text="0.12.0")) == 13


def test_the_ratio_rose_to_1_5_at_0_18() -> None:
    assert group_size_of((20, 28), ResolvedVersion(text="0.17.1")) == 20
    assert group_size_of((20, 28), ResolvedVersion(text="0.18.0")) == 28

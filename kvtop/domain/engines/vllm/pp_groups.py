"""vLLM's KV cache groups under pipeline parallelism: computed on every stage's specs, projected per worker.

`get_kv_cache_groups` runs on the merged specs of all stages (vllm/v1/core/kv_cache_planning.py; docs/engines/
vllm.md §4.1–4.2): a hybrid of full and sliding-window layers gets `group_size` from the whole model's counts
(the least, or the most if under 1.5 × the least), each type split into `cdiv(n, group_size)` groups taking
`layers[i::num_groups]` in layer order; `_project_kv_cache_groups_to_worker` keeps each worker's own layers, and
the worker's block is its largest projected group's layers × the page. Engine-diff runs (0.33.0, V23): Gemma-3-27B
TP1×PP4 stage 0 (layers 0–14: sliding positions 0–12 over 6 groups, 3, 2, 2, 2, 2, 2; full 2) holds 3 layer slots,
393,216 B a block, where its own counts (13 and 2) would group by 2.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.model import LayerKind, ModelSpec
from kvtop.domain.rounding import ceil_div

# Whether the groups are every stage's (projected per worker) or the worker's own, by release.
MERGED_GROUPS_ERAS: Eras[bool] = Eras((
    Era("", False, "v0.10.2 v1/engine/core.py:193 get_kv_cache_config per worker on its own specs: the worker's "
        "own layers"),
    Era("0.11.0", True, "v0.11.0 v1/core/kv_cache_utils.py get_kv_cache_configs :1211 merges every worker's specs "
        "(:1249-1259), groups them (get_kv_cache_groups :1260) and keeps each worker's layers of each group "
        "(:1263-1271); v0.17.1 :1501 names it _project_kv_cache_groups_to_worker (:1465); v0.21.0 :1880, :1922 (the "
        "Gemma-4-31B PP 4 log, tests/engines/vllm/test_gemma4_pp4_groups.py); v0.33.0 v1/core/kv_cache_planning.py "
        "alike (engine-diff runs, Gemma-3-27B PP 2 and 4); v0.34.0 :1517, :1608 alike"),
))  # fmt: skip


# §4.1 step 6's `_get_kv_cache_groups_uniform_page_size`: the group size is the most layers of a kind where the most
# are under this many times the least (gpt-oss-20b + EAGLE's 12 + 13 as 13), else the least; None: the least always
MOST_LAYERS_RATIO_ERAS: Eras[float | None] = Eras((
    Era("", None, "v1/core/kv_cache_utils.py group_size = min(...): v0.10.2, v0.11.0 :977, v0.11.1 and v0.11.2 :974"),
    Era("0.12.0", 1.25, "v0.12.0 kv_cache_utils.py:1017 `max_num_layers < min_num_layers * 1.25`; v0.13.0 :1022, "
        "v0.15.0 :1036, v0.17.1 :1043"),
    Era("0.18.0", 1.5, "v0.18.0 kv_cache_utils.py:1043 `* 1.5`; v0.21.0 :1139, v0.24.0 :1195, v0.33.0 "
        "kv_cache_planning.py:524, v0.34.0 :570"),
))  # fmt: skip


def group_size_of(counts: tuple[int, ...], version: ResolvedVersion) -> int:
    """§4.1 step 6: the least layer count of a kind (a KV spec: a draft's own layers are one, dflash.py), or the most
    where under the release's ratio × the least."""
    low, high = min(counts), max(counts)
    ratio = MOST_LAYERS_RATIO_ERAS.at(version)
    return high if ratio is not None and high < ratio * low else low


def projected_groups(
    model: ModelSpec, stage: range, version: ResolvedVersion, mamba: bool = False
) -> tuple[int, int, int]:
    """(full groups, sliding-window or Mamba groups, this stage's slots per block) of a two-kind model under PP."""
    full = model.layers_of(LayerKind.FULL)
    sliding = tuple(i for i in range(model.num_layers) if model.has_state(i)) if mamba else model.layers_of(LayerKind.SLIDING)
    size = group_size_of((len(full), len(sliding)), version)
    full_groups, sliding_groups = ceil_div(len(full), size), ceil_div(len(sliding), size)

    def most(layers: tuple[int, ...], groups: int) -> int:
        counts = [0] * groups
        for position, layer in enumerate(layers):
            if layer in stage:
                counts[position % groups] += 1
        return max(counts)

    return full_groups, sliding_groups, max(most(full, full_groups), most(sliding, sliding_groups))

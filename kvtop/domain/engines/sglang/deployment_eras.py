"""SGLang's deployment rules that changed between releases (docs/engines/sglang.md §19).

Each era was read in the release's own wheel (`server_args.py`, later `arg_groups/memory_hook.py`;
`mem_cache/memory_pool.py`, later `memory_pool_host.py` / `pool_host/base.py`); "read at" names the
releases whose code was read, the first of them being where kvtop starts the era.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for

# §19.1 The automatic mem_fraction_static keeps more in reserve for a speculative draft (MiB): the
# algorithm's own figure, else "*" (any other algorithm). `{}`: no speculative reserve.
SPEC_RESERVE_ERAS: Eras[dict[str, int]] = Eras((
    Era("", {}, "server_args.py: no speculative reserve in the automatic fraction (read at v0.4.7)"),
    Era("0.4.7.post1", {"*": 2048}, "server_args.py __post_init__: reserved_mem += 2 * 1024 with any "
        "speculative algorithm (read at v0.4.7.post1 – v0.5.1)"),
    Era("0.5.2", {"STANDALONE": 6144, "*": 2048}, "server_args.py: STANDALONE 6 * 1024, any other 2 * 1024 "
        "(read at v0.5.2, v0.5.3rc0)"),
    Era("0.5.3rc2", {"STANDALONE": 6144, "NGRAM": 0, "*": 2048}, "server_args.py _handle_gpu_memory_settings: "
        "after the 10 GiB floor; NGRAM none (read at v0.5.3rc2 – v0.5.9)"),
    Era("0.5.10rc0", {"STANDALONE": 6144, "NGRAM": 0, "*": 4096}, "server_args.py: EAGLE-style drafts 4 * 1024 "
        "(read at v0.5.10rc0 – v0.5.13.post1)"),
    Era("0.5.14", {}, "arg_groups/memory_hook.py: no speculative reserve (read at v0.5.14, v0.5.15, v0.5.23)"),
))  # fmt: skip

# §19.2 DeepEP all-to-all buffers captured in the decode graph: reserved on top of the floor (MiB).
DEEPEP_RESERVE_ERAS: Eras[int] = Eras((
    Era("", 0, "server_args.py: no DeepEP reserve (read at v0.5.6.post2 – v0.5.14)"),
    Era("0.5.15", 2048, "arg_groups/memory_hook.py reserve_for_deepep_a2a_mb: 2 * 1024 with --moe-a2a-backend "
        "deepep, the decode CUDA graph on and not a prefill server (read at v0.5.15, v0.5.23)"),
))  # fmt: skip
# §19.2 Where DeepEP's buffers are allocated: `DeepEPBuffer.get_deepep_buffer`, called from each dispatcher's
# `_get_buffer` at its first dispatch/combine, tests neither the CUDA graphs nor the serving role, so every DeepEP
# launch allocates them after the pool (read in the wheels of every release since the reserve was read).
DEEPEP_BUFFER_SOURCE = (
    "layers/moe/token_dispatcher/deepep.py get_deepep_buffer at the first dispatch, on every launch (0.5.6.post2 "
    ":144-221, :355; 0.5.14 :160-260, :617; 0.5.15 :169-266, :623; 0.5.23 :204-304, :733)"
)
# §19.2 The breakable prefill graphs beside DeepEP (bridge pool + NVL first-touch during capture): added to the graph
# reserve, before the 10 GiB floor, wherever the prefill graphs stay on (MiB).
BREAKABLE_DEEPEP_ERAS: Eras[int] = Eras((
    Era("", 0, "server_args.py reserve_for_graph_mb: no prefill-graph DeepEP term (read at v0.5.15 – v0.5.16)"),
    Era("0.5.17", 1024, "reserve_for_graph_mb: 1 * 1024 for 'Prefill-BCG DeepEP' with the breakable prefill backend "
        "and --moe-a2a-backend deepep (0.5.17 server_args.py:4914-4921, 0.5.19 arg_groups/memory_hook.py:327-333, "
        "0.5.23 memory_hook.py:391-397)"),
))  # fmt: skip

# §19.4 HiCache's host pool: tokens = ratio × the device pool's (or --hicache-size GB ÷ bytes per token),
# aligned to the page down (`size − size % page`) or up by one page (`(size // page + 1) × page`).
HICACHE_ALIGN_ERAS: Eras[str] = Eras((
    Era("", "down", "mem_cache/memory_pool.py HostKVCache: size − size % page_size "
        "(read at v0.4.7 – v0.5.5.post2)"),
    Era("0.5.5.post3", "up", "mem_cache/memory_pool_host.py HostKVCache: page_num = size // page_size + 1 "
        "(read at v0.5.5.post3 – v0.5.23, pool_host/base.py)"),
))  # fmt: skip
# A host pool no larger than the device pool: an assert stops the start-up, later only a warning.
HICACHE_SMALLER_ERAS: Eras[bool] = Eras((
    Era("", True, "HostKVCache: assert self.size > device_pool.size (read at v0.4.7 – v0.5.14)"),
    Era("0.5.15", False, "HostKVCache: a warning that L2 effectiveness is reduced (read at v0.5.15, v0.5.23)"),
))
HICACHE_SINCE = "0.4.2.post1"  # --enable-hierarchical-cache's first release (releases.py)
HICACHE_DEFAULT_RATIO = 2.0  # ServerArgs.hicache_ratio
HICACHE_HOST_RESERVE_BYTES = 10 << 30  # HostKVCache keeps 10 GiB of the host's available memory free


def spec_reserve_mib(algorithm: str, version: ResolvedVersion) -> tuple[int, str]:
    """MiB the automatic fraction keeps for a speculative `algorithm` at `version`, and the era's source."""
    era = era_for(SPEC_RESERVE_ERAS, version)
    table = era.value
    return table.get(algorithm.upper(), table.get("*", 0)), era.source


def deepep_reserve_mib(version: ResolvedVersion) -> tuple[int, str]:
    era = era_for(DEEPEP_RESERVE_ERAS, version)
    return era.value, era.source


def breakable_deepep_mib(version: ResolvedVersion) -> tuple[int, str]:
    """MiB the graph reserve adds where the breakable prefill graphs run beside DeepEP, and the era's source."""
    era = era_for(BREAKABLE_DEEPEP_ERAS, version)
    return era.value, era.source

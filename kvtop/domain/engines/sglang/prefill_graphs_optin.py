"""The reserve SGLang's automatic fraction keeps for prefill (piecewise) CUDA graphs a launch turns on with
`--enable-piecewise-cuda-graph`, before they were on by default (v0.5.10rc0: eras.PCG_DEFAULT_SINCE).

`_handle_gpu_memory_settings` of each release read (the wheels on PyPI, server_args.py):
- ≤ v0.5.5 (read at 0.5.3.post1, 0.5.4, 0.5.5): no term;
- v0.5.6 (:856): `reserved_mem += piecewise_cuda_graph_max_tokens // 4` after the 10 GiB floor and the draft's
  reserve; `piecewise_cuda_graph_max_tokens` defaults to 4096;
- v0.5.7 (:944): `… // 8`, the default max tokens now `chunked_prefill_size` (:898);
- v0.5.8, v0.5.9 (:1013, :1045): `len(piecewise_cuda_graph_tokens) * 8` before the floor, the sizes up to the max
  tokens (`chunked_prefill_size`, 2048 for an MLA model: :974); v0.5.8's list starts its 64-step at 640, v0.5.9's
  at 576 (eras.pcg_sizes).
`--piecewise-cuda-graph-max-tokens` (a flag kvtop does not read, flags_unmodelled_late.py) is taken at its default.

The flag itself exists from v0.5.4 (server_args.py:2976; v0.5.3 and v0.5.3.post1 have none) through v0.5.13
(:6665, a DeprecatedAction from v0.5.10rc0: :5393 "Piecewise cuda graph is enabled by default"); v0.5.14 (:6390),
v0.5.15.post1 (:6275) and v0.5.16 (:7232) have only `--disable-piecewise-cuda-graph`. A release without it is refused
by name, as SGLang's argparse refuses it (the flag's row in flag_releases.READ).
"""

from __future__ import annotations

from collections.abc import Callable

from kvtop.domain.deployment_flags import flag_set
from kvtop.domain.engines.base import EngineInputs
from kvtop.domain.engines.sglang.flag_releases import check_flag_release
from kvtop.domain.engines.versions import Era, Eras, era_for

ENABLE_FLAG = "--enable-piecewise-cuda-graph"
OPTIN_ERAS: Eras[str | None] = Eras((
    Era("", None, "no prefill-graph term in the reserve (0.5.3.post1, 0.5.4, 0.5.5 server_args.py)"),
    Era("0.5.6", "quarter", "0.5.6 server_args.py:856: + piecewise_cuda_graph_max_tokens // 4 (4096), after the floor"),
    Era("0.5.7", "eighth", "0.5.7 server_args.py:944: + max tokens // 8 (chunked_prefill_size), after the floor"),
    Era("0.5.8", "sizes_from_640", "0.5.8 server_args.py:1013: + 8 MiB a captured size, before the floor"),
    Era("0.5.9", "sizes", "0.5.9 server_args.py:1045: the same; the 64-step of the sizes from 576"),
    Era("0.5.10rc0", None, "on by default (eras.PCG_DEFAULT_SINCE): the reserve's own term"),
))  # fmt: skip


def check_optin_flag(inputs: EngineInputs) -> None:
    """Refuse `--enable-piecewise-cuda-graph` at a release whose command line has no such flag (v0.5.4 … v0.5.13:
    its row in flag_releases.READ)."""
    if flag_set(inputs.settings, ENABLE_FLAG[2:]):
        check_flag_release(ENABLE_FLAG, inputs.version)


def optin_reserve_mib(inputs: EngineInputs, chunked: int, sizes: Callable[[int], int]) -> tuple[float, float, str]:
    """(MiB before the 10 GiB floor, MiB after it, why) the release reserves for opt-in prefill graphs;
    `sizes(max_tokens)` counts v0.5.9's captured sizes (eras.pcg_sizes)."""
    rule = era_for(OPTIN_ERAS, inputs.version).value
    if rule is None or not flag_set(inputs.settings, ENABLE_FLAG[2:]):
        return 0.0, 0.0, ""
    if rule == "quarter":
        return 0.0, 4096 // 4, f", {4096 // 4} MiB of it {ENABLE_FLAG} (4096 max tokens ÷ 4)"
    max_tokens = max(chunked, 0)
    if rule == "eighth":
        return 0.0, max_tokens // 8, f", {max_tokens // 8} MiB of it {ENABLE_FLAG} ({max_tokens} max tokens ÷ 8)"
    if inputs.model.mla is not None:
        max_tokens = 2048
    count = sizes(max_tokens) - (1 if rule == "sizes_from_640" and max_tokens >= 576 else 0)
    return 8.0 * count, 0.0, f", {8 * count} MiB of it {ENABLE_FLAG} ({count} sizes × 8 MiB)"

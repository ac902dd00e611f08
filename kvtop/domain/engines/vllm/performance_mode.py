"""`--performance-mode` (VllmConfig.performance_mode, v0.17.0 on): what each mode changes of the memory kvtop sizes.

The flag takes argparse's choices "balanced" (the default), "interactivity" and "throughput" (config/vllm.py
`PerformanceMode`, :320 at v0.17.0, :425 at v0.29.0, :471 at v0.34.0). Read in the v0.16.0 … v0.34.0 wheels:
- v0.16.0 has no `performance_mode` (engine/arg_utils.py, config/vllm.py): the flag is refused there, as argparse would.
- "throughput" doubles max_num_batched_tokens and max_num_seqs where the launch leaves them to vLLM, after the
  usage context's defaults and before the chunked-prefill floor and the max_num_seqs × max_model_len cap
  (EngineArgs._set_default_max_num_seqs_and_batched_tokens_args: engine/arg_utils.py:2128-2132 at v0.17.0, :2905-2909
  at v0.29.0, :3184-3188 at v0.33.0, :3221-3225 at v0.34.0). The default largest capture size, min(2 × max_num_seqs,
  512), follows the doubled seqs.
- "interactivity" captures every size from 1 to 32 instead of 1, 2, 4 below the every-8 sizes, where the compilation
  config states no capture sizes (VllmConfig._set_cudagraph_sizes: config/vllm.py:1404-1408 at v0.17.0, :2114-2118 at
  v0.29.0, :2573-2577 at v0.33.0, :2472-2476 at v0.34.0). v0.34.0 also reads it for SM100's wider prefill grid and
  adaptive verification's decode grid (config/compilation.py `dense_head`): not read here.
The lines are the same in every wheel v0.17.0 … v0.34.0 read (hashed per release, session 59).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import InputError
from kvtop.domain.redact import quoted

FLAG = "--performance-mode"
Mode = Literal["balanced", "interactivity", "throughput"]
MODES: tuple[Mode, ...] = ("balanced", "interactivity", "throughput")
MODE_ERAS: Eras[bool] = Eras((
    Era("", False, "v0.16.0 engine/arg_utils.py and config/vllm.py have no performance_mode"),
    Era("0.17.0", True, "engine/arg_utils.py:602, :1277 (v0.17.0); config/vllm.py:320 (v0.17.0) … :471 (v0.34.0)"),
))  # fmt: skip
INTERACTIVITY_FINE_UP_TO = 32  # `interactivity_max = min(max_cudagraph_capture_size, 32)`
THROUGHPUT_BATCH_FACTOR = 2  # `self.max_num_batched_tokens *= 2`, `self.max_num_seqs *= 2`


def performance_mode(flags: Mapping[str, object] | None, version: ResolvedVersion) -> Mode:
    """The mode a launch runs: the flag's, else "balanced"; an InputError naming the flag where the release lacks
    it (not at a release only inferred, which the flag says is a later one) or the value is not one of argparse's
    choices."""
    value = (flags or {}).get(FLAG[2:])
    if value is None:
        return "balanced"
    if not MODE_ERAS.at(version) and not version.approximate:
        raise InputError(f"not a flag of vLLM {version.label} ({MODE_ERAS[0].source}; from v0.17.0)", field=FLAG)
    for mode in MODES:
        if value == mode:
            return mode
    raise InputError(f"{quoted(value)}: one of {', '.join(MODES)} (argparse's choices)", field=FLAG)


def batch_factor(flags: Mapping[str, object] | None, version: ResolvedVersion) -> tuple[int, str]:
    """(factor, why) on the default max_num_batched_tokens and max_num_seqs: 2 under "throughput", else 1 ('')."""
    if performance_mode(flags, version) != "throughput":
        return 1, ""
    return THROUGHPUT_BATCH_FACTOR, f"× {THROUGHPUT_BATCH_FACTOR} under {FLAG} throughput (EngineArgs)"


def smallest_sizes(flags: Mapping[str, object] | None, version: ResolvedVersion) -> tuple[int, ...]:
    """The default capture sizes below the every-8 ones: 1 … 32 under "interactivity", else 1, 2, 4."""
    if performance_mode(flags, version) == "interactivity":
        return tuple(range(1, INTERACTIVITY_FINE_UP_TO + 1))
    return (1, 2, 4)

"""Where SGLang's automatic fraction reserves nothing for the decode CUDA graphs (docs/engines/sglang.md §5).

To v0.5.14 the reserve adds `max_bs × 2` MiB for them, and DP attention's padding (`max_bs × dp × 3`, + `× 1.5` above
300), on every launch (0.5.9 server_args.py:1029-1039, 0.5.14 :3285-3296). From v0.5.15 both are skipped on a PD
prefill node (`--disaggregation-mode prefill`, which never decodes), and the graphs' term where the decode backend is
disabled, which `--disable-cuda-graph` does first thing in `_parse_cuda_graph_config` (0.5.15 server_args.py:3214-3216):
0.5.15 :3638-3658, 0.5.16 :4169-4182, 0.5.18 :5083-5096, 0.5.19 arg_groups/memory_hook.py:299-312, 0.5.23
memory_hook.py:364-378 (`reserve_for_graph_mb`). `--disable-decode-cuda-graph` and `--cuda-graph-backend-decode` do the
same but are flags kvtop does not read (flags_unmodelled.py: refused typed).
"""

from __future__ import annotations

from kvtop.domain.deployment_flags import flag_set, flag_text
from kvtop.domain.engines.base import EngineInputs
from kvtop.domain.engines.versions import Era, Eras, era_for

PREFILL_NODE = "a PD prefill node"
ALL_GRAPHS_OFF = "--disable-cuda-graph"
SKIPPED_ERAS: Eras[bool] = Eras((
    Era("", False, "0.5.14 server_args.py:3285: the decode graphs' max_bs × 2 on every launch"),
    Era("0.5.15", True, "0.5.15 server_args.py:3638-3643 disaggregation_mode != 'prefill' and decode backend not "
                        "disabled; 0.5.23 arg_groups/memory_hook.py:364-368"),
))  # fmt: skip


def prefill_node(inputs: EngineInputs) -> bool:
    """Whether the launch is a PD prefill node (`--disaggregation-mode prefill`)."""
    return (flag_text(inputs.settings, "disaggregation-mode") or "") == "prefill"


def decode_graphs_off_reason(inputs: EngineInputs) -> str | None:
    """Why the release's reserve holds no decode graphs ('a PD prefill node', '--disable-cuda-graph'), or None."""
    if not era_for(SKIPPED_ERAS, inputs.version).value:
        return None
    if prefill_node(inputs):
        return PREFILL_NODE
    return ALL_GRAPHS_OFF if flag_set(inputs.settings, ALL_GRAPHS_OFF[2:]) else None


def dp_padding_off(inputs: EngineInputs) -> bool:
    """Whether the release skips DP attention's padding on this launch (a PD prefill node, from 0.5.15: 0.5.15
    server_args.py:3647-3649, 0.5.23 arg_groups/memory_hook.py:370-372); `--disable-cuda-graph` keeps it."""
    return era_for(SKIPPED_ERAS, inputs.version).value and prefill_node(inputs)

"""Where SGLang's automatic fraction reserves nothing for the decode CUDA graphs, and a PD decode node's activation
slack (docs/engines/sglang.md §5).

To v0.5.14 the reserve adds `max_bs × 2` MiB for them, and DP attention's padding (`max_bs × dp × 3`, + `× 1.5` above
300), on every launch (0.5.9 server_args.py:1029-1039, 0.5.14 :3285-3296). From v0.5.15 both are skipped on a PD
prefill node (`--disaggregation-mode prefill`, which never decodes), and the graphs' term where the decode backend is
disabled, which `--disable-cuda-graph` does first thing in `_parse_cuda_graph_config` (0.5.15 server_args.py:3214-3216):
0.5.15 :3638-3658, 0.5.16 :4169-4182, 0.5.18 :5083-5096, 0.5.19 arg_groups/memory_hook.py:299-312, 0.5.23
memory_hook.py:364-378 (`reserve_for_graph_mb`). `--disable-decode-cuda-graph` and `--cuda-graph-backend-decode` do the
same from v0.5.14 (`--cuda-graph-backend-decode disabled` over both off-switches: 0.5.14 server_args.py:2949-2956, 0.5.23
arg_groups/cuda_graph_hook.py:60-69); kvtop reads them (`DECODE`) and refuses the decode backend's other values by
name, as it does the prefill's (graph_phase_flags.py).
"""

from __future__ import annotations

from kvtop.domain.deployment_flags import flag_int
from kvtop.domain.engines.base import EngineInputs
from kvtop.domain.engines.sglang.graph_phase_flags import GraphPhase, phase_switch_off
from kvtop.domain.engines.sglang.span import serving_role
from kvtop.domain.engines.versions import Era, Eras, era_for
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.span import ServingRole

PREFILL_NODE = "a PD prefill node"
SKIPPED_ERAS: Eras[bool] = Eras((
    Era("", False, "0.5.14 server_args.py:3285: the decode graphs' max_bs × 2 on every launch"),
    Era("0.5.15", True, "0.5.15 server_args.py:3638-3643 disaggregation_mode != 'prefill' and decode backend not "
                        "disabled; 0.5.23 arg_groups/memory_hook.py:364-368"),
))  # fmt: skip


# --cuda-graph-backend-decode / --disable-decode-cuda-graph (graph_phase_flags.py; from v0.5.14: flag_releases.READ)
DECODE = GraphPhase("decode")


def decode_graphs_off(s: LaunchSettings) -> str | None:
    """The launch's own switch-off of the decode graphs, as typed, or None: SGLang's decode backend is then
    `disabled` (0.5.14 server_args.py:2949-2956, 0.5.15 :3214-3216, 0.5.23 arg_groups/cuda_graph_hook.py:60-69),
    which both the graphs' term and the DeepEP reserve test (`deepep_reserve_kept`)."""
    return phase_switch_off(s, DECODE)


def deepep_reserve_kept(s: LaunchSettings) -> bool:
    """Whether the launch keeps DeepEP's reserve: the decode graphs on and not a PD prefill node (0.5.15
    server_args.py:3678-3685, 0.5.23 arg_groups/memory_hook.py:407-411); read by the reserve (eras.py) and the
    term that names it (deployment.py), so both answer alike."""
    return decode_graphs_off(s) is None and serving_role(s) is not ServingRole.PREFILL


def prefill_node(inputs: EngineInputs) -> bool:
    """Whether the launch is a PD prefill node (`--disaggregation-mode prefill`)."""
    return serving_role(inputs.settings) is ServingRole.PREFILL


def decode_graphs_off_reason(inputs: EngineInputs) -> str | None:
    """Why the release's reserve holds no decode graphs ('a PD prefill node', '--disable-cuda-graph',
    '--disable-decode-cuda-graph', '--cuda-graph-backend-decode disabled'), or None."""
    if not era_for(SKIPPED_ERAS, inputs.version).value:
        return None
    if prefill_node(inputs):
        return PREFILL_NODE
    return decode_graphs_off(inputs.settings)


def dp_padding_off(inputs: EngineInputs) -> bool:
    """Whether the release skips DP attention's padding on this launch (a PD prefill node, from 0.5.15: 0.5.15
    server_args.py:3647-3649, 0.5.23 arg_groups/memory_hook.py:370-372); `--disable-cuda-graph` keeps it."""
    return era_for(SKIPPED_ERAS, inputs.version).value and prefill_node(inputs)


# A PD decode node never prefills: from v0.5.15 its activation slack is sized to the decode batch,
# max((--max-running-requests or the decode max_bs or 1) × (--speculative-num-draft-tokens or 1), 2048) tokens × 1.5 MiB,
# not the chunked prefill (0.5.15 server_args.py:3626-3633; 0.5.19 arg_groups/memory_hook.py:238-244; 0.5.23 :297-303).
DECODE_NODE_ERAS: Eras[bool] = Eras((
    Era("", False, "0.5.14 server_args.py:3280-3283: the chunked prefill on every node"),
    Era("0.5.15", True, "0.5.15 server_args.py:3626-3633, 0.5.23 arg_groups/memory_hook.py:297-303"),
))  # fmt: skip


def decode_node_activation_tokens(inputs: EngineInputs, max_bs: int, speculating: bool) -> int | None:
    """The activation tokens of a PD decode node at a release that sizes them to the decode batch; None elsewhere.
    With speculative decoding (`speculating`: deployment.setup's spec_method) and no --speculative-num-draft-tokens,
    refused: SGLang picks the count."""
    decode_node = serving_role(inputs.settings) is ServingRole.DECODE
    if not decode_node or not era_for(DECODE_NODE_ERAS, inputs.version).value:
        return None
    draft = flag_int(inputs.settings, "speculative-num-draft-tokens", least=1)
    if draft is None and speculating:
        raise UnsupportedModelError("a PD decode node's activation reserve scales with the draft tokens SGLang picks "
                                    "when --speculative-num-draft-tokens is not typed: not modelled",
                                    field="--speculative-num-draft-tokens")  # fmt: skip
    running = inputs.settings.max_running_requests or max_bs or 1
    return max(running * (draft or 1), 2048)

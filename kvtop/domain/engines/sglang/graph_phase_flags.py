"""The launch's own switch of one phase's CUDA graphs, prefill or decode (docs/engines/sglang.md §5).

From v0.5.14 `--cuda-graph-backend-<phase> disabled` or `--disable-<phase>-cuda-graph` folds into cuda_graph_config's
backend of that phase in `_handle_cuda_graph_config`, and `--disable-cuda-graph` disables both phases' backends first
thing (0.5.14 server_args.py:2942-2958; 0.5.23 arg_groups/cuda_graph_hook.py:55-71); the reserve then holds none of
that phase's graphs. A backend's other values (`full`, `breakable`, …) force a backend whose reserve and switch-offs
kvtop does not model: refused by name, but those a phase follows (`GraphPhase.followed`: the prefill's
`tc_piecewise`). Each phase is its module's (prefill_graphs_off.PREFILL, decode_graphs_off.DECODE); the releases that
have its flags are their rows in flag_releases.READ.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kvtop.domain.deployment_flags import flag_set, flag_text
from kvtop.domain.engines.base import EngineInputs
from kvtop.domain.engines.sglang.flag_releases import check_flag_release
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.launch import LaunchSettings

ALL_GRAPHS_OFF = "--disable-cuda-graph"
OFF_VALUE = "disabled"  # Backend.DISABLED


@dataclass(frozen=True)
class GraphPhase:
    """One phase's graph flags, by `name` ('prefill' / 'decode')."""

    name: str
    # the backend values other than `disabled` whose reserve and switch-offs kvtop follows, by release
    followed: Eras[frozenset[str]] = field(default=Eras((Era("", frozenset(), "only `disabled` is followed"),)))

    @property
    def backend_flag(self) -> str:
        return f"--cuda-graph-backend-{self.name}"

    @property
    def off_flag(self) -> str:
        return f"--disable-{self.name}-cuda-graph"

    @property
    def flags(self) -> frozenset[str]:
        return frozenset({self.backend_flag, self.off_flag})


def check_phase_flags(inputs: EngineInputs, phase: GraphPhase) -> None:
    """Refuse the phase's backend other than `disabled` (not modelled), and either flag at a release without it
    (flag_releases.check_flag_release)."""
    s = inputs.settings
    backend = flag_text(s, phase.backend_flag[2:])
    typed = phase.backend_flag if backend is not None else phase.off_flag if flag_set(s, phase.off_flag[2:]) else None
    if typed is not None:  # first: a release without the flag refuses it whatever its value
        check_flag_release(typed, inputs.version)
    if backend is not None and backend != OFF_VALUE and backend not in phase.followed.at(inputs.version):
        raise UnsupportedModelError(f"{backend!r} forces a {phase.name} CUDA-graph backend whose reserve kvtop does "
                                    f"not model (only {OFF_VALUE!r} is: the reserve then holds no {phase.name} "
                                    "graphs); plan without it", field=phase.backend_flag)  # fmt: skip


def phase_switch_off(s: LaunchSettings, phase: GraphPhase) -> str | None:
    """The launch's own switch-off of the phase's graphs, as typed ('--cuda-graph-backend-<phase> disabled',
    '--disable-<phase>-cuda-graph', '--disable-cuda-graph'), or None; the caller says from which release it holds."""
    if flag_text(s, phase.backend_flag[2:]) == OFF_VALUE:
        return f"{phase.backend_flag} {OFF_VALUE}"
    if flag_set(s, phase.off_flag[2:]):
        return phase.off_flag
    return ALL_GRAPHS_OFF if flag_set(s, ALL_GRAPHS_OFF[2:]) else None

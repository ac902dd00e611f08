"""Several multi-node layouts of one launch, side by side: "2 × 8 H20 at TP16 vs 4 × 8 at TP8 DP4".

A layout is N nodes of G GPUs and the parallel sizes (`2x8 tp16`, `4x8 tp8 dp4`, `1x8 tp8 dp8 dpa ep8`
for DP attention). Each is solved with the engine's own rules as `plan` solves one (`planned_capacity`:
unmeasured terms calibrated) and laid over its nodes (`place`); what the operator compares is per rank (weights, KV per token, tokens) and per deployment:
the KV pools it runs (one per DP replica, one per attention-DP rank) and the tokens and full-context
requests they hold together.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.node import NodeMeasure
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import InputError, KvtopError
from kvtop.domain.launch import LaunchSettings, check_parallel
from kvtop.domain.ledger import Ledger, layout_from_settings
from kvtop.domain.model import ModelSpec
from kvtop.domain.placement import Placement, check_placement, place
from kvtop.domain.redact import quoted, shown_cut

LAYOUTS_FLAG = "--layouts"
_NODES = re.compile(r"(\d{1,4})x(\d{1,4})")
_AXIS = re.compile(r"(tp|pp|dp|ep)(\d{1,4})")
_DP_ATTENTION = ("dpa", "dp-attention")


class LayoutSpec(BaseModel):
    """N nodes of G GPUs and the parallel sizes to lay over them; a size the layout leaves out (None) is the
    launch's (`--tp 2`, a --cmd's `--tp-size 2`): `1x8` with `--tp 2` was solved at TP1, the --tp unread and unsaid."""

    model_config = ConfigDict(frozen=True)

    text: str  # as the operator wrote it
    nodes: int
    gpus_per_node: int
    tp: int | None = None
    pp: int | None = None
    dp: int | None = None
    ep: int | None = None
    dp_attention: bool | None = None

    def sizes(self) -> dict[str, int | bool]:
        """The launch settings this layout states (`LaunchSettings` field → value)."""
        stated = {"tp": self.tp, "pp": self.pp, "dp": self.dp, "ep": self.ep, "enable_dp_attention": self.dp_attention}
        return {key: value for key, value in stated.items() if value is not None}


def parse_layout(text: str) -> LayoutSpec:
    """'2x8 tp16', '4x8 tp8 dp4', '2x8 tp16 dp16 dpa' (words may be split by spaces, commas or colons)."""
    words = [w for w in re.split(r"[\s,:]+", text.strip().lower()) if w]
    shown = shown_cut(text.strip(), 60)
    if not words or not _NODES.fullmatch(words[0]):
        raise InputError(f"{shown!r}: start with NODESxGPUS, e.g. '2x8 tp16'", field=LAYOUTS_FLAG)
    nodes_match = _NODES.fullmatch(words[0])
    assert nodes_match is not None
    values: dict[str, object] = {"nodes": int(nodes_match[1]), "gpus_per_node": int(nodes_match[2])}
    for word in words[1:]:
        axis = _AXIS.fullmatch(word)
        if word in _DP_ATTENTION:
            values["dp_attention"] = True
        elif axis is not None:
            values[axis[1]] = int(axis[2])
        else:
            raise InputError(f"{shown!r}: {quoted(word, 20)} is none of tpN, ppN, dpN, epN, dpa", field=LAYOUTS_FLAG)
    for name in ("nodes", "gpus_per_node", "tp", "pp", "dp", "ep"):
        if values.get(name, 1) == 0:
            raise InputError(f"{shown!r}: {name.replace('_', ' ')} must be at least 1", field=LAYOUTS_FLAG)
    return LayoutSpec.model_validate({"text": " ".join(words), **values})


class LayoutPlan(BaseModel):
    """One layout solved: its ledger and placement, or why it cannot run."""

    model_config = ConfigDict(frozen=True)

    spec: LayoutSpec
    ledger: Ledger | None = None
    placement: Placement | None = None
    error: str | None = None

    @property
    def pools(self) -> int:
        """KV pools the deployment runs: one per DP replica, one per attention-DP rank."""
        return self.ledger.layout.replicas * self.ledger.layout.attn_dp if self.ledger else 0

    @property
    def deployment_tokens(self) -> int:
        """Tokens all its pools hold together (0 when it does not fit)."""
        return self.ledger.token_capacity * self.pools if self.ledger else 0

    @property
    def full_context_requests(self) -> float:
        """Requests of the full context length its pools hold at once."""
        if self.ledger is None or not self.ledger.context_length:
            return 0.0
        return self.deployment_tokens / self.ledger.context_length

    @property
    def gpus_idle(self) -> int:
        """GPUs of its nodes it leaves unused."""
        return self.spec.nodes * self.spec.gpus_per_node - (self.ledger.layout.gpus if self.ledger else 0)


def plan_layouts(
    model: ModelSpec, settings: LaunchSettings, specs: Sequence[LayoutSpec], *, gpu_total_bytes: int,
    gpu_name: str | None, measured: MeasuredInputs, load_mtp: bool = False, node_measures: tuple[NodeMeasure, ...] = (),
    draft: ModelSpec | None = None,
) -> tuple[LayoutPlan, ...]:  # fmt: skip
    """Each layout solved with the launch's other settings as `plan` solves it (its speculative `draft`, this node's
    earlier starts `node_measures` read as `plan` reads them); one that cannot run says why in `error`."""
    plans = []
    for spec in specs:
        try:
            laid = settings.model_copy(update=spec.sizes())
            laid = LaunchSettings.model_validate(laid.model_dump())
            check_parallel(laid)
            check_placement(laid.engine, layout_from_settings(laid, model), spec.nodes, spec.gpus_per_node)
            ledger = planned_capacity(model, laid, gpu_total_bytes=gpu_total_bytes, gpu_name=gpu_name,
                                      measured=measured, load_mtp=load_mtp, draft=draft,
                                      node_measures=node_measures).ledger  # fmt: skip
            placement = place(ledger, spec.nodes, spec.gpus_per_node)
        except KvtopError as error:
            plans.append(LayoutPlan(spec=spec, error=str(error)))
            continue
        plans.append(LayoutPlan(spec=spec, ledger=ledger, placement=placement))
    return tuple(plans)

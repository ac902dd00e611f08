"""The header: where the numbers come from, how fresh they are, and one line per engine."""

from __future__ import annotations

from dataclasses import replace

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from kvtop.domain.capacity import capacity_said
from kvtop.domain.cluster_findings import ExportedCounts
from kvtop.domain.diagnose_findings import Finding, Severity
from kvtop.domain.engines.registry import display_name, display_names
from kvtop.domain.engines.versions import VersionSource
from kvtop.domain.incident import ALL_CLEAR, IncidentAnswer, incident
from kvtop.domain.node import EngineView, NodeSnapshot
from kvtop.domain.observe import EndpointState
from kvtop.domain.pressure import pressure_of
from kvtop.ui.freshness import Wording, simulated_badge
from kvtop.ui.freshness import freshness as shared_freshness
from kvtop.ui.state import NodeState
from kvtop.units import fmt_gib, fmt_percent, fmt_tokens

_WORDING = Wording(silent="the source has not answered", first="the first snapshot")
#: A demo node is never "live": its figures are simulated, whatever their age.
_DEMO_WORDING = replace(_WORDING, fresh="simulated")


def freshness(state: NodeState, now: float, interval_s: float) -> Content:
    """'● live · every 1 s' ('● simulated · …' on a demo node), '● late · 2 s ago', '▲ STALE 12 s · …' or
    'waiting for the first snapshot'."""
    snapshot = state.snapshot
    demo = snapshot is not None and snapshot.simulated
    return shared_freshness(state.age_s(now), state.failure_said, interval_s, _DEMO_WORDING if demo else _WORDING)


def packed(parts: list[Content], width: int | None) -> list[Content]:
    """The top line's parts joined by ' │ ', a part that does not fit the width starting a new line whole (None: one
    line): at 100 columns the demo's top line broke between its marker '●' and 'simulated' (session 67's walk)."""
    lines: list[Content] = []
    for part in parts:
        if lines and (width is None or lines[-1].cell_length + 3 + part.cell_length <= width):
            lines[-1] = Content.assemble(lines[-1], " │ ", part)
        else:
            lines.append(part)
    return lines


def short_model_name(name: str) -> str:
    """'meta-llama--Meta-Llama-3-70B' or 'meta-llama/Meta-Llama-3-70B' → 'Meta-Llama-3-70B'."""
    return name.rstrip("/").split("/")[-1].split("--")[-1]


#: where a ledger's release came from, said in the header where the engine log said it (`--engine-log`: no flag or
#: endpoint named one) or the endpoint's words named none; the ledger pane and the planner give `ResolvedVersion.detail`
#: whole
_RELEASE_FROM_LOG = {
    VersionSource.LOG: "(from the engine log)",
    VersionSource.LOG_DATES: "(from the engine log's dates)",
    VersionSource.SERVER_ARGS: "(from the engine log's arguments)",
    # the endpoint answered with words that name no release ('dev'): the latest rules, said so (R2 C7)
    VersionSource.ENDPOINT_UNREAD: "(the endpoint's version names no release kvtop reads)",
}


def engine_line(view: EngineView, compact: bool = False) -> Content:
    """'sglang:4242 · Meta-Llama-3-70B · TP8 · tokens 1,127,125 predicted (clean 1,255,785) / 1,127,125 live · …'.

    "live" reads "logged" where the figure is the engine log's (`--engine-log`), not its endpoint's, and
    "simulated" on a demo node (`EngineView.capacity_source`).
    "predicted" is the explained ledger's figure (every measured cause applied: what the engine should
    hold now, as the findings and the planner have it); "clean" the same launch on empty GPUs."""
    engine = view.engine
    ledger = view.ledger
    predicted = view.explained or ledger
    model = short_model_name(ledger.model.name if ledger else (engine.model or "model unknown"))
    parts: list[str | tuple[str, str] | Content] = [(engine.engine_id, "bold $text-primary"), f" · {model}"]
    requests = predicted.request_capacity if predicted is not None else None
    if ledger is not None and requests is not None:  # attention-free: capacity in requests, no KV per token
        parts.append(f" · {ledger.layout.describe()} · requests {fmt_tokens(requests.requests)} "
                     f"{'pred' if compact else 'predicted'} (no KV)")  # fmt: skip
    elif ledger is not None and predicted is not None:
        parts.append(
            f" · {ledger.layout.describe()} · tokens {fmt_tokens(predicted.token_capacity)} {'pred' if compact else 'predicted'}"
        )
        if predicted.token_capacity != ledger.token_capacity and not compact:  # the rows' "−129k" say it narrow
            parts.append((f" (clean {fmt_tokens(ledger.token_capacity)})", "$text-muted"))
    elif view.exported is not None:  # read through Prometheus: the exporter's figure, said as its own
        parts.append(f" · {view.exported.said(compact)}")
    else:
        parts.append((f" · no prediction: {view.ledger_error or 'unknown reason'}", "$warning"))
    live = engine.live
    if live.token_capacity is not None:
        # a figure read from the startup log (--engine-log) or a demo scenario is no live reading: say whose it is
        parts.append((f" / {fmt_tokens(live.token_capacity)} {capacity_said(view.capacity_source, compact=True)}", "bold $warning" if view.live_disagrees else ""))
    if live.kv_usage_fraction is not None and not view.ranks:  # no rank row to show the engine's own usage
        parts.append(f" · KV {fmt_percent(live.kv_usage_fraction)} used")
    if live.token_capacity is None and live.state not in (EndpointState.OK, EndpointState.NOT_QUERIED):
        parts.append((f" · endpoint {live.state.value}: {live.message or 'no detail'}", "$warning"))
    if ledger is not None and ledger.tokens_per_gib and not compact:
        parts.append(f" · {ledger.tokens_per_gib:,.0f} tok/GiB")
    said_by = _RELEASE_FROM_LOG.get(ledger.version.source) if ledger is not None else None
    if ledger is not None and said_by is not None and not compact:
        parts.append((f" · rules of {display_name(ledger.settings.engine)} {ledger.version.label} {said_by}",
                      "$text-muted"))  # fmt: skip
    if ledger is not None and ledger.host_tier is not None:
        parts.append(f" · host KV {fmt_tokens(ledger.host_tier.tokens_per_rank)} tok/rank")
    return Content.assemble(*parts)


_ANSWER_STYLES = {Severity.CRITICAL: "bold $error", Severity.WARNING: "bold $warning"}
#: What the ▶ answer's token figure answers, beside the GPU rows' state cell that answers another question (the
#: foreign-GPU demo: 'loses 128,660 tokens to pid 4242' over rows reading '−122k tok'); its hover text, worded for
#: any node (the rows' '−Nk tok').
ANSWER_MEANS = (
    "▶ the tokens the cause it names costs each rank, alone: kvtop's plan with it against the same plan without "
    "it. A GPU row's '−Nk tok' answers another question: the rank's tokens now against its clean prediction, "
    "every cause and kvtop's own miss together (the finding's 'tokens per rank' line adds them up)."
)


def answer_line(found: IncidentAnswer, width: int | None = None) -> Content:
    """The incident's answer in one sentence (`kvtop.domain.incident`, as `kvtop diagnose` prints it); at
    `width` columns the longest of its shorter forms that fits one line (the findings pane has it whole)."""
    severity = found.severity
    answer = found.sentence if width is None else found.within(max(width - 2, 1))  # after the '▶ ' mark
    # no check was made, or the plan itself is off (a token gap no byte names): no ✓ of a check passed
    if severity is None and found.sentence != ALL_CLEAR:
        return Content.assemble(("○ ", "bold $text-muted"), (answer, "$text-muted"))
    if severity is None:
        return Content.assemble(("✓ ", "bold $success"), (answer, "$text-muted"))
    return Content.assemble(("▶ ", _ANSWER_STYLES.get(severity, "bold")), (answer, _ANSWER_STYLES.get(severity, "")))


def header_inputs(state: NodeState | None) -> tuple[object, ...]:
    """Every figure of `state` the header draws, bar the clock: equal inputs draw the same header.

    Ledgers are compared by identity first (a source hands out the same ledger until the
    settings change), so a tick costs a few comparisons rather than building the header.
    """
    if state is None:
        return ()
    snapshot = state.snapshot
    if snapshot is None:
        return (state.source_label,)
    observation = snapshot.observation
    engines = tuple(
        (view.engine.engine_id, view.engine.kind, view.engine.model, view.ledger, view.explained, view.ledger_error, view.exported,
         view.engine.live.token_capacity, view.engine.live.state, view.engine.live.message,
         _pressure_line(view))
        for view in snapshot.engines
    )  # fmt: skip
    return (snapshot.source, snapshot.notice, observation.nvml_state, observation.nvml_message, engines,
            observation.host_memory, observation.desktop, state.findings, state.exported)  # fmt: skip


def _pressure_line(view: EngineView) -> str | None:
    pressure = pressure_of(view.engine.live)
    return pressure.line() if pressure is not None and pressure.notable else None


class NodeHeader(Widget):
    """Source, notice, freshness; with `engines=True` also one line per engine.

    A new state or clock tick repaints the header only when what it reads changed (the usual
    tick changes nothing here: the same engines and ledgers, a freshness marker that reads the same).
    """

    state: reactive[NodeState | None] = reactive(None, repaint=False)
    now: reactive[float] = reactive(0.0, repaint=False)

    def __init__(self, interval_s: float, *, engines: bool = True, id: str | None = None) -> None:
        super().__init__(id=id)
        self._interval_s = interval_s
        self._engines = engines
        self._shown: tuple[str, tuple[object, ...]] | None = None  # the drawn text and spans
        self._inputs: tuple[object, ...] | None = None  # what `_shown` came from
        # (snapshot, findings, exported counts, their answer)
        self._answer: tuple[NodeSnapshot, tuple[Finding, ...], ExportedCounts | None, IncidentAnswer] | None = None

    def watch_state(self) -> None:
        self._refresh_if_changed()

    def watch_now(self) -> None:
        self._refresh_if_changed()

    def on_resize(self) -> None:
        self._refresh_if_changed()

    def _refresh_if_changed(self) -> None:
        state = self.state
        inputs = (
            header_inputs(state),
            None if state is None else state.paused or freshness(state, self.now, self._interval_s).plain,
            self.content_size.width,  # the incident line's form and the engines' compact lines follow the width
        )
        if inputs == self._inputs:
            return  # what the header reads is the same, and its freshness reads the same
        self._inputs = inputs
        found = self._incident(state)
        tooltip = ANSWER_MEANS if found is not None and found.severity is not None else None
        if tooltip != self.tooltip:  # not each tick: setting it re-times a tooltip on show (Screen._update_tooltip)
            self.tooltip = tooltip
        content = self.header_content()
        drawn = (content.plain, tuple(content.spans))
        if drawn != self._shown:
            self._shown = drawn
            self.refresh(layout=content.plain.count("\n") != self.size.height - 1)

    def render(self) -> Content:
        return self.header_content()

    def _incident(self, state: NodeState | None) -> IncidentAnswer | None:
        """The ▶ answer of `state`'s snapshot, findings and exported counts, computed once for them: the tooltip and every draw of the
        header read this one (None where the header shows no engines or has no snapshot)."""
        if not self._engines or state is None or state.snapshot is None:
            return None
        kept = self._answer
        if kept is None or kept[0] is not state.snapshot or kept[1] is not state.findings or kept[2] != state.exported:
            answer = incident(state.snapshot, state.findings, state.exported)
            kept = self._answer = (state.snapshot, state.findings, state.exported, answer)
        return kept[3]

    def header_content(self) -> Content:
        """The header's lines for the current state, clock and width."""
        state = self.state
        if state is None:
            return Content("")
        snapshot = state.snapshot
        source = snapshot.source if snapshot else state.source_label
        top = [Content.styled("kvtop", "bold $primary"), Content(source)]
        if getattr(self.app, "read_only", False):  # nothing here can change the node: said up front
            top.append(Content.styled(" READ-ONLY ", "bold reverse $accent"))
        if snapshot is not None and snapshot.notice:
            top.append(Content.styled(snapshot.notice, "$warning"))
        if state.paused:
            paused = Content.styled("⏸ PAUSED · still polling · z resumes", "bold $warning")
            # a demo is labelled so in every state
            top.append(Content.assemble(simulated_badge(), " · ", paused) if snapshot and snapshot.simulated else paused)
        else:
            top.append(freshness(state, self.now, self._interval_s))
        if snapshot is not None and snapshot.observation.host_memory is not None:
            host = snapshot.observation.host_memory
            top.append(Content(f"host {fmt_gib(host.available_bytes)} free of {fmt_gib(host.total_bytes)}"))
        if snapshot is not None and snapshot.observation.desktop is not None:  # WSL2: Windows' desktop shares the GPU
            top.append(Content(snapshot.observation.desktop.brief))
        # below 80 columns every line counts (at 60×15 a line more pushed the findings under the footer): the
        # parts flow on one line and wrap where they must
        lines = packed(top, (self.content_size.width or None) if self.app.size.width >= 80 else None)
        if snapshot is not None and snapshot.observation.nvml_state.failed:
            observation = snapshot.observation
            lines.append(
                Content.styled(
                    f"NVML {observation.nvml_state.value}: {observation.nvml_message or 'no detail'}",
                    "bold $error",
                )
            )
        found = self._incident(state)
        if found is not None and snapshot is not None:
            lines.append(answer_line(found, self.content_size.width or None))
            for view in snapshot.engines:
                lines.append(engine_line(view, compact=self.size.width < 110))
                pressure = pressure_of(view.engine.live)
                if pressure is not None and pressure.notable:
                    style = "bold $warning" if pressure.preempting else "$text-muted"
                    lines.append(Content.styled(f"  pressure: {pressure.line()}", style))
            if not snapshot.engines:
                lines.append(Content.styled(f"no {display_names()} engine found on this node", "$text-muted"))
        return Content("\n").join(lines)

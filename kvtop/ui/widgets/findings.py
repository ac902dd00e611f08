"""The findings pane: each gap between predicted and observed, its cause, its fix, and the tokens at stake.

`show_findings` takes any objects with `rule`, `title`, `severity`, `gpus`, `tokens`, `fix` and `evidence`
(the diagnose module's findings, worst first): the pane shows the title, never the rule's id; until it is called the pane says what it will show.
Focused (`f`, tab, a click), one finding is selected: up/down (or j/k) move, and the pane posts
`Selected` so the dashboard can mark that finding's GPUs and select the worst of them. Enter asks
for the fix in the planner (`FixChosen`) when the fix is a flag change (`fix_settings`), for the
process panel of its GPU (`ProcessesChosen`) when the fix stops processes (`pids`); otherwise the
finding says why Enter does nothing.

Token figures carry their sign: a finding's cost reads `−128,661 tokens`, advice's gain
`+1,255,785 tokens`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.dom import DOMNode
from textual.message import Message
from textual.widgets import Static

from kvtop.domain.wording import whole_gpus
from kvtop.ui.widgets.hanging import Hanging
from kvtop.units import fmt_tokens

TITLE = "Findings (f) · each gap's cause, its fix and the tokens at stake"
WAITING = "Waiting for the first snapshot to diagnose…"
#: Without the node's own words (`kvtop.ui.findings_note`), an empty pane claims nothing more than this.
NO_FINDINGS = "No findings"

_SEVERITY_STYLES = {
    "critical": "bold $error",
    "error": "bold $error",
    "warning": "bold $warning",
    "info": "$primary",
}
#: The tone a finding's GPUs are marked with on the dashboard, by severity.
SEVERITY_TONES = {"critical": "error", "error": "error", "warning": "warning"}


class FindingLike(Protocol):
    """What the pane needs of a finding (`kvtop.domain.diagnose_findings.Finding` has it all).

    Optional, read with getattr: `summary`, `engine_id`, `fix_settings` (the settings with the
    fix applied; None when the fix is not a flag change), `pids` (the processes the fix stops),
    `gain_tokens`, `alternative` (`diagnose_findings.FlagAlternative`: the memory flag that leaves them running).
    """

    @property
    def rule(self) -> str: ...  # the id: it keeps the selection on the same finding across refreshes, never shown
    @property
    def title(self) -> str: ...  # what a person reads at the head of the finding
    @property
    def severity(self) -> object: ...  # a str or a str-valued Enum
    @property
    def gpus(self) -> Sequence[int]: ...
    @property
    def tokens(self) -> int | None: ...
    @property
    def fix(self) -> str: ...
    @property
    def evidence(self) -> str | Sequence[str]: ...


def severity_of(finding: FindingLike) -> str:
    """'warning' for `Severity.WARNING` or 'warning'."""
    return str(getattr(finding.severity, "value", finding.severity))


def finding_tone(finding: FindingLike) -> str:
    """'error', 'warning' or 'info': how the finding's GPUs are marked."""
    return SEVERITY_TONES.get(severity_of(finding).lower(), "info")


def not_a_flag_change(finding: FindingLike) -> str:
    """What the pane says when Enter can open neither the planner nor the process panel."""
    return f"Enter has nothing to open here (not a flag change, no process to stop): {finding.fix}"


def signed_tokens(finding: FindingLike) -> str | None:
    """' · −128,661 tokens' for what a problem costs, ' · +1,255,785 tokens with the fix' for advice."""
    tone = finding_tone(finding)
    gpus = getattr(finding, "whole_gpus", 0)
    if gpus and not finding.tokens:  # a lost or orphan-held GPU, an idle one: counted in GPUs
        return f" · {whole_gpus(gpus, unused=tone not in ('error', 'warning'))}"
    if tone in ("error", "warning"):
        return f" · −{fmt_tokens(finding.tokens)} tokens" if finding.tokens else None
    gain = getattr(finding, "gain_tokens", 0) or finding.tokens
    return f" · +{fmt_tokens(gain)} tokens with the fix" if gain else None


def finding_text(finding: FindingLike, note: str | None = None) -> Content:
    """'● warning Another process holds memory on an engine's GPU · GPU 3 · −128,660 tokens', its summary and
    evidence, then the fix (and a note)."""
    severity = severity_of(finding)
    where = f"GPU {', '.join(str(g) for g in finding.gpus)}" if finding.gpus else "node"  # never 'GPU node'
    head: list[str | tuple[str, str]] = [
        (f"● {severity}", _SEVERITY_STYLES.get(severity.lower(), "bold")),
        f" {finding.title} · {where}",
    ]
    tokens = signed_tokens(finding)
    if tokens:
        head.append((tokens, "bold"))
    lines = [(Content.assemble(*head), 2)]  # each line's wrapped rest continues under its text (its hang)
    summary = getattr(finding, "summary", None)
    if summary:
        lines.append((Content(f"  {summary}"), 2))
    evidence = [finding.evidence] if isinstance(finding.evidence, str) else list(finding.evidence)
    lines += [(Content.styled(f"  {fact}", "$text-muted"), 2) for fact in evidence if fact]
    lines.append((Content.assemble("  fix: ", (finding.fix, "$success")), 7))
    alternative = getattr(finding, "alternative", None)  # the memory flag that leaves the processes running
    if alternative is not None:
        lines.append((Content.assemble("  or:  ", (alternative.describe(), "$success")), 7))
    if note:
        lines.append((Content.styled(f"  {note}", "bold $warning"), 2))
    return Hanging(lines)


class FindingItem(Static):
    """One finding in the pane; the pane marks the selected one with `-selected`."""

    def __init__(self, finding: FindingLike) -> None:
        super().__init__(finding_text(finding), classes="finding")
        self.finding = finding
        self.note: str | None = None

    def show(self, finding: FindingLike, note: str | None = None) -> None:
        """Show this finding (and a note under it), repainting only when something changed."""
        if finding == self.finding and note == self.note:
            return
        self.finding, self.note = finding, note
        self.update(finding_text(finding, note))


class FindingsPane(VerticalScroll, can_focus=True):
    """Focusable (`f`, tab); scrolls when the list is long; one finding is selected while focused."""

    BINDINGS = [
        Binding("up,k", "move(-1)", "Previous finding", show=False),
        Binding("down,j", "move(1)", "Next finding", show=False),
        Binding("enter", "apply_fix", "Act on the fix"),
    ]

    class Selected(Message):
        """The finding the operator is looking at (None: none, e.g. the pane lost the focus)."""

        def __init__(self, finding: FindingLike | None) -> None:
            super().__init__()
            self.finding = finding

    class FixChosen(Message):
        """Open the planner from this finding's `fix_settings` (never None here)."""

        def __init__(self, finding: FindingLike) -> None:
            super().__init__()
            self.finding = finding

    class ProcessesChosen(Message):
        """Open the process panel of this finding's GPU with its first process (`pids`) selected."""

        def __init__(self, finding: FindingLike) -> None:
            super().__init__()
            self.finding = finding

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._findings: tuple[FindingLike, ...] | None = None  # None: nothing shown yet
        self._empty_note: tuple[str, ...] = (NO_FINDINGS,)  # what an empty pane says
        self._checked = True  # whether its verdict is a check passed (else: nothing was checked)
        self.selected_index = 0
        self._announced: FindingLike | None = None

    def compose(self) -> ComposeResult:
        # The note says "waiting" or "no findings"; findings may arrive before this runs.
        note = Static(self._note_content(), classes="findings-note")
        note.display = not self.findings
        yield note

    def _note_content(self) -> Content:
        if self._findings is None:
            return Content.styled(WAITING, "$text-muted")
        head, *rest = self._empty_note
        return Content("\n").join(
            [Content.styled(head, "$success" if self._checked else "bold $text-muted"),
             *(Content.styled(line, "$text-muted") for line in rest)]  # fmt: skip
        )

    @property
    def findings(self) -> tuple[FindingLike, ...]:
        return self._findings or ()

    @property
    def received(self) -> bool:
        """Whether the node's findings (perhaps none) have been shown, rather than still awaited."""
        return self._findings is not None

    @property
    def selected_finding(self) -> FindingLike | None:
        findings = self.findings
        return findings[self.selected_index] if 0 <= self.selected_index < len(findings) else None

    def show_findings(
        self, findings: Sequence[FindingLike], empty_note: Sequence[str] = (NO_FINDINGS,), *, checked: bool = True
    ) -> None:
        """Show these findings (`empty_note`: what the pane says when there are none, one line each, the first
        its verdict; `checked` False where nothing was checked, so the verdict is not drawn as a pass); unchanged
        findings cost nothing, changed ones keep the selection."""
        new, note_lines = tuple(findings), tuple(empty_note) or (NO_FINDINGS,)
        if new == self._findings and (note_lines, checked) == (self._empty_note, self._checked):
            return
        self._empty_note, self._checked = note_lines, checked
        old_selected = self.selected_finding
        items = list(self.query(FindingItem))
        if new and len(items) == len(new):
            for item, finding in zip(items, new, strict=True):
                item.show(finding)
        else:
            self.remove_children(FindingItem)
            self.mount_all([FindingItem(finding) for finding in new])
        self._findings = new
        for note in self.query(".findings-note").results(Static):
            note.update(self._note_content())
            note.display = not new
        self.selected_index = _same_finding(new, old_selected, self.selected_index)
        self.call_after_refresh(self._show_selection)

    def _show_selection(self, focused: bool | None = None) -> None:
        """Mark the selected item and tell the dashboard what is selected (only while focused)."""
        for index, item in enumerate(self.query(FindingItem)):
            item.set_class(index == self.selected_index, "-selected")
            if index != self.selected_index and item.note is not None:
                item.show(item.finding)
        shown = self.selected_finding if (self.has_focus if focused is None else focused) else None
        if shown is not self._announced:
            self._announced = shown
            self.post_message(self.Selected(shown))

    def select(self, index: int) -> None:
        """Select the finding at `index` (clamped) and scroll it into view."""
        if not self.findings:
            return
        self.selected_index = max(0, min(len(self.findings) - 1, index))
        self._show_selection()
        items = list(self.query(FindingItem))
        if self.selected_index < len(items):
            self.scroll_to_widget(items[self.selected_index], animate=False)

    def action_move(self, step: int) -> None:
        self.select(self.selected_index + step)

    def action_apply_fix(self) -> None:
        """The planner with the fix applied, the process panel for a fix that stops processes, or
        (neither) say so under the finding."""
        finding = self.selected_finding
        if finding is None:
            return
        flag_change = getattr(finding, "fix_settings", None) is not None
        stops: tuple[int, ...] = getattr(finding, "pids", ())
        if not flag_change and stops and finding.gpus:
            self.post_message(self.ProcessesChosen(finding))
            return
        if not flag_change:
            items = list(self.query(FindingItem))
            if self.selected_index < len(items):
                items[self.selected_index].show(finding, not_a_flag_change(finding))
                self.call_after_refresh(self.scroll_to_widget, items[self.selected_index], animate=False)
            return
        self.post_message(self.FixChosen(finding))

    def on_focus(self) -> None:
        self._show_selection(focused=True)

    def on_blur(self) -> None:
        self._show_selection(focused=False)

    def on_click(self, event: events.Click) -> None:
        """A click selects the finding under the mouse; a double click applies its fix."""
        node: DOMNode | None = event.widget
        while node is not None and node is not self and not isinstance(node, FindingItem):
            node = node.parent
        if isinstance(node, FindingItem):
            self.select(list(self.query(FindingItem)).index(node))
            if event.chain > 1:
                self.action_apply_fix()


def _same_finding(findings: tuple[FindingLike, ...], old: FindingLike | None, index: int) -> int:
    """The index of the finding that is `old` again (same rule, engine and GPUs), else `index` clamped."""
    if old is not None:
        key = (old.rule, getattr(old, "engine_id", None), tuple(old.gpus))
        for position, finding in enumerate(findings):
            if (finding.rule, getattr(finding, "engine_id", None), tuple(finding.gpus)) == key:
                return position
    return max(0, min(len(findings) - 1, index))

"""The findings pane: each gap between predicted and observed, its cause, its fix, and the tokens at stake.

`show_findings` takes any objects with `rule`, `severity`, `gpus`, `tokens`, `fix` and `evidence`
(the diagnose module's findings); until it is called the pane says what it will show.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from kvtop.units import fmt_tokens

TITLE = "Findings (f) · each gap between predicted and observed: its cause, its fix, the tokens at stake"
PLACEHOLDER = "Not wired in yet: kvtop diagnose will fill this pane."

_SEVERITY_STYLES = {
    "critical": "bold $error",
    "error": "bold $error",
    "warning": "bold $warning",
    "info": "$primary",
}


class FindingLike(Protocol):
    """What the pane needs of a finding (`kvtop.domain.diagnose_rules.Finding` has it all)."""

    @property
    def rule(self) -> str: ...
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


def finding_text(finding: FindingLike) -> Content:
    """'● warning co_tenant · GPU 3 · 128,660 tokens', its summary and evidence, then the fix."""
    severity = str(getattr(finding.severity, "value", finding.severity))
    gpus = ", ".join(str(g) for g in finding.gpus) or "node"
    head: list[str | tuple[str, str]] = [
        (f"● {severity}", _SEVERITY_STYLES.get(severity.lower(), "bold")),
        f" {finding.rule} · GPU {gpus}",
    ]
    if finding.tokens:
        head.append((f" · {fmt_tokens(finding.tokens)} tokens", "bold"))
    lines = [Content.assemble(*head)]
    summary = getattr(finding, "summary", None)
    if summary:
        lines.append(Content(f"  {summary}"))
    evidence = [finding.evidence] if isinstance(finding.evidence, str) else list(finding.evidence)
    lines += [Content.styled(f"  {fact}", "$text-muted") for fact in evidence if fact]
    lines.append(Content.assemble("  fix: ", (finding.fix, "$success")))
    return Content("\n").join(lines)


class FindingsPane(VerticalScroll, can_focus=True):
    """Focusable (`f`, tab); scrolls when the list is long."""

    def compose(self) -> ComposeResult:
        yield Static(Content.styled(PLACEHOLDER, "$text-muted"), classes="finding")

    def show_findings(self, findings: Sequence[FindingLike]) -> None:
        """Replace the pane's contents with these findings (an empty list says so)."""
        self.remove_children()
        if not findings:
            self.mount(
                Static(
                    Content.styled("No findings: every byte is accounted for.", "$success"), classes="finding"
                )
            )
            return
        self.mount_all([Static(finding_text(finding), classes="finding") for finding in findings])

"""Findings as text and as the stable JSON contract (shared by `diagnose` and anything that lists findings).

Findings of severity warning or critical are "findings"; info ones are "advice" (trade-offs such
as FP8 KV, not faults), listed apart so a healthy node reads as healthy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kvtop.commands.output import prose
from kvtop.commands.render_launch import engine_launch_json
from kvtop.commands.render_snapshot import SIMULATED
from kvtop.domain.diagnose import Finding, Severity
from kvtop.domain.diagnose_findings import Rule
from kvtop.domain.wording import counted, whole_gpus
from kvtop.units import fmt_bytes, fmt_tokens


def is_problem(finding: Finding) -> bool:
    """Warning or critical: something is wrong and costs capacity now (info is advice)."""
    return finding.severity is not Severity.INFO


def finding_json(finding: Finding) -> dict[str, Any]:
    """rule, severity, summary, engine_id, gpus, ranks, bytes, tokens, fix, gain_tokens, evidence, fix_flags (kvtop's
    spelling, which `plan --` reads back), fix_launch (the fixed launch as the engine takes it: `plan --json`'s
    engine_flags / engine_config / engine_env, TensorRT-LLM's YAML keys apart), alternative (the memory flag that leaves
    the processes running: its fix, figures, flags and launch)."""
    out = finding.model_dump(mode="json", exclude={"fix_settings", "alternative"})
    out["fix_flags"] = finding.fix_settings.to_flags() if finding.fix_settings is not None else None
    out["fix_launch"] = engine_launch_json(finding.fix_settings) if finding.fix_settings is not None else None
    alternative = finding.alternative
    out["alternative"] = None
    if alternative is not None:
        out["alternative"] = {
            **alternative.model_dump(mode="json", exclude={"settings", "words"}),  # `fix` says the words
            "fix": alternative.fix,
            "gain_tokens": alternative.gain_tokens,
            "flags": alternative.settings.to_flags(),
            "launch": engine_launch_json(alternative.settings),
        }
    return out


def findings_json(
    findings: Sequence[Finding], *, source: str | None = None, notice: str | None = None, answer: str | None = None,
    simulated: bool = False,
) -> dict[str, Any]:
    """`simulated`: a demo node's findings (`--demo`), not this machine's; the JSON says so as the text's first line."""
    return {
        "source": source,
        "simulated": simulated,
        "notice": notice,
        "answer": answer,
        "findings": [finding_json(f) for f in findings if is_problem(f)],
        "advice": [finding_json(f) for f in findings if not is_problem(f)],
    }


def _where(finding: Finding) -> str:
    if not finding.gpus:
        return "node"
    return ("GPU " if len(finding.gpus) == 1 else "GPUs ") + ",".join(map(str, finding.gpus))


def _when(finding: Finding) -> str:
    """When a flag fix's gain arrives: the KV pool is sized at start (a fix that frees memory says it in its text)."""
    return " once relaunched with it" if finding.fix_settings is not None else ""


def _bytes_said(finding: Finding) -> str:
    """'6.44 GB', or where the bytes are no memory held, what they are: '23.31 GiB: today's tokens take this much less KV in
    FP8; nothing is freed: …' (session 56: a bare '(23.31 GiB)' after the gain read as memory the fix frees)."""
    return f"{fmt_bytes(finding.bytes)}: {finding.bytes_words}" if finding.bytes_words else fmt_bytes(finding.bytes)


def finding_text(finding: Finding) -> list[str]:
    """'WARNING  Another process holds memory on an engine's GPU · GPU 3 · −128,660 tokens/rank  (6.44 GB …)', then
    its summary, fix, the other way out and evidence."""
    if finding.rule is Rule.NO_PREDICTION:
        cost = "tokens not known (no prediction)"
    elif finding.whole_gpus and not finding.tokens:
        cost = whole_gpus(finding.whole_gpus, unused=not is_problem(finding))
    elif not is_problem(finding):  # advice without a gain (no better layout fits) says so, never "+0 tokens"
        cost = f"+{fmt_tokens(finding.gain_tokens)} tokens/rank with the change" if finding.gain_tokens else "no gain found"
    else:
        cost = f"−{fmt_tokens(finding.tokens)} tokens/rank" if finding.tokens else "no token cost"
    lines = [  # the head reads the rule's title, as the findings pane does; `--json` keeps the id (`rule`)
        f"{finding.severity.value.upper():<8} {finding.title} · {_where(finding)} · {cost}"
        + (f"  ({_bytes_said(finding)})" if finding.bytes or finding.rule is not Rule.NO_PREDICTION else ""),
        f"  {finding.summary}",
    ]
    gain = f"   (gain +{fmt_tokens(finding.gain_tokens)} tokens/rank{_when(finding)})" if finding.gain_tokens else ""
    lines.append(f"  fix: {finding.fix}{gain}")
    if finding.alternative is not None:
        lines.append(f"  or:  {finding.alternative.describe()}")
    lines += [f"    · {fact}" for fact in finding.evidence]
    return lines


def findings_text(
    findings: Sequence[Finding], *, source: str | None = None, notice: str | None = None, simulated: bool = False,
    answer: str | None = None,
) -> str:
    """The incident's answer in one line, the findings, then the advice; `simulated` marks a demo node."""
    problems = [f for f in findings if is_problem(f)]
    advice = [f for f in findings if not is_problem(f)]
    shown = f"{source or 'node'} ({SIMULATED})" if simulated else source or "node"
    head = f"kvtop diagnose — {shown}: {counted(len(problems), 'finding')}, {len(advice)} advice"
    lines = [head]
    if answer:
        lines.append(prose("answer: ", answer))
    if notice:
        lines.append(prose("note: ", notice))
    if not problems and not answer:
        lines.append("no capacity lost to a fault: every rank holds what its plan predicts")
    for finding in problems:
        lines += ["", *finding_text(finding)]
    if advice:
        lines += ["", "advice (trade-offs, not faults):"]
        for finding in advice:
            lines += ["", *finding_text(finding)]
    return "\n".join(lines)

"""A row of the plan's tables whose label may be longer than its column: the label wraps inside the column and the
figure stays in its own (the budget's steps and terms, `render_ledger`; the deployment's terms, `render_deployment`)."""

from __future__ import annotations

import textwrap

#: The label column of the budget and the terms before the start (`plan`, `explain`): the figures stay in one column.
LABEL_COLUMN = 48
#: The width of the feature column a deployment's term row names first.
FEATURE_COLUMN = 16


def column_rows(label: str, rest: str, width: int = LABEL_COLUMN, feature: str | None = None) -> list[str]:
    """'  [feature]  label   figure  source': a label longer than `width` wraps within its column, `rest` (the figure,
    right-aligned, and what follows) on its last line (vLLM's 'free at the worker's start (the extensible KV cache's
    headroom)' pushed its figure out of the column, session 64's operator walk); `feature`, where given, is named on
    the first line in a column of its own."""
    parts = textwrap.wrap(label, width, subsequent_indent="  ") or [""]
    blank = " " * FEATURE_COLUMN if feature is not None else ""
    leads = [f"{feature:<{FEATURE_COLUMN}}" if feature is not None else "", *[blank] * (len(parts) - 1)]
    tails = [""] * (len(parts) - 1) + [rest]
    return [f"  {lead}{part:<{width}}{tail}".rstrip() for lead, part, tail in zip(leads, parts, tails, strict=True)]

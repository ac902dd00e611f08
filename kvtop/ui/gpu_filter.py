"""The dashboard's `/` filter: a few words, each of which a GPU row must match.

```
gpu:3   gpu:3,5   gpu3   3     the GPU with that NVML index (a bare number also matches a pid)
pid:4242                       a GPU one of whose processes has that pid
state:lost  state:tight        the GPU's state (ok, lost, error, mig, …), `tight` (★), `finding`
                               (named by a warning or critical finding), `short` (the rank holds fewer
                               tokens than its clean prediction: the row's −N tok, the waterfall's
                               `change_tokens`), `orphan` (held by a dead server's workers), `idle` (no process)
engine:sglang  engine:41000    the engine's kind, id or server pid (substring)
llama   jupyter   tp3          plain text: model, process names and titles, user, rank label;
                               a state's name (`tight`, `lost`) typed plain matches that state too
re:sglang.*tp[0-3]$            a regular expression over the same text (case-insensitive)
!engine:vllm  !state:ok        any word negated: the GPUs it does not match
```

Plain text never reads the GPU's marketing name: `/3` would otherwise match every "HBM3". An
unknown key (`foo:bar`) makes the filter invalid; `FilterError` says which key and what is known.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.observe import GpuState
from kvtop.ui.filter_words import FilterError, Term, parse_terms
from kvtop.ui.widgets.row_data import GpuRowData, rank_label, state_cell

KEYS = ("gpu", "pid", "state", "engine", "re")
#: States the filter knows beyond `GpuState`'s values.
ROW_STATES = ("tight", "finding", "short", "orphan", "idle")


@dataclass(frozen=True)
class GpuFilter:
    """Every term must match (an empty filter lets every row through)."""

    terms: tuple[Term, ...] = ()

    def matches(self, row: GpuRowData) -> bool:
        return all(_matches(term, row) != term.negated for term in self.terms)


def parse_filter(text: str) -> GpuFilter:
    """The filter `text` states; FilterError names the first word it cannot read."""
    return GpuFilter(parse_terms(text, KEYS, _EXAMPLES, _check_state))


def _check_state(key: str, value: str) -> None:
    if key == "state" and value not in _STATES:
        raise FilterError(f"state: one of {', '.join(_STATES)} (got {value!r})")


_EXAMPLES = {"gpu": "gpu:3 or gpu:3,5", "pid": "pid:4242", "state": "state:lost", "engine": "engine:sglang",
             "re": "re:'tp[0-3]$'"}  # fmt: skip
_STATES = (*(state.value for state in GpuState), *ROW_STATES)


def _matches(term: Term, row: GpuRowData) -> bool:
    gpu = row.gpu
    if term.key == "gpu":
        return str(gpu.index) in term.value.split(",")
    if term.key == "pid":
        wanted = set(term.value.split(","))
        return any(str(process.pid) in wanted for process in gpu.processes)
    if term.key == "number":
        return str(gpu.index) == term.value or any(str(p.pid) == term.value for p in gpu.processes)
    if term.key == "state":
        return _state_matches(term.value, row)
    if term.pattern is not None:
        return term.pattern.search(row_text(row)) is not None
    if term.key == "engine":
        names = [p.engine_id or "" for p in gpu.processes] + [p.engine_kind or "" for p in gpu.processes]
        if row.engine is not None:
            names += [row.engine.engine.engine_id, row.engine.engine.kind, str(row.engine.engine.server_pid)]
        return any(term.value in name.lower() for name in names)
    if term.value in _STATES and _state_matches(term.value, row):
        return True  # `tight`, `lost`, … typed plain read as the state they name
    return term.value in row_text(row)


def _state_matches(value: str, row: GpuRowData) -> bool:
    if value == "tight":
        return row.tightest
    if value == "finding":
        return row.finding_tone in ("error", "warning")
    if value == "short":
        return row.capacity is not None and row.capacity.short
    if value in ("orphan", "idle"):
        return state_cell(row)[0] == value.upper()  # the state the row shows
    return row.gpu.state.value == value


def row_text(row: GpuRowData) -> str:
    """What plain words match: model, process names, titles and users, rank label (never the GPU's name)."""
    parts: list[str] = []
    for process in row.gpu.processes:
        parts += [process.name or "", process.title or "", process.user or ""]
        if process.cmdline:
            parts.append(process.cmdline[0].rsplit("/", 1)[-1])
    if row.engine is not None:
        parts += [row.engine.engine.engine_id, row.engine.engine.model or ""]
        if row.engine.ledger is not None:
            parts.append(row.engine.ledger.model.name)
    if row.rank is not None:
        parts.append(rank_label(row.rank, row.engine))
    return " ".join(parts).lower()

"""The process table's `/` filter: a few words, each of which a process row must match (as the GPU list's).

```
gpu:3   gpu:3,5   gpu3          the row's GPU (NVML index)
pid:4242   4242                 that pid (a bare number matches a pid or a GPU index)
user:ada                        the user (substring)
role:co-tenant  role:orphan     the role (co-tenant, orphan, engine, unattributed; substring)
engine:sglang  engine:tp3       the engine column: id, kind, rank (substring)
jupyter   ipykernel             plain text: command, user, role, engine
re:ipykernel.*json$             a regular expression over the same text (case-insensitive)
!role:engine                    any word negated: the rows it does not match
```
The grammar is the GPU list's (`kvtop.ui.filter_words`): an unknown key makes the filter invalid, and
`FilterError` says which key and what is known.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.ui.filter_words import Term, parse_terms
from kvtop.ui.process_rows import ProcessRow

KEYS = ("gpu", "pid", "user", "role", "engine", "re")


@dataclass(frozen=True)
class ProcessFilter:
    """Every term must match (an empty filter lets every row through)."""

    terms: tuple[Term, ...] = ()

    def matches(self, row: ProcessRow) -> bool:
        return all(_matches(term, row) != term.negated for term in self.terms)


def parse_process_filter(text: str) -> ProcessFilter:
    """The filter `text` states; FilterError names the first word it cannot read."""
    return ProcessFilter(parse_terms(text, KEYS, _EXAMPLES))


_EXAMPLES = {"gpu": "gpu:3,5", "pid": "pid:4242", "user": "user:ada", "role": "role:co-tenant",
             "engine": "engine:sglang", "re": "re:'kernel.*json$'"}  # fmt: skip


def _matches(term: Term, row: ProcessRow) -> bool:
    if term.key == "gpu":
        return str(row.gpu) in term.value.split(",")
    if term.key == "pid":
        return str(row.pid) in term.value.split(",")
    if term.key == "number":
        return term.value in (str(row.pid), str(row.gpu))
    if term.pattern is not None:
        return term.pattern.search(row_text(row)) is not None
    field = {"user": row.user, "role": row.role_name, "engine": row.engine}.get(term.key)
    return term.value in (field if field is not None else row_text(row)).lower()


def row_text(row: ProcessRow) -> str:
    """What plain words match: command, user, role and engine column."""
    return " ".join((row.command, row.user, row.role_name, row.engine)).lower()

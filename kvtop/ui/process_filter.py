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
An unknown key makes the filter invalid; `FilterError` (the GPU list's) says which key and what is known.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kvtop.ui.gpu_filter import FilterError
from kvtop.ui.process_rows import ProcessRow

KEYS = ("gpu", "pid", "user", "role", "engine", "re")
_GPU_WORD = re.compile(r"^gpu(\d+)$")


@dataclass(frozen=True)
class ProcessTerm:
    key: str  # one of KEYS, "text", or "number" (a bare number: a pid or a GPU index)
    value: str
    negated: bool = False
    pattern: re.Pattern[str] | None = None


@dataclass(frozen=True)
class ProcessFilter:
    """Every term must match (an empty filter lets every row through)."""

    terms: tuple[ProcessTerm, ...] = ()

    def matches(self, row: ProcessRow) -> bool:
        return all(_matches(term, row) != term.negated for term in self.terms)


def parse_process_filter(text: str) -> ProcessFilter:
    """The filter `text` states; FilterError names the first word it cannot read."""
    terms: list[ProcessTerm] = []
    for given in text.split():
        negated = given.startswith("!") and len(given) > 1
        given = given[1:] if negated else given
        key, colon, value = given.partition(":")
        key = key.lower()
        if not colon:
            word = given.lower()
            gpu = _GPU_WORD.match(word)
            kind = "gpu" if gpu else "number" if word.isdigit() else "text"
            terms.append(ProcessTerm(kind, gpu.group(1) if gpu else word, negated))
            continue
        if key not in KEYS:
            raise FilterError(f"unknown filter key {key!r} (known: {', '.join(KEYS)}; or plain text)")
        if not value:
            raise FilterError(f"{key}: needs a value, e.g. {key}:{_EXAMPLES[key]}")
        if key in ("gpu", "pid") and not all(part.isdigit() for part in value.split(",")):
            raise FilterError(f"{key}: takes numbers (got {value!r}), e.g. {key}:{_EXAMPLES[key]}")
        pattern = None
        if key == "re":
            try:
                pattern = re.compile(value, re.IGNORECASE)
            except re.error as error:
                raise FilterError(f"re: not a regular expression {value!r} ({error})") from None
        terms.append(ProcessTerm(key, value if key == "re" else value.lower(), negated, pattern))
    return ProcessFilter(tuple(terms))


_EXAMPLES = {"gpu": "3,5", "pid": "4242", "user": "ada", "role": "co-tenant", "engine": "sglang", "re": "'kernel.*json$'"}


def _matches(term: ProcessTerm, row: ProcessRow) -> bool:
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

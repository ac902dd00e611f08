"""The reading of each difference between kvtop and an engine's own code.

Every row that is not equal gets one reading, the first rule that matches. A reading is one of:
  kvtop: …          a rule kvtop gets wrong for that engine version (a fix request: the engine
                    file/function that decides it and the number the engine gives)
  stand-in: …       the harness's stand-in changed what the engine did; on a GPU it would differ
  harness: …        the harness cannot give the engine an input it needs (not a result)
  version: …        a known difference between engine versions that kvtop models for the version
A difference no rule matches reads "unexplained" (the report lists them).
"""

from __future__ import annotations

from benchmarks.engine_diff.readings_base import COMMON_RULES, Case, Rule
from benchmarks.engine_diff.readings_sglang import SGLANG_RULES
from benchmarks.engine_diff.readings_vllm import VLLM_RULES

__all__ = [
    "COMMON_RULES",
    "SGLANG_RULES",
    "UNEXPLAINED",
    "VERSION_NOTES",
    "VLLM_RULES",
    "Case",
    "Rule",
    "reading_for",
]

VERSION_NOTES: dict[tuple[str, str], list[Rule]] = {}


UNEXPLAINED = ("?", "unexplained", "no rule matches: see the report")


def reading_for(case: Case) -> tuple[str, str, str]:
    """(id, title, the reading) of the first rule that matches the row."""
    rules = COMMON_RULES + (VLLM_RULES if case.engine == "vllm" else SGLANG_RULES)
    for rule_id, title, applies, text in VERSION_NOTES.get((case.engine, case.version), []) + rules:
        try:
            if applies(case):
                return rule_id, title, text
        except (KeyError, TypeError, ValueError):
            continue
    return UNEXPLAINED

"""Which doc a "§N" names: every section reference a person reads names its doc (docs/engines/<engine>.md §N).

An engine's rules cite its own doc's sections in their labels, notes and causes ("(§4.1)"), as its code
comments do; `plan` and `explain` print them beside figures, where a bare "§4.1" names no doc. `qualified`
is the one formatter the views pass their text through: a bare reference (or a run of them, "§2.2/§4.2",
"§1–§6") gains the engine's doc; one already after a doc's name ("sglang.md §6.2") is kept.
"""

from __future__ import annotations

import re

# a "§" that starts a reference: not right after a doc's name ("….md ") nor inside a run ("§2.2/§4.2", "§1–§6")
_BARE = re.compile(r"(?<!\.md )(?<![/–\-§])§(?=\d)")


def engine_doc(engine: str) -> str:
    """'docs/engines/vllm.md': the doc that holds an engine's rules, sources and version ranges."""
    return f"docs/engines/{engine}.md"


def section_ref(engine: str, section: str) -> str:
    """'docs/engines/trtllm.md §4.1'."""
    return f"{engine_doc(engine)} §{section}"


def qualified(text: str, engine: str) -> str:
    """`text` with each bare section reference naming the engine's doc ('(§4.1)' → '(docs/engines/trtllm.md §4.1)')."""
    return _BARE.sub(f"{engine_doc(engine)} §", text)

"""SGLang's dialect names a line's rank in its own prefix (moved from the shared log reader, issue 29)."""

from __future__ import annotations

from kvtop.domain.engines.sglang.log_lines import DIALECT

# tests/data/cases/sglang/ (a TP8 start of 2025-10-16): the rank tags after the time in the brackets
LINE = "[2025-10-16 09:06:09 TP7] Init torch distributed ends. mem usage=1.77 GB"


def test_its_rank_prefix_names_the_rank() -> None:
    assert DIALECT.rank_reader is not None and DIALECT.rank_hint in LINE
    assert DIALECT.rank_reader(LINE) == (0, (None, 7, None, None, None))
    assert DIALECT.rank_reader("[2025-01-23 10:00:00 DP1 TP3 EP3] x") == (0, (1, 3, None, 3, None))


def test_a_launch_names_its_model_positionally() -> None:
    assert DIALECT.positional_model is not None
    match = DIALECT.positional_model.search("sglang serve Qwen/Qwen3-8B --tp 2")
    assert match is not None and match.group(1) == "Qwen/Qwen3-8B"
    assert any(word in "python3 -m sglang.launch_server --model-path x" for word in DIALECT.launch_words)

"""vLLM's dialect names a line's rank from its process prefix (moved from the shared log reader, issue 29)."""

from __future__ import annotations

from kvtop.domain.engines.vllm.log_lines import DIALECT

# tests/data/cases/vllm/ (a journald capture): the process prefix after journald's own
LINE = (
    "авг 18 14:15:02 llm python3[28145]: (Worker_TP0 pid=28145) INFO 08-18 14:15:02 [gpu_worker.py:475] "
    "Available KV cache memory: 5.35 GiB"
)


def test_its_process_prefix_names_the_rank_where_it_starts() -> None:
    assert DIALECT.rank_reader is not None and DIALECT.rank_hint in LINE
    assert DIALECT.rank_reader(LINE) == (LINE.index("(Worker_TP0"), (None, 0, None, None, None))
    # two processes in one prefix: the engine core's DP rank and the worker's TP rank
    assert DIALECT.rank_reader("(EngineCore_DP1 pid=1) (Worker_TP2 pid=2) INFO") == (0, (1, 2, None, None, None))


def test_its_line_shape_and_failed_start_words() -> None:
    assert DIALECT.line_shape is not None and DIALECT.line_shape.search(LINE)
    assert "EngineCore failed to start" in DIALECT.start_failures

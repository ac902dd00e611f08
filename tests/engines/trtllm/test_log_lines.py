"""TensorRT-LLM's dialect: a global rank prefix, its own date and its launch words (issue 29)."""

from __future__ import annotations

from kvtop.domain.engines.trtllm.log_lines import DIALECT

# tests/data/cases/trtllm/ (a refused start of 2025-07-08)
LINE = (
    "[07/08/2025-19:47:15] [TRT-LLM] [RANK 1] [E] Failed to initialize executor on rank 1: Executor creation "
    "failed due to insufficient GPU memory."
)


def test_its_rank_prefix_and_date() -> None:
    assert DIALECT.rank_prefix is not None and DIALECT.date is not None
    match = DIALECT.rank_prefix.search(LINE)
    assert match is not None and match.group(1) == "1"
    date = DIALECT.date.search(LINE)
    assert date is not None and (date["y"], date["m"], date["d"]) == ("2025", "07", "08")


def test_its_launch_words_find_its_launches() -> None:
    for launch in ("trtllm-serve meta-llama/Llama-3.1-8B --tp_size 8", "python3 -m dynamo.trtllm --model-path x"):
        assert any(word in launch for word in DIALECT.launch_words) and DIALECT.launch.search(launch)

"""Session 56's operator QA: diagnose printed the FP8 advice as '+1,222,293 tokens/rank with the change  (23.31 GiB)',
which read as memory the change frees, while the KV pool keeps its 46.6 GiB. The bytes are today's tokens times the
cell FP8 saves: on the default demo (SGLang, Llama-3-70B TP8: 1 KV head of 128 on 80 layers per rank) the bf16 cell is
80 × 2 × 128 × 2 B = 40,960 B and the FP8 cell 20,480 B, so the figure is 20,480 B × the rank's tokens at bf16; the
line now says what it is."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main


def test_the_fp8_advice_says_its_bytes_are_a_saving_not_memory_freed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--demo", "default", "diagnose", "--json"]) in (0, 1)
    fp8 = next(f for f in json.loads(capsys.readouterr().out)["advice"] if f["rule"] == "bf16_kv_where_fp8_supported")
    tokens = int(fp8["evidence"][1].split()[1].replace(",", ""))  # 'capacity 1,222,292 predicted → … tokens per rank'
    assert fp8["evidence"][0] == "KV bytes per token per rank: 40,960 B (bf16) → 20,480 B (FP8)"
    assert fp8["bytes"] == (40_960 - 20_480) * tokens
    assert fp8["bytes_words"].startswith("today's tokens take this much less KV in FP8; nothing is freed")
    assert main(["--demo", "default", "diagnose"]) in (0, 1)
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("INFO     16-bit KV"))
    assert line.endswith(
        f"with the change  ({20_480 * tokens / 2**30:.2f} GiB: today's tokens take this much less KV in FP8; nothing is "
        "freed: the pool keeps its size and holds more)"
    ), line  # 20,480 B × 1,222,641 (the plan at session 59's fits) = 25,039,687,680 B = 23.32 GiB

"""A token gap's bytes say which bytes per token they are counted at (session 60, operator pass).

`kvtop explain tests/data/cases/vllm/1cat-237-gemma-v100x4/engine.log --engine vllm --model
tests/data/configs/google--gemma-3-27b-it.json --gpu V100-16GB` said "MISMATCH by +200,664 tokens (101.92 GB
(94.92 GiB))" on a 16 GiB card: the bytes are the gap at kvtop's cell for the config given, the very geometry the
cause says the engine did not run. Gemma-3-27B's cell, from its config.json (text_config: 62 layers, 16 KV heads,
head_dim 128) at 2 B: 62 × 2 × 16 × 128 × 2 = 507,904 B. The log's `GPU KV cache size: 215,401 tokens` lies above
the predicted interval.
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.conftest import CASES, CONFIGS

LOG = CASES / "vllm" / "1cat-237-gemma-v100x4" / "engine.log"


def test_the_gap_in_bytes_names_the_cell_it_is_counted_at(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["explain", str(LOG), "--engine", "vllm", "--model", str(CONFIGS / "google--gemma-3-27b-it.json")]
    main([*args, "--gpu", "V100-16GB", "--no-calibration-store"])
    verdict = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("verdict:"))
    assert verdict.startswith("verdict: MISMATCH by +")
    head = verdict.split(": cause")[0]
    assert head.endswith(f"at kvtop's {62 * 2 * 16 * 128 * 2:,} B per token")
    assert "tokens from the interval's high end (log 215,401, interval " in head

"""A mismatch the printed sizes do not show is not said as "0.00 GB larger" (session 44, task E2).

`kvtop explain tests/data/cases/llamacpp/gemma2-2b-it-q4_k_m-np-auto-unified/engine.log --engine llamacpp
--model tests/data/configs/meta-llama--Llama-3.1-8B.json` said "the logged KV pool is 0.00 GB (0.00 GiB)
larger than predicted. another model ran: …". The log's caches hold 13 layers each (its line
`llama_kv_cache: size = 416.00 MiB (8192 cells, 13 layers, 4/1 seqs)`, twice: full and sliding window);
Llama-3.1-8B's config has num_hidden_layers 32 and no sliding window. Gemma 2 2B's rows (4 KV heads ×
256 × 2 B = 2,048 B) equal Llama-3.1-8B's (8 × 128 × 2 B), so the printed sizes agree and the layers alone
tell the other model.
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.conftest import CASES, CONFIGS

LOG = CASES / "llamacpp" / "gemma2-2b-it-q4_k_m-np-auto-unified" / "engine.log"


def test_the_verdict_names_the_other_model_without_a_zero_byte_gap(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["explain", str(LOG), "--engine", "llamacpp", "--model", str(CONFIGS / "meta-llama--Llama-3.1-8B.json")]
    main([*args, "--no-calibration-store"])
    verdict = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("verdict:"))
    assert verdict == (
        "verdict: MISMATCH (the token counts agree, which proves nothing here) — another model ran: "
        "the log's full-attention cache holds 13 layers; meta-llama--Llama-3.1-8B has 32; "
        "the log's sliding-window cache holds 13 layers; meta-llama--Llama-3.1-8B has 0"
    )

"""A TurboMind log with no version line and no date, read by its block of the model's KV (kvtop.domain.engines.lmdeploy
.explain `version_with_model`, eras `block_len_release`).

InternStudio's LMDeploy v0.1.0 tutorial (tests/data/cases/lmdeploy/lmdeploy-tutorial-v010-internlm-chat-7b-vgpu)
prints 'block_size = 64 MB' and 'max_block_count = 159': its lines allow v0.1.0 – v0.7.x (integer MiB), whose newest
has 64-token blocks. InternLM-7B's KV (stand-in Llama-2-7B: 32 layers × 32 heads × 128 × 2 × 2 B = 524,288 B a token)
makes a 64 MiB block at 128 tokens (target_model/base.py ≤ v0.2.6 `cache_block_seq_len = 128`), not at 64: the
capacity is 159 × 128 = 20,352 tokens (the case's own reading), not 159 × 64.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kvtop.cli import main
from tests.conftest import CASES, CONFIGS

LOG = CASES / "lmdeploy" / "lmdeploy-tutorial-v010-internlm-chat-7b-vgpu" / "engine.log"


def _explain(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    model = str(CONFIGS / "meta-llama--Llama-2-7b-hf.json")
    assert main(["explain", str(LOG), "--engine", "lmdeploy", "--model", model, "--gpu-memory", "20470MiB", *argv,
                 "--no-calibration-store", "--json"]) == 0  # fmt: skip
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def test_the_block_of_the_models_kv_reads_the_release_before_0_3(capsys: pytest.CaptureFixture[str]) -> None:
    out = _explain(capsys)
    assert out["logged"]["token_capacity"] == 159 * 128 == 20_352
    assert out["engine_version"] == "0.2.6" and "a 128-token block" in out["version_detail"]


def test_a_typed_release_is_kept(capsys: pytest.CaptureFixture[str]) -> None:
    out = _explain(capsys, "--engine-version", "0.1.0")
    assert out["engine_version"] == "0.1.0" and out["logged"]["token_capacity"] == 20_352
    assert out["verdict"] == "match"


def test_a_mismatch_the_lines_cannot_date_asks_for_the_release(capsys: pytest.CaptureFixture[str]) -> None:
    """The v0.1.0 tutorial log ('block_size = 64 MB', a 128-token block) is allowed by v0.1.0 – v0.2.6: under the
    newest (0.2.6's share of free memory) its 159 blocks mismatch, under 0.1.0's share of total (20,470 MiB × 0.5 ÷
    64 MiB = 159) they match; the lines cannot tell them apart, so the verdict says so instead of a mismatch."""
    log = str(CASES / "lmdeploy" / "lmdeploy-tutorial-v010-internlm-chat-7b-vgpu" / "engine.log")
    model = str(CONFIGS.parent / "calibration" / "configs" / "internlm--internlm-chat-7b.RECONSTRUCTED.json")
    main(["explain", log, "--model", model, "--gpu-memory", "20470MiB"])
    said = capsys.readouterr().out
    assert "verdict: INSUFFICIENT" in said and "they cannot tell 0.1.0 from 0.2.6: pass --engine-version" in said
    main(["explain", log, "--model", model, "--gpu-memory", "20470MiB", "--engine-version", "0.1.0"])
    assert "verdict: MATCH" in capsys.readouterr().out
    main(["explain", log, "--model", model, "--gpu-memory", "20470MiB", "--engine-version", "0.2.6"])
    assert "verdict: MISMATCH" in capsys.readouterr().out  # a typed release is judged as it is

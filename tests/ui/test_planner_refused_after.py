"""A launch the engine refuses at start shows 'refused' in the planner's after column, not figures it never reaches.

The operator's review (session 70): Llama-3-70B (max_position_embeddings 8,192 in its config) at context 32,768 under
vLLM, which `_get_and_verify_max_len` refuses (vllm/config) unless VLLM_ALLOW_LONG_MAX_MODEL_LEN is set: `kvtop plan`
refuses it outright, while the planner's after column still showed its tokens and its concurrency at 32,768, only the
✗ line saying vLLM refuses. The refusal is the domain's (`launch_refusals`); the table reads it.
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_check import launch_refusals
from kvtop.sources.hub import load_model
from kvtop.ui.planning import field_texts, plan
from kvtop.ui.widgets.plan_result import outcome_table
from tests.ui.fakes import LLAMA_70B_CONFIG

H100 = 85_520_809_984  # 79.65 GiB, nvidia-smi's total


def _after(table: str, label: str) -> str:
    """The after column of the row `label` (the text after its '→')."""
    line = next(line for line in table.splitlines() if line.startswith(label))
    return line.rsplit("→", 1)[1].strip()


def test_a_refused_context_says_refused_in_the_after_column(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--model", str(LLAMA_70B_CONFIG), "--tensor-parallel-size", "4"]
    assert main(["plan", "--no-calibration-store", "--engine", "vllm", "--gpu", "H100", *args, "--max-model-len",
                 "32768"]) == 2  # fmt: skip
    assert "refuses --max-model-len 32,768 above the model's 8,192 positions" in capsys.readouterr().err
    settings = parse_flags("vllm", args)
    texts = {**field_texts(settings), "context_length": "32768"}
    outcome = plan(load_model(str(LLAMA_70B_CONFIG)), settings, texts, gpu_total_bytes=H100, gpu_name="H100")
    assert outcome.after is not None and outcome.after.context_length == 32_768
    refusals = launch_refusals(outcome.after)
    assert [refusal.field for refusal in refusals] == ["--max-model-len"]
    table = outcome_table(outcome, None, refused=bool(refusals)).plain
    for row in ("tokens per rank", "max running reqs", "concurrency @ctx", "fits", "  KV pool", "  tokens"):
        assert _after(table, row) == "refused", row
    assert _after(table, "context length") == "32,768"  # what the edit asks for stays
    assert _after(table, "host KV tokens") == "—"  # none asked: nothing to refuse
    assert "  change" not in table  # no token change from a launch that does not start
    fresh = next(line for line in table.splitlines() if line.startswith("fresh start"))
    assert fresh.split(None, 2)[2] == "refused: the engine does not start this launch (the ✗ line says why)"
    # the before column (the model's own 8,192) keeps its figures
    before = next(line for line in table.splitlines() if line.startswith("tokens per rank"))
    assert before.split("→")[0].split()[-1] != "refused"

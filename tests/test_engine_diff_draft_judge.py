"""The registry judge compares a speculative draft's config as a draft (benchmarks/engine_diff/registry_judge.py):
SGLang 0.5.23 builds the Eagle-3 head class LlamaForCausalLMEagle3 alone (the registry sweep's rows), and its
figures are set against kvtop's draft terms planned beside the head's target, never against a refusal of the
head as a served model. vLLM 0.33.0 refuses the class served alone (AssertionError): both refuse."""

from __future__ import annotations

import pytest

from benchmarks.engine_diff.registry_configs import DRAFT_TARGETS
from benchmarks.engine_diff.registry_judge import BOTH_REFUSE, configs_by_name, draft_answer, judge
from benchmarks.engine_diff.registry_sweep import load_rows

# KV per token of one draft layer per rank: kv heads × head_dim × (K and V) × 2 B (bf16/fp16), over TP
# (the heads' configs: Llama-3-70B head 8 KV heads × 128, Qwen3-235B head 4 × 128)
KV_HEADS = {"sgl-project--SpecForge-llama3-70B-eagle3": 8, "sgl-project--SpecForge-qwen3-235B-A22B-eagle3": 4}


def _rows(engine: str, version: str) -> list[dict]:
    return [row for row in load_rows(engine, version) if row["config"] in DRAFT_TARGETS]


def test_every_draft_and_its_target_are_configs_at_hand() -> None:
    names = configs_by_name()
    for draft, target in DRAFT_TARGETS.items():
        head, served = names[draft].data(), names[target].data()
        assert head["architectures"] == ["LlamaForCausalLMEagle3"]
        assert (head["hidden_size"], head["vocab_size"]) == (served["hidden_size"], served["vocab_size"])


@pytest.mark.parametrize("tp", [1, 2])
def test_sglang_builds_each_head_and_it_is_judged_as_a_draft(tp: int) -> None:
    rows = [row for row in _rows("sglang", "0.5.23") if row["tp"] == tp]
    assert len(rows) == len(DRAFT_TARGETS)
    for row in rows:
        assert row["status"] == "ok" and row["cell_size"] == KV_HEADS[row["config"]] * 128 * 2 * 2 // tp
        plan = draft_answer("sglang", "0.5.23", row)
        assert plan["status"] == "ok" and plan["kv_bytes_per_token"] == row["cell_size"]
        judged = judge("sglang", "0.5.23", row)
        built = sum(sum(stage["param_bytes"].values()) for stage in row["stages"])
        if plan["weights_bytes"] == built:
            assert judged.verdict == "equal"
        else:
            assert judged.verdict == "different" and judged.detail.startswith(
                f"draft weights: kvtop {plan['weights_bytes']:,} B, engine {built:,} B"
            )


def test_vllm_refuses_each_head_served_alone_as_kvtop_does() -> None:
    rows = _rows("vllm", "0.33.0")
    assert len(rows) == 2 * len(DRAFT_TARGETS) and {row["status"] for row in rows} == {"refused"}
    assert {judge("vllm", "0.33.0", row).verdict for row in rows} == {BOTH_REFUSE}

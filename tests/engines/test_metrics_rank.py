"""Each engine's rule for the rank one series of its own metrics speaks for (`span_rule.metrics_rank`), on
recorded /metrics pages (tests/data/samples): the labels as each engine's release wrote them."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.span import MetricsRank, ServingRole
from tests.conftest import SAMPLES


def series(path: str, name: str) -> list[dict[str, str]]:
    """The labels of every sample of `name` on a recorded page."""
    page = (SAMPLES / path).read_text()
    return [s.labels for family in text_string_to_metric_families(page) for s in family.samples if s.name == name]


def ranks(kind: str, labels: list[dict[str, str]]) -> list[MetricsRank | None]:
    return [engine_rules(kind).span_rule.metrics_rank(one) for one in labels]


def test_sglang_schedulers_name_their_dp_pp_and_tp_ranks() -> None:
    # DeepSeek-R1 at DP8 (aibrix issue 1614): one series per DP rank's scheduler, each its pid (the excerpt
    # holds ranks 0, 1, 2, 3, 5 of `num_paused_reqs`)
    found = ranks("sglang", series("sglang_metrics/sglang-dp8-deepseek-r1-multirank-labels-fragment.txt",
                                   "sglang:num_paused_reqs"))  # fmt: skip
    assert sorted((r.dp_rank, r.pp_rank, r.tp_rank) for r in found if r is not None) == [(i, 0, i) for i in (0, 1, 2, 3, 5)]
    assert {(r.served_model, r.role, r.deployment) for r in found if r is not None} == {
        ("deepseek-r1", ServingRole.WHOLE, None)  # engine_type="unified"
    }
    # the first generation (PR 1853, 2024-11) labelled `name`, no rank: rank 0 of its model
    (first,) = ranks("sglang", series("sglang_metrics/sglang-pr1853-2024-11-llama3.2-3b-fragment.txt",
                                      "sglang:max_total_num_tokens"))  # fmt: skip
    assert first is not None and first.position == (0, 0, 0)
    assert first.served_model == "/shared/public/elr-models/meta-llama/Llama-3.2-3B/5cc0ffe09ee49f7be6ca7c794ee6bd7245e84e60/"
    assert ranks("sglang", [{"model_name": "m", "engine_type": "decode", "tp_rank": "3"}])[0] == MetricsRank(
        kind="sglang", served_model="m", role=ServingRole.DECODE, tp_rank=3
    )
    # a rank label that is no number, or an engine type SGLang does not write: not joined
    assert ranks("sglang", [{"model_name": "m", "tp_rank": "x"}, {"model_name": "m", "engine_type": "other"}]) == [None, None]


def test_vllm_names_the_engine_cores_data_parallel_rank() -> None:
    (v1,) = ranks("vllm", series("vllm_metrics/v1-nim-qwen3-vl-235b-awq-tp2-grep-fragment.txt", "vllm:kv_cache_usage_perc"))
    assert v1 == MetricsRank(kind="vllm", served_model="qwen3-vl-235b-awq", dp_rank=0)  # engine="0"
    # an early V1 page (2025-03) has no `engine` label: rank 0
    (early,) = ranks("vllm", series("vllm_metrics/early-v1-production-stack-qwen2.5-coder-32b-fragment.txt",
                                    "vllm:gpu_cache_usage_perc"))  # fmt: skip
    assert early == MetricsRank(kind="vllm", served_model="Qwen/Qwen2.5-Coder-32B-Instruct")
    assert ranks("vllm", [{"model_name": "m", "engine": "5", "kvtop_engine": "10.0.0.1:13345"}]) == [
        MetricsRank(kind="vllm", served_model="m", dp_rank=5, deployment="10.0.0.1:13345")
    ]
    assert ranks("vllm", [{"engine": "0"}]) == [None]  # no model named: not joined


def test_engines_whose_metrics_name_no_rank_join_nothing() -> None:
    labels = {"engine_type": "undefined", "model_name": "undefined"}  # trtllm-serve's /prometheus/metrics
    assert [engine_rules(kind).span_rule.metrics_rank(labels) for kind in ("trtllm", "lmdeploy", "llamacpp")] == [None] * 3

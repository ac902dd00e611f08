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
        kind="sglang", served_model="m", role=ServingRole.DECODE, tp_rank=3, partial_axes=("TP",), dp_inside_tp=True
    )  # only attention-TP rank 0 of each DP group reports unless every scheduler is asked to
    # a rank label that is no number, or an engine type SGLang does not write: not joined
    assert ranks("sglang", [{"model_name": "m", "tp_rank": "x"}, {"model_name": "m", "engine_type": "other"}]) == [None, None]


def test_vllm_names_the_engine_cores_data_parallel_rank() -> None:
    (v1,) = ranks("vllm", series("vllm_metrics/v1-nim-qwen3-vl-235b-awq-tp2-grep-fragment.txt", "vllm:kv_cache_usage_perc"))
    dp_only = {"named_axes": ("DP",)}  # an engine core's series name its DP rank, not its TP or PP
    assert v1 == MetricsRank(kind="vllm", served_model="qwen3-vl-235b-awq", dp_rank=0, **dp_only)  # engine="0"
    # an early V1 page (2025-03) has no `engine` label: rank 0
    (early,) = ranks("vllm", series("vllm_metrics/early-v1-production-stack-qwen2.5-coder-32b-fragment.txt",
                                    "vllm:gpu_cache_usage_perc"))  # fmt: skip
    assert early == MetricsRank(kind="vllm", served_model="Qwen/Qwen2.5-Coder-32B-Instruct", **dp_only)
    assert ranks("vllm", [{"model_name": "m", "engine": "5", "kvtop_engine": "10.0.0.1:13345"}]) == [
        MetricsRank(kind="vllm", served_model="m", dp_rank=5, deployment="10.0.0.1:13345", **dp_only)
    ]
    assert ranks("vllm", [{"engine": "0"}]) == [None]  # no model named: not joined
    # cache_config_info names no model (its labels are CacheConfig's): "" for the join to take the instance's
    nim_info = series("vllm_metrics/v1-nim-qwen3-vl-235b-awq-tp2-grep-fragment.txt", "vllm:cache_config_info")
    (info,) = ranks("vllm", [{**labels, "__name__": "vllm:cache_config_info"} for labels in nim_info])  # as Prometheus answers
    assert info == MetricsRank(kind="vllm", served_model="", dp_rank=0, **dp_only)


def test_engines_whose_metrics_name_no_rank_join_nothing() -> None:
    labels = {"engine_type": "undefined", "model_name": "undefined"}  # trtllm-serve's /prometheus/metrics
    assert [engine_rules(kind).span_rule.metrics_rank(labels) for kind in ("trtllm", "lmdeploy", "llamacpp")] == [None] * 3


def test_each_engine_reads_its_token_capacity_from_its_own_series() -> None:
    """vLLM's from `cache_config_info`'s labels (the value is 1): `kv_cache_size_tokens` where the page has it
    (NIM: 551,520 = 34,470 blocks × 16 by hand), else num_gpu_blocks × block_size (v0.11.0, issue 28924:
    9,271 × 16 = 148,336; the first line of PR 3100: 24,188 × 16 = 387,008); SGLang's from its value."""
    vllm = engine_rules("vllm")
    (nim,) = series("vllm_metrics/v1-nim-qwen3-vl-235b-awq-tp2-grep-fragment.txt", "vllm:cache_config_info")
    assert vllm.metrics_tokens("vllm:cache_config_info", nim, 1.0) == 551_520 == 34_470 * 16
    assert vllm.metrics_tokens("vllm:cache_config_info", {**nim, "kv_cache_size_tokens": "None"}, 1.0) == 551_520
    (v0110,) = series("vllm_metrics/v0.11.0-cache-config-info-line-issue28924.txt", "vllm:cache_config_info")
    assert vllm.metrics_tokens("vllm:cache_config_info", v0110, 1.0) == 148_336 == 9_271 * 16
    (first,) = series("vllm_metrics/v0-pr3100-2024-02-cache-config-info-line.txt", "vllm:cache_config_info")
    assert vllm.metrics_tokens("vllm:cache_config_info", first, 1.0) == 387_008 == 24_188 * 16
    assert vllm.metrics_tokens("vllm:cache_config_info", {**v0110, "num_gpu_blocks": "None"}, 1.0) is None
    assert vllm.metrics_tokens("vllm:kv_cache_usage_perc", v0110, 0.5) is None  # a usage share is no capacity
    (sglang,) = series("sglang_metrics/sglang-pr1853-2024-11-llama3.2-3b-fragment.txt", "sglang:max_total_num_tokens")
    assert engine_rules("sglang").metrics_tokens("sglang:max_total_num_tokens", sglang, 570_979.0) == 570_979
    assert engine_rules("sglang").metrics_tokens("sglang:max_total_num_tokens", sglang, 0.5) is None

"""Engines seen only through their own metrics (no kvtop exporter on the node), joined across nodes by the
ranks their series name (kvtop/domain/cluster_metrics.py, each engine's `span.metrics_rank`), through the
synthetic Prometheus.

Series shapes are recorded ones (tests/data/samples): SGLang's scheduler labels `dp_rank, engine_type,
model_name, pid, pp_rank, tp_rank` of the DP8 DeepSeek-R1 page (aibrix issue 1614), vLLM's
`vllm:kv_cache_usage_perc{engine, model_name}` of the NIM Qwen3-VL page. Figures: SGLang's
`max_total_num_tokens` 326,223 of the DeepSeek-R1 TP16 prefill server over 2 × 8 H100
(sglang_server_info/sglang-0.5.9-deepseek-r1-tp16-2node-pd-prefill-trimmed.json), token usage 0.28 of
SGLang's docs page.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.capacity import CapacitySource
from kvtop.domain.cluster import ClusterView
from kvtop.domain.span import ServingRole
from kvtop.ui.widgets.engine_table import ENGINE_COLUMNS, engine_cells
from tests.conftest import SAMPLES
from tests.sources.fake_prometheus import FakePrometheus, Target
from tests.sources.test_prometheus import kvtop_page, read

SERVER_INFO = json.loads(
    (SAMPLES / "sglang_server_info" / "sglang-0.5.9-deepseek-r1-tp16-2node-pd-prefill-trimmed.json").read_text()
)
R1_TOKENS = SERVER_INFO["max_total_num_tokens"]
QWEN = "qwen3-vl-235b-awq"


def sglang_page(ranks: range, *, engine_type: str = "prefill", usage: dict[int, float] | None = None) -> str:
    """One node's SGLang /metrics: each DP-attention rank's scheduler (attention-TP rank 0 of its DP group)."""
    lines = ["# TYPE sglang:max_total_num_tokens gauge", "# TYPE sglang:token_usage gauge"]
    for rank in ranks:
        labels = (f'dp_rank="{rank}",engine_type="{engine_type}",model_name="deepseek-r1",pid="{910 + rank}",'
                  f'pp_rank="0",tp_rank="{rank}"')  # fmt: skip
        lines.append(f"sglang:max_total_num_tokens{{{labels}}} {R1_TOKENS}.0")
        lines.append(f"sglang:token_usage{{{labels}}} {(usage or {}).get(rank, 0.0)}")
    return "\n".join(lines) + "\n"


def vllm_page(engines: range, usage: float = 0.0, extra: str = "") -> str:
    """One API server's /metrics: the KV usage of each DP engine core it manages."""
    lines = ["# TYPE vllm:kv_cache_usage_perc gauge"]
    lines += [f'vllm:kv_cache_usage_perc{{engine="{e}",model_name="{QWEN}"{extra}}} {usage}' for e in engines]
    return "\n".join(lines) + "\n"


def engines_of(view: ClusterView) -> dict[str, list[tuple[str, str | None]]]:
    return {e.name: [(p.node, p.ranks_label) for p in e.pieces] for e in view.engines}


def test_a_two_node_sglang_engine_is_joined_by_the_ranks_its_metrics_name() -> None:
    view = read(FakePrometheus([
        Target("sglang", "10.0.0.1:30000", sglang_page(range(0, 8), usage={3: 0.28})),
        Target("sglang", "10.0.0.2:30000", sglang_page(range(8, 16))),
    ]))  # fmt: skip
    (engine,) = view.engines
    assert engines_of(view) == {
        "sglang deepseek-r1 @10.0.0.1:30000": [
            ("10.0.0.1:30000", "DP0–DP7 TP0–TP7"), ("10.0.0.2:30000", "DP8–DP15 TP8–TP15"),
        ]
    }  # fmt: skip
    assert engine.span.spans_nodes and engine.span.role is ServingRole.PREFILL
    assert engine.actual == (326_223, CapacitySource.LIVE)  # the server's own max_total_num_tokens
    assert engine.kv_usage_fraction == pytest.approx(0.28)
    assert [d.served_model for d in view.disaggregated] == ["deepseek-r1"]  # engine_type="prefill": one side
    cells = dict(zip(ENGINE_COLUMNS, (cell.text for cell in engine_cells(engine, view.disaggregated)), strict=True))
    assert cells["engine"] == "SGLang deepseek-r1 @10.0.0.1:30000"
    assert cells["where"] == "10.0.0.1:30000 DP0–DP7 TP0–TP7 (API) · 10.0.0.2:30000 DP8–DP15 TP8–TP15"
    assert cells["tokens per rank"] == "326,223 metrics"
    assert engine.describe_waterfall() == "326,223 engine metrics, the engine's own figure (no kvtop prediction to compare)"


def test_vllm_data_parallel_over_two_nodes_and_under_ray() -> None:
    # hybrid load balancing: each node's API server reports its own engine cores, by global DP rank
    hybrid = read(FakePrometheus([
        Target("vllm", "10.0.1.1:8000", vllm_page(range(0, 2), usage=0.25)),
        Target("vllm", "10.0.1.2:8000", vllm_page(range(2, 4), usage=0.5)),
    ]))  # fmt: skip
    assert engines_of(hybrid) == {f"vllm {QWEN} @10.0.1.1:8000": [("10.0.1.1:8000", "DP0–DP1"), ("10.0.1.2:8000", "DP2–DP3")]}
    assert hybrid.engines[0].kv_usage_fraction == pytest.approx(0.5)  # the busiest DP engine's
    # Ray placement (or internal balancing): the head's API server reports every DP rank
    ray = read(FakePrometheus([Target("vllm", "10.0.1.1:8000", vllm_page(range(0, 4)))]))
    assert engines_of(ray) == {"10.0.1.1:8000 on 10.0.1.1:8000": [("10.0.1.1:8000", "DP0–DP3")]}


def test_a_part_two_engines_could_own_is_named_not_guessed() -> None:
    view = read(FakePrometheus([
        Target("vllm", "10.0.2.1:8000", vllm_page(range(0, 2))),
        Target("vllm", "10.0.2.2:8000", vllm_page(range(2, 4))),
        Target("vllm", "10.0.2.3:8000", vllm_page(range(0, 2))),  # another engine of the same model
    ]))  # fmt: skip
    assert sorted(engines_of(view)) == [f"{i} on {i}" for i in ("10.0.2.1:8000", "10.0.2.2:8000", "10.0.2.3:8000")]
    spans = {e.pieces[0].instance: e.span for e in view.engines}
    assert spans["10.0.2.1:8000"].not_modelled is None and spans["10.0.2.3:8000"].not_modelled is None
    assert spans["10.0.2.2:8000"].not_modelled == (
        f"2 engines serve {QWEN} and no label tells which one ranks DP2–DP3 here belong to"
    )
    tones = {e.pieces[0].instance: engine_cells(e)[ENGINE_COLUMNS.index("where")].tone for e in view.engines}
    assert tones == {"10.0.2.1:8000": "", "10.0.2.2:8000": "warning", "10.0.2.3:8000": ""}
    # the operator's deployment label tells them apart
    labelled = read(FakePrometheus([
        Target("vllm", "10.0.2.1:8000", vllm_page(range(0, 2), extra=',kvtop_engine="a"')),
        Target("vllm", "10.0.2.2:8000", vllm_page(range(2, 4), extra=',kvtop_engine="a"')),
        Target("vllm", "10.0.2.3:8000", vllm_page(range(0, 2), extra=',kvtop_engine="b"')),
    ]))  # fmt: skip
    assert engines_of(labelled) == {
        f"vllm {QWEN} @10.0.2.1:8000": [("10.0.2.1:8000", "DP0–DP1"), ("10.0.2.2:8000", "DP2–DP3")],
        "10.0.2.3:8000 on 10.0.2.3:8000": [("10.0.2.3:8000", "DP0–DP1")],
    }


def test_a_node_kvtops_exporter_reports_speaks_for_its_engine() -> None:
    """kvtop's exporter and the engine's own metrics on one host: the engine is listed once, kvtop's."""
    view = read(FakePrometheus([
        Target("kvtop", "node-a:9401", kvtop_page("node-a")),
        Target("sglang", "node-a:30000", sglang_page(range(0, 8), engine_type="unified")),
    ]))  # fmt: skip
    assert [(e.name, e.pieces[0].instance) for e in view.engines] == [("sglang:4242 on node-a", "node-a:9401")]

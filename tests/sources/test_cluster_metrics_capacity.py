"""Engines seen only through their own metrics state their capacity, layout and tightest rank (issue 31).

Pages are recorded ones (tests/data/samples/vllm_metrics, SOURCES.md): the NIM Qwen3-VL page (vLLM after PR
#42206: `cache_config_info` with `kv_cache_size_tokens="551520"`, `num_gpu_blocks="34470"`, `block_size="16"`,
and no `model_name`), the v0.11.0 `cache_config_info` line of vLLM issue 28924 (`num_gpu_blocks="9271"`,
`block_size="16"`, no `kv_cache_size_tokens`). Expected tokens are the labels multiplied by hand: 34,470 × 16 =
551,520 (what the page's own `kv_cache_size_tokens` says), 9,271 × 16 = 148,336; SGLang's 326,223 is the
DeepSeek-R1 TP16 prefill server's `max_total_num_tokens` (sglang_server_info, as in test_cluster_metrics_join).
"""

from __future__ import annotations

from kvtop.commands.render_cluster import engine_json, engine_lines
from kvtop.domain.capacity import CapacitySource
from kvtop.ui.widgets.engine_table import ENGINE_COLUMNS, engine_cells
from tests.conftest import SAMPLES
from tests.sources.fake_prometheus import FakePrometheus, Target
from tests.sources.test_cluster_metrics_join import R1_TOKENS, sglang_page
from tests.sources.test_prometheus import read

VLLM = SAMPLES / "vllm_metrics"
NIM_PAGE = (VLLM / "v1-nim-qwen3-vl-235b-awq-tp2-grep-fragment.txt").read_text()
V0110_LINE = (VLLM / "v0.11.0-cache-config-info-line-issue28924.txt").read_text().splitlines()[-1]
MODEL = "qwen3-vl-235b-awq"


def v0110_page(engines: dict[int, int], usage: float = 0.1) -> str:
    """One API server's page: per engine core (DP rank → num_gpu_blocks) the recorded v0.11.0 info line and a
    KV usage line of the NIM page's shape."""
    lines = ["# TYPE vllm:cache_config_info gauge", "# TYPE vllm:kv_cache_usage_perc gauge"]
    for engine, blocks in engines.items():
        info = V0110_LINE.replace('engine="0"', f'engine="{engine}"').replace('num_gpu_blocks="9271"', f'num_gpu_blocks="{blocks}"')
        lines += [info, f'vllm:kv_cache_usage_perc{{engine="{engine}",model_name="{MODEL}"}} {usage}']
    return "\n".join(lines) + "\n"


def test_the_nim_page_states_its_capacity_in_cache_config_info() -> None:
    (engine,) = read(FakePrometheus([Target("vllm", "10.0.3.1:8000", NIM_PAGE)])).engines
    assert engine.span.served_model == MODEL  # from the usage series: the info gauge names no model
    assert engine.actual == (34_470 * 16, CapacitySource.LIVE) == (551_520, CapacitySource.LIVE)
    assert engine.actual_source == "engine metrics"
    assert engine.describe_waterfall() == "551,520 engine metrics, the engine's own figure (no kvtop prediction to compare)"
    assert engine.pieces[0].layout == "layout not reported"  # one engine core; its TP2 is not said


def test_a_page_before_kv_cache_size_tokens_states_blocks_times_block_size() -> None:
    (engine,) = read(FakePrometheus([Target("vllm", "10.0.3.2:8000", v0110_page({0: 9271}))])).engines
    assert engine.actual == (9_271 * 16, CapacitySource.LIVE) == (148_336, CapacitySource.LIVE)
    assert engine_cells(engine)[ENGINE_COLUMNS.index("tokens per rank")].text == "148,336 metrics"
    # a node page before the profile filled the block count ("None") states no capacity, never a zero
    (unsized,) = read(FakePrometheus([
        Target("vllm", "10.0.3.2:8000", v0110_page({0: 9271}).replace('num_gpu_blocks="9271"', 'num_gpu_blocks="None"'))
    ])).engines  # fmt: skip
    assert unsized.actual is None
    assert engine_lines(unsized)[1:] == ["    tightest rank: not known from metrics (its series state no rank's capacity)",
                                         "    no capacity reported"]  # fmt: skip


def test_vllm_dp_over_two_nodes_names_its_tightest_engine_core() -> None:
    # hybrid balancing: each node's API server reports its own engine cores; DP rank 3 sized fewer blocks
    view = read(FakePrometheus([
        Target("vllm", "10.0.1.1:8000", v0110_page({0: 9271, 1: 9271})),
        Target("vllm", "10.0.1.2:8000", v0110_page({2: 9271, 3: 9000})),
    ]))  # fmt: skip
    (engine,) = view.engines
    assert engine.pieces[0].layout == "DP4, TP, PP not reported"
    assert engine.actual == (9_000 * 16, CapacitySource.LIVE)
    tightest = engine.tightest
    assert tightest is not None and tightest.clear
    assert (tightest.node, tightest.rank, tightest.gpu, tightest.tokens) == ("10.0.1.2:8000", "dp3", None, 144_000)
    cells = dict(zip(ENGINE_COLUMNS, (cell.text for cell in engine_cells(engine)), strict=True))
    assert (cells["layout"], cells["where"], cells["tightest rank"]) == (
        "DP4, TP, PP not reported", "10.0.1.1:8000 DP0–DP1 (API) · 10.0.1.2:8000 DP2–DP3", "10.0.1.2:8000 dp3")  # fmt: skip
    assert engine_lines(engine)[1] == "    tightest rank: 10.0.1.2:8000 (dp3) · engine holds 144,000 tokens per rank (engine metrics)"
    assert engine_json(engine)["engine_metrics_only"] is True


def test_an_sglang_dp_attention_engine_shows_its_layout_and_ranks_holding_alike() -> None:
    view = read(FakePrometheus([
        Target("sglang", "10.0.0.1:30000", sglang_page(range(0, 8))),
        Target("sglang", "10.0.0.2:30000", sglang_page(range(8, 16))),
    ]))  # fmt: skip
    (engine,) = view.engines
    assert engine.pieces[0].layout == "TP16 DP16 (DP attention)"  # dp_rank = tp_rank: each scheduler its own DP group
    assert engine.actual == (R1_TOKENS, CapacitySource.LIVE) == (326_223, CapacitySource.LIVE)
    assert engine.tightest is not None and not engine.tightest.clear  # every rank states 326,223
    assert engine_lines(engine)[1] == "    tightest rank: none clearly (its ranks hold alike) · engine holds 326,223 tokens per rank (engine metrics)"
    # only attention-TP rank 0 of each of 4 DP groups reports (TP16, attention TP 4: SGLang's
    # compute_dp_attention_world_info numbers a rank's group tp_rank // 4): 4 groups × 4 ranks
    gaps = sglang_page(range(0, 4)).replace('tp_rank="1"', 'tp_rank="4"').replace('tp_rank="2"', 'tp_rank="8"')
    gaps = gaps.replace('tp_rank="3"', 'tp_rank="12"')
    (grouped,) = read(FakePrometheus([Target("sglang", "10.0.0.1:30000", gaps)])).engines
    assert grouped.pieces[0].layout == "TP16 DP4 (DP attention)"
    # the groups' ranks do not say their width (group 2 missing): TP is at least the highest rank + 1
    (partly,) = read(FakePrometheus([Target("sglang", "10.0.0.1:30000", gaps.replace('dp_rank="2"', 'dp_rank="3"'))])).engines
    assert partly.pieces[0].layout.startswith("TP≥13 ")
    # without DP attention only TP rank 0 reports: its TP is not said
    (alone,) = read(FakePrometheus([Target("sglang", "10.0.0.1:30000", sglang_page(range(0, 1)))])).engines
    assert alone.pieces[0].layout == "TP not reported"

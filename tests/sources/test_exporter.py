"""The exporter's page, parsed back with prometheus-client's own parser, holds the snapshot's numbers.

The node is tests/ui/fakes.py's Meta-Llama-3-70B SGLang TP8 on eight H100s (81559 MiB each),
predicted by the real `predict()` on tests/data/configs/meta-llama--Meta-Llama-3-70B.json.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from dataclasses import dataclass

import httpx
import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import InputError
from kvtop.domain.wording import GIB
from kvtop.sources.exporter import Exporter, SnapshotCollector, parse_listen
from tests.ui.fakes import (
    CO_TENANT_BYTES,
    ENGINE_ID,
    H100_TOTAL_BYTES,
    FakeSource,
    llama_ledger,
    llama_snapshot,
)

MIB = 1 << 20


@dataclass(frozen=True)
class _Finding:
    rule: str
    severity: str


def scrape(collector: SnapshotCollector) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """{(sample name, sorted labels): value} of one exposition, parsed as Prometheus would."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    page = generate_latest(registry).decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(page)
        for sample in family.samples
    }


def value(samples: dict, metric: str, /, **labels: str) -> float:
    return samples[(metric, tuple(sorted(labels.items())))]


def rank0(**extra: str) -> dict[str, str]:
    return {"engine": ENGINE_ID, "rank": "dp0-tp0-pp0", "gpu": "0", **extra}


@pytest.fixture(scope="module")
def co_tenant_samples() -> dict:
    collector = SnapshotCollector(FakeSource(llama_snapshot(co_tenant_gpu=3)), node="node-a", findings=None)
    assert collector.refresh()
    return scrape(collector)


def test_gpu_memory_is_served_in_bytes_with_gpu_uuid_and_name(co_tenant_samples: dict) -> None:
    labels = {"gpu": "3", "uuid": "GPU-00000003-fake", "name": "NVIDIA H100 80GB HBM3"}
    assert value(co_tenant_samples, "kvtop_gpu_memory_total_bytes", **labels) == 81559 * MIB == 85_520_809_984
    assert value(co_tenant_samples, "kvtop_gpu_memory_reserved_bytes", **labels) == 512 * MIB
    assert value(co_tenant_samples, "kvtop_gpu_memory_used_bytes", **labels) == 84_545_891_205
    assert value(co_tenant_samples, "kvtop_gpu_memory_free_bytes", **labels) == 438_047_867


def test_predicted_rows_add_up_to_the_predicted_worker_beside_the_reserved_bytes(co_tenant_samples: dict) -> None:
    ledger = llama_ledger()
    rows = {
        dict(labels)["component"]: sample
        for (name, labels), sample in co_tenant_samples.items()
        if name == "kvtop_rank_predicted_bytes" and dict(labels)["gpu"] == "0"
    }
    weights = sum(rows[c] for c in ("embedding", "attention", "mlp", "norms", "lm_head"))
    assert weights == ledger.weights_bytes == 17_640_734_720
    # the rows are the explained ledger's (one byte view with the waterfall): SGLang's pool sized with the
    # co-tenant's 6 GiB gone from the least free GPU, 6 GiB × mfs 0.818 ÷ 40,960 B = 128,660 tokens fewer
    assert ledger.ranks[0].kv_pool_bytes == 51_436_994_560  # the clean pool
    assert rows["kv_pool"] == 51_436_994_560 - 128_660 * 40_960 == 46_167_080_960
    assert rows["req_to_token"] == 134_316_048  # sized by requests, not by free memory
    squeezed = llama_ledger(measured=MeasuredInputs(free_before_load_bytes=H100_TOTAL_BYTES - GIB - CO_TENANT_BYTES))
    assert rows["reserve"] == squeezed.ranks[0].reserve_bytes - 134_316_048
    # SGLang fills the memory free before load: the clean rows summed to the GPU's total + 27,525 B of page
    # rounding (85,520,837,509); with 6 GiB less free they sum to 6 GiB less, within the same rounding
    # the context is the worker's: the measured 1 GiB before load (total − free) less the 512 MiB NVML v2 says the
    # driver reserves, which `kvtop_gpu_memory_reserved_bytes` exports (before: in `context` too, counted twice)
    assert rows["context"] == GIB - 512 * MIB
    reserved = value(co_tenant_samples, "kvtop_gpu_memory_reserved_bytes", gpu="0", uuid="GPU-00000000-fake",
                     name="NVIDIA H100 80GB HBM3")  # fmt: skip
    assert sum(rows.values()) == 79_078_397_837 - 512 * MIB  # RankView.worker_prediction.worker_bytes
    assert abs(sum(rows.values()) + reserved - (H100_TOTAL_BYTES - CO_TENANT_BYTES)) < 64 << 10


def test_token_capacity_by_source_and_unexplained_bytes(co_tenant_samples: dict) -> None:
    assert value(co_tenant_samples, "kvtop_rank_token_capacity", **rank0(source="clean")) == 1_255_785
    # "predicted" is what the header, the ledger, the findings and the planner call predicted: the clean
    # figure with the co-tenant's cost applied (SGLang's arithmetic for 6 GiB less free: −128,660)
    assert value(co_tenant_samples, "kvtop_rank_token_capacity", **rank0(source="predicted")) == 1_255_785 - 128_660
    # the 6 GiB co-tenant on GPU 3 shrank every rank's live pool (SGLang sizes by the tightest rank)
    assert value(co_tenant_samples, "kvtop_rank_token_capacity", **rank0(source="live")) == 1_127_125
    # the worker is 438,086,664 B below its predicted (explained) worker: the fake's 2 GiB of reserve not yet
    # claimed, less the 512 MiB driver reserved NVML keeps out of it, less the 1,172,526,072 B SGLang's reserve
    # shrank by with 6 GiB less free (clean 15,369,366,405 − 14,196,840,333): under the graphs + activations
    # reserve, so free memory, nothing unexplained (before the one byte view: 7,417,397,248 B below the clean
    # prediction, 6 GiB of it reconciled by a second path)
    assert value(co_tenant_samples, "kvtop_rank_unexplained_bytes", **rank0()) == 0
    assert value(co_tenant_samples, "kvtop_rank_kv_bytes_per_token", **rank0()) == 40_960
    assert value(co_tenant_samples, "kvtop_rank_kv_usage_ratio", **rank0()) == pytest.approx(0.42)


def test_foreign_bytes_are_served_on_the_co_tenant_gpu_only(co_tenant_samples: dict) -> None:
    gpu3 = {"engine": ENGINE_ID, "rank": "dp0-tp3-pp0", "gpu": "3"}
    assert value(co_tenant_samples, "kvtop_rank_observed_bytes", **gpu3, kind="foreign") == CO_TENANT_BYTES
    assert value(co_tenant_samples, "kvtop_rank_observed_bytes", **rank0(kind="foreign")) == 0
    assert value(co_tenant_samples, "kvtop_rank_observed_bytes", **gpu3, kind="process") == 78_103_440_261


def test_a_lost_gpu_has_a_state_and_no_memory_numbers() -> None:
    collector = SnapshotCollector(FakeSource(llama_snapshot(lost_gpu=5)), node="node-a")
    collector.refresh()
    samples = scrape(collector)
    assert value(samples, "kvtop_gpu_info", gpu="5", uuid="", name="NVIDIA H100 80GB HBM3", state="lost") == 1
    gpus = {dict(labels)["gpu"] for (name, labels) in samples if name == "kvtop_gpu_memory_total_bytes"}
    assert gpus == {"0", "1", "2", "3", "4", "6", "7"}
    assert (
        value(
            samples,
            "kvtop_gpu_memory_total_bytes",
            gpu="4",
            uuid="GPU-00000004-fake",
            name="NVIDIA H100 80GB HBM3",
        )
        == H100_TOTAL_BYTES
    )


def test_findings_are_counted_by_rule_and_severity() -> None:
    findings = (
        _Finding("co_tenant", "warning"),
        _Finding("co_tenant", "warning"),
        _Finding("gpu_lost", "error"),
    )
    collector = SnapshotCollector(
        FakeSource(llama_snapshot()), node="node-a", findings=lambda _snapshot: findings
    )
    collector.refresh()
    samples = scrape(collector)
    assert value(samples, "kvtop_findings", rule="co_tenant", severity="warning") == 2
    assert value(samples, "kvtop_findings", rule="gpu_lost", severity="error") == 1
    assert (
        value(
            samples,
            "kvtop_node_info",
            node="node-a",
            source="fake:llama-3-70b-tp8",
            driver_version="570.124.06",
            nvml_state="ok",
        )
        == 1
    )


def test_a_failed_collection_keeps_the_last_numbers_and_says_so() -> None:
    source = FakeSource(llama_snapshot(), RuntimeError("NVML: GPU is lost"))
    collector = SnapshotCollector(source, node="node-a", clock=lambda: 1234.0)
    assert collector.refresh() is True
    assert collector.refresh() is False
    samples = scrape(collector)
    assert value(samples, "kvtop_exporter_collect_success") == 0
    assert value(samples, "kvtop_exporter_last_success_timestamp_seconds") == 1234.0
    assert value(samples, "kvtop_rank_token_capacity", **rank0(source="predicted")) == 1_255_785
    assert collector.last_error == "RuntimeError: NVML: GPU is lost"


def test_http_scrapes_serve_the_held_snapshot_without_collecting_again() -> None:
    source = FakeSource(llama_snapshot())
    exporter = Exporter(
        SnapshotCollector(source, node="node-a"), parse_listen("127.0.0.1:0"), interval_s=3600
    )
    try:
        pages = [httpx.get(f"http://127.0.0.1:{exporter.port}/metrics", timeout=5) for _ in range(3)]
    finally:
        exporter.close()
    assert [page.status_code for page in pages] == [200, 200, 200]
    assert source.calls == 1  # collected once at start; three scrapes did not touch the source
    names = {family.name for family in text_string_to_metric_families(pages[-1].text)}
    assert {"kvtop_gpu_memory_used_bytes", "kvtop_rank_token_capacity", "kvtop_rank_predicted_bytes"} <= names


@pytest.mark.parametrize(
    ("text", "host", "port"),
    [
        ("127.0.0.1:9401", "127.0.0.1", 9401),
        (":9500", "127.0.0.1", 9500),
        ("[::1]:0", "::1", 0),
        ("localhost:1", "localhost", 1),
    ],
)
def test_loopback_listen_addresses_are_accepted(text: str, host: str, port: int) -> None:
    address = parse_listen(text)
    assert (address.host, address.port, address.loopback) == (host, port, True)


def test_a_remote_listen_address_needs_allow_remote() -> None:
    with pytest.raises(InputError, match="--allow-remote"):
        parse_listen("0.0.0.0:9401")
    assert parse_listen("0.0.0.0:9401", allow_remote=True).loopback is False
    with pytest.raises(InputError, match="HOST:PORT"):
        parse_listen("9401x")


def test_export_refuses_a_remote_address_with_one_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kvtop", "export", "--listen", "0.0.0.0:9401"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "kvtop: error: --listen: 0.0.0.0 is reachable from other machines; add --allow-remote to serve node metrics there"
    ]


def test_every_series_of_a_demo_node_says_demo_and_names_the_scenario_not_this_host() -> None:
    from kvtop.commands.node_source import DemoSource
    from kvtop.sources.scenario import load_scenario

    source = DemoSource(load_scenario("llama70b-tp8-foreign-gpu3"), clock=lambda: 1000.0)
    collector = SnapshotCollector(source)
    assert collector.refresh()
    samples = scrape(collector)
    assert len(samples) > 150
    assert [labels for (_, labels) in samples if ("demo", "1") not in labels] == []
    nodes = [dict(labels)["node"] for (name, labels) in samples if name == "kvtop_node_info"]
    assert nodes == ["demo:llama70b-tp8-foreign-gpu3"] != [socket.gethostname()]
    # the scenario's 6 GiB Jupyter kernel on GPU 3 (examples/scenarios/llama70b-tp8-foreign-gpu3.json)
    gpu3 = {"engine": "sglang:41000", "rank": "dp0-tp3-pp0", "gpu": "3", "kind": "foreign", "demo": "1"}
    assert value(samples, "kvtop_rank_observed_bytes", **gpu3) == 6 * 1024**3
    assert value(samples, "kvtop_exporter_collect_success", demo="1") == 1


def test_a_demo_node_given_a_node_name_keeps_it_and_still_says_demo() -> None:
    from kvtop.commands.node_source import DemoSource

    collector = SnapshotCollector(DemoSource.open("default"), node="gpu-node-17")
    assert collector.refresh()
    samples = scrape(collector)
    info = [dict(labels) for (name, labels) in samples if name == "kvtop_node_info"]
    assert [(i["node"], i["source"], i["demo"]) for i in info] == [
        ("gpu-node-17", "demo:llama70b-tp8-sglang", "1")
    ]


def test_a_live_node_carries_no_demo_label_and_is_named_by_its_host() -> None:
    collector = SnapshotCollector(FakeSource(llama_snapshot()))
    assert collector.refresh()
    samples = scrape(collector)
    assert [labels for (_, labels) in samples if "demo" in dict(labels)] == []
    assert (
        value(
            samples,
            "kvtop_node_info",
            node=socket.gethostname(),
            source="fake:llama-3-70b-tp8",
            driver_version="570.124.06",
            nvml_state="ok",
        )
        == 1
    )


def test_export_refuses_a_stale_after_within_the_interval_with_one_line() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "kvtop",
            "export",
            "--demo",
            "--listen",
            "127.0.0.1:0",
            "--interval",
            "5",
            "--stale-after",
            "4",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "kvtop: error: --stale-after: must be longer than --interval (5 s; got 4)"
    ]


def test_engine_info_says_which_engine_and_which_of_its_ranks_run_here() -> None:
    """dsv3-tp16-sglang-node1's launch: `--tp 16 --dist-init-addr 10.0.1.10:5000 --nnodes 2 --node-rank 1`;
    SGLang gives node rank 1 the TP ranks 8–15, and its co-tenant holds GPU 3 (clearly least free)."""
    from kvtop.commands.node_source import DemoSource

    collector = SnapshotCollector(DemoSource.open("dsv3-tp16-sglang-node1", clock=lambda: 1.0), node="h20-b")
    assert collector.refresh()
    (labels,) = [dict(key[1]) for key in scrape(collector) if key[0] == "kvtop_engine_info"]
    assert {k: labels[k] for k in ("kind", "model", "rendezvous", "nnodes", "node_rank", "serves_api", "role",
                                   "layout", "ranks_here", "ranks", "tightest_gpu")} == {
        "kind": "sglang", "model": "deepseek-ai/DeepSeek-V3", "rendezvous": "10.0.1.10:5000", "nnodes": "2",
        "node_rank": "1", "serves_api": "0", "role": "whole", "layout": "TP16", "ranks_here": "8",
        "ranks": "TP8–TP15", "tightest_gpu": "3",
    }  # fmt: skip
    assert labels["not_joined"] == "" and labels["demo"] == "1"


def test_engine_info_names_the_release_and_how_kvtop_knows_it() -> None:
    """An operator trial: nothing on /metrics said whose rules solved an engine, so a dashboard could not tell an
    engine read as 0.5.9 from one solved by the latest rules. The default demo's SGLang endpoint reports 0.5.9
    (examples/scenarios/llama70b-tp8-sglang.json `"version": "0.5.9"`); dsv3-tp16-sglang-node1 states none."""
    from kvtop.commands.node_source import DemoSource

    found = {}
    for scenario in ("default", "dsv3-tp16-sglang-node1"):
        collector = SnapshotCollector(DemoSource.open(scenario, clock=lambda: 1.0), node="n")
        assert collector.refresh()
        (labels,) = [dict(key[1]) for key in scrape(collector) if key[0] == "kvtop_engine_info"]
        found[scenario] = (labels["release"], labels["release_source"])
    assert found == {"default": ("0.5.9", "endpoint"), "dsv3-tp16-sglang-node1": ("latest", "not_stated")}


def test_the_predicted_rows_add_up_with_the_deployments_resident_terms() -> None:
    """docs/metrics.md: `sum by (engine, rank) (kvtop_rank_predicted_bytes)` is the rank's predicted resident
    bytes. With a draft, redundant experts or LoRA slots resident beside the weights, one row per feature holds
    them (before: the rows left them out, 7,905,763,328 B short on modern-deployment's SGLang rank 0 — its
    EAGLE3 draft's 682,917,888 B — the head as SGLang 0.5.23 builds it, engines/sglang/eagle3.py, equal to the
    engine's meta build of the SpecForge heads in the registry sweep; 809,000,960 B when it was read as a plain
    decoder — and 7,096,762,368 B of redundant experts)."""
    from kvtop.commands.node_source import DemoSource
    from kvtop.sources.exporter_series import predicted_rows

    for view in DemoSource.open("modern-deployment").collect().engines:
        rank = view.ranks[0]
        rows, worker = dict(predicted_rows(rank)), rank.worker_prediction
        assert worker is not None and sum(rows.values()) == worker.worker_bytes
    sglang = DemoSource.open("modern-deployment").collect().engines[0].ranks[0]
    rows = dict(predicted_rows(sglang))
    assert (rows["speculative"], rows["expert_parallel"]) == (682_917_888, 7_096_762_368)

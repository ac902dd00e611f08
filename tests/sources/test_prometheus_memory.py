"""A refresh types again only the answers whose samples changed (sources/prometheus_memory.py), and the
collector is held off while it builds them (kvtop/gc_pause.py).

The page is the recorded DCGM exporter page of one L40S (tests/data/samples/dcgm_metrics,
l40s-single-gpu-full.txt: FB_USED 0, FB_FREE 45459, FB_RESERVED 608 MiB); the second refresh is the same
page evaluated 5 s later (every stamp moved), the third the page with 1,000 MiB more used and less free.
"""

from __future__ import annotations

import gc
import threading

import httpx
import pytest

from kvtop.domain.cluster import GpuSource, NodeGpus
from kvtop.gc_pause import collector_paused
from kvtop.sources import prometheus
from kvtop.sources.prometheus import QUERIES, ClusterReader, PrometheusClient
from kvtop.sources.prometheus_memory import AnswerMemory, without_stamp
from tests.conftest import SAMPLES
from tests.sources.fake_prometheus import NOW, FakePrometheus, Target

MIB = 1 << 20
PAGE = (SAMPLES / "dcgm_metrics" / "l40s-single-gpu-full.txt").read_text()
LATER = "".join(
    line.replace("} 45459", "} 44459") if line.startswith("DCGM_FI_DEV_FB_FREE{")
    else line.replace("} 0", "} 1000") if line.startswith("DCGM_FI_DEV_FB_USED{") else line
    for line in PAGE.splitlines(keepends=True)
)  # fmt: skip


def test_only_answers_whose_samples_changed_are_typed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    assert [line for line in LATER.splitlines() if line not in PAGE.splitlines()] == [  # FB_FREE and FB_USED moved
        'DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-5b4e07f6-3a86-4340-039d-25f2a83cdc43",pci_bus_id="00000000:00:07.0",'
        'device="nvidia0",modelName="NVIDIA L40S",Hostname="gpu1-wl8sg",DCGM_FI_DRIVER_VERSION="595.58.03"} 44459',
        'DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-5b4e07f6-3a86-4340-039d-25f2a83cdc43",pci_bus_id="00000000:00:07.0",'
        'device="nvidia0",modelName="NVIDIA L40S",Hostname="gpu1-wl8sg",DCGM_FI_DRIVER_VERSION="595.58.03"} 1000',
    ]
    fakes = [
        FakePrometheus([Target("dcgm", "10.0.0.7:9400", PAGE)], now=NOW),
        FakePrometheus([Target("dcgm", "10.0.0.7:9400", PAGE)], now=NOW + 5),
        FakePrometheus([Target("dcgm", "10.0.0.7:9400", LATER)], now=NOW + 10),
    ]
    current = [fakes[0]]
    client = PrometheusClient("http://prometheus.test", transport=httpx.MockTransport(lambda r: current[0].handler(r)))
    reader = ClusterReader(client, clock=lambda: NOW)
    typed: list[str] = []
    vector = prometheus._vector
    monkeypatch.setattr(prometheus, "_vector", lambda payload, expr, **kw: typed.append(expr) or vector(payload, expr, **kw))

    first = reader.read().nodes[0].gpu_summary
    assert len(typed) == len(QUERIES)  # the first refresh types every answer
    # used + free + reserved MiB of the page
    assert first == NodeGpus(source=GpuSource.DCGM, count=1, used_bytes=0, total_bytes=46067 * MIB)

    typed.clear()
    current[0] = fakes[1]
    assert reader.read().nodes[0].gpu_summary == first
    assert typed == []  # 5 s later every stamp moved, no sample: nothing typed again

    current[0] = fakes[2]
    later = reader.read().nodes[0].gpu_summary
    assert typed == [QUERIES["dcgm_memory"]]  # only the sums of the GPU's memory changed
    assert later == NodeGpus(source=GpuSource.DCGM, count=1, used_bytes=1000 * MIB, total_bytes=46067 * MIB)


def test_only_the_evaluation_stamp_is_taken_out() -> None:
    body = (b'{"status":"success","data":{"resultType":"vector","result":['
            b'{"metric":{"instance":"a"},"value":[1750000100.125,"1"]},'
            b'{"metric":{"instance":"b","note":"\\"value\\":[1750000100.125,"},"value":[1750000100.125,"0"]},'
            b'{"metric":{"instance":"c"},"value":[1750000099,"1"]}]}}')  # fmt: skip
    plain = without_stamp(body)
    assert plain.count(b'"value":[,') == 2  # both samples stamped with the evaluation time
    assert b'"value":[1750000099,"1"]' in plain  # another stamp is kept: that answer is compared whole
    assert b'\\"value\\":[1750000100.125,' in plain  # a label holding the same text is not touched
    assert without_stamp(b'{"status":"success","data":{"resultType":"vector","result":[]}}').endswith(b"[]}}")


def test_a_refused_answer_is_never_remembered() -> None:
    memory = AnswerMemory(size=2)

    def refuse() -> list[tuple[dict[str, str], float]]:
        raise ValueError("malformed")

    with pytest.raises(ValueError):
        memory.typed(("up", False), b"{}", refuse)
    assert memory.typed(("up", False), b"{}", lambda: [({"job": "a"}, 1.0)]) == [({"job": "a"}, 1.0)]
    memory.typed(("b", False), b"1", lambda: [])
    memory.typed(("c", False), b"1", lambda: [])  # the oldest ("up") leaves: at most `size` remembered
    assert memory.typed(("up", False), b"{}", lambda: [({"job": "new"}, 0.0)]) == [({"job": "new"}, 0.0)]


def test_the_collector_is_held_off_until_the_last_pause_ends() -> None:
    assert gc.isenabled()
    inner_started, outer_may_end = threading.Event(), threading.Event()

    def other_thread() -> None:
        with collector_paused():
            inner_started.set()
            outer_may_end.wait(5)

    with collector_paused():
        assert not gc.isenabled()
        thread = threading.Thread(target=other_thread)
        thread.start()
        inner_started.wait(5)
    assert not gc.isenabled()  # the other thread's pause still runs
    outer_may_end.set()
    thread.join(5)
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # never turned on when it was off before
    finally:
        gc.enable()

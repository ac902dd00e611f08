"""Each node's GPUs as the node list reads them: per-node sums Prometheus computes (`GPU_SUMMARY_QUERIES`),
and every GPU only with `gpus=True` (`kvtop cluster --gpus`).

Pages: the recorded DCGM pages of tests/data/samples/dcgm_metrics, kvtop's exporter page of the Llama-3-70B
TP8 node (tests/ui/fakes.py), and DCGM pages written here from the recorded L40S and A30 MIG lines (more
GPUs on one host, a second MIG instance). Expected figures are the pages' own numbers, summed by hand.
tests/integration/test_prometheus_server.py checks the same sums against a real Prometheus.
"""

from __future__ import annotations

import re

import pytest

from kvtop.domain.cluster import ClusterNode, GpuSource, NodeGpus
from kvtop.sources.prometheus_gpus import GPU_LIST_QUERIES, GPU_SUMMARY_QUERIES
from tests.conftest import SAMPLES
from tests.sources.fake_prometheus import FakePrometheus, Target
from tests.sources.test_prometheus import kvtop_page, node, page_sums, read

MIB = 1 << 20
DCGM = SAMPLES / "dcgm_metrics"
L40S = (DCGM / "l40s-single-gpu-full.txt").read_text()
MIXED = (DCGM / "mixed-rtx2000ada-a30mig-lowercase-hostname-fragment.txt").read_text()


def l40s_gpus(count: int, hostname: str) -> str:
    """The recorded L40S page's three FB lines for GPUs 0…count-1 of one host (each GPU's figures as recorded)."""
    lines = [line for line in L40S.splitlines() if line.startswith("DCGM_FI_DEV_FB_")]
    out = []
    for gpu in range(count):
        for line in lines:
            out.append(line.replace('gpu="0"', f'gpu="{gpu}"').replace("gpu1-wl8sg", hostname)
                       .replace('device="nvidia0"', f'device="nvidia{gpu}"'))  # fmt: skip
    return "\n".join(out) + "\n"


def a30_two_mig_instances() -> str:
    """The recorded A30 MIG instance (GPU_I_ID 3, FB_FREE 2207 MiB) and a second one on the same GPU, each with
    FB_USED: DCGM reports memory per MIG instance."""
    (free,) = [line for line in MIXED.splitlines() if line.startswith("DCGM_FI_DEV_FB_FREE") and 'gpu="2"' in line]
    second = free.replace('GPU_I_ID="3"', 'GPU_I_ID="5"').replace("} 2207", "} 4000")
    used = [line.replace("DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_USED").rsplit(" ", 1)[0] + f" {mib}"
            for line, mib in ((free, 3717), (second, 1924))]  # fmt: skip
    return "\n".join([free, second, *used]) + "\n"


def summary(view_node: ClusterNode) -> NodeGpus:
    assert view_node.gpu_summary is not None
    return view_node.gpu_summary


def test_kvtop_speaks_for_a_node_dcgm_also_reports() -> None:
    page = kvtop_page("gpu1-wl8sg", co_tenant_gpu=3)
    fake = FakePrometheus([Target("kvtop", "10.0.0.7:9401", page), Target("dcgm", "10.0.0.7:9400", L40S)])
    both = node(read(fake), "gpu1-wl8sg")
    served = page_sums(page, "kvtop_gpu_memory_used_bytes", "kvtop_gpu_memory_total_bytes")
    assert summary(both) == NodeGpus(source=GpuSource.KVTOP, count=8, used_bytes=served["kvtop_gpu_memory_used_bytes"],
                                     total_bytes=8 * 81559 * MIB)  # fmt: skip
    assert [t.instance for t in both.targets] == ["10.0.0.7:9400", "10.0.0.7:9401"]
    assert not any("DCGM reports" in note for note in both.notes)  # DCGM's one GPU is one of kvtop's eight


def test_dcgm_counting_more_gpus_than_kvtop_is_said() -> None:
    fake = FakePrometheus([
        Target("kvtop", "10.0.0.7:9401", kvtop_page("gpu1-wl8sg")),
        Target("dcgm", "10.0.0.7:9400", l40s_gpus(10, "gpu1-wl8sg")),
    ])  # fmt: skip
    mixed = node(read(fake), "gpu1-wl8sg")
    assert (summary(mixed).source, summary(mixed).count) == (GpuSource.KVTOP, 8)
    assert "DCGM reports 10 GPUs, kvtop's exporter 8: the node's GPU figures are kvtop's (kvtop cluster --gpus lists each)" in mixed.notes
    listed = node(read(fake, gpus=True), "gpu1-wl8sg").gpus or ()
    assert [(g.gpu, g.source) for g in listed][-3:] == [("7", GpuSource.KVTOP), ("8", GpuSource.DCGM), ("9", GpuSource.DCGM)]


def test_a_dcgm_node_sums_its_gpus_and_counts_a_mig_gpu_once() -> None:
    fake = FakePrometheus([
        Target("dcgm", "10.0.0.8:9400", l40s_gpus(3, "l40s-host")),
        Target("dcgm", "10.0.0.9:9400", a30_two_mig_instances().replace("dcgm-exporter-wwwjh", "a30-host")),
    ])  # fmt: skip
    view = read(fake)
    # three L40S: used 0, free 45459, reserved 608 MiB each
    assert summary(node(view, "l40s-host")) == NodeGpus(source=GpuSource.DCGM, count=3, used_bytes=0,
                                                        total_bytes=3 * (45459 + 608) * MIB)  # fmt: skip
    # one A30 with two MIG instances: used 3717 + 1924, free 2207 + 4000 MiB, no reserved series
    assert summary(node(view, "a30-host")) == NodeGpus(source=GpuSource.DCGM, count=1, used_bytes=(3717 + 1924) * MIB,
                                                       total_bytes=(3717 + 1924 + 2207 + 4000) * MIB)  # fmt: skip


PAGES = {
    "dcgm pages": [Target("dcgm", f"10.0.1.{i}:9400", (DCGM / name).read_text())
                   for i, name in enumerate(sorted(p.name for p in DCGM.glob("*.txt")))],  # fmt: skip
    "kvtop, a co-tenant": [Target("kvtop", "10.0.2.1:9401", kvtop_page("node-a", co_tenant_gpu=3))],
    "kvtop, a lost GPU": [Target("kvtop", "10.0.2.2:9401", kvtop_page("node-l", lost_gpu=5))],
    "kvtop and dcgm on one host": [Target("kvtop", "10.0.0.7:9401", kvtop_page("gpu1-wl8sg")),
                                   Target("dcgm", "10.0.0.7:9400", L40S)],  # fmt: skip
}


@pytest.mark.parametrize("targets", PAGES.values(), ids=PAGES.keys())
def test_the_sums_are_those_of_every_gpu_listed(targets: list[Target]) -> None:
    """Prometheus' per-node sums (the node list) against kvtop's own join of every GPU's series (--gpus)."""
    view = read(FakePrometheus(targets), gpus=True)
    assert view.nodes
    for each in view.nodes:
        listed = each.gpus or ()
        both = [g for g in listed if g.used_bytes is not None and g.total_bytes is not None]
        expected = NodeGpus(
            source=listed[0].source, count=len(listed), lost=sum(g.lost for g in listed),
            used_bytes=sum(g.used_bytes or 0 for g in both) if both else None,
            total_bytes=sum(g.total_bytes or 0 for g in both) if both else None,
        )  # fmt: skip
        assert summary(each) == expected, each.name


def test_the_refresh_reads_per_node_sums_not_every_gpu() -> None:
    fake = FakePrometheus([Target("kvtop", "10.0.2.1:9401", kvtop_page("node-a"))])
    read(fake)
    assert not set(fake.queries) & set(GPU_LIST_QUERIES.values())
    # eight GPUs × five series (four figures and kvtop_gpu_info) answered as three: one count, two sums
    assert [len(fake.answer(key)) for key in GPU_SUMMARY_QUERIES] == [1, 2, 0, 0, 0]
    assert len(fake.answer("gpu")) + len(fake.answer("gpu_state")) == 8 * 5


def lying_l40s_page() -> str:
    """The recorded L40S page's FB lines for four GPUs of one host, the figures replaced: GPU 0 used -5 and
    free NaN, GPU 1 free NaN, GPU 2 true (used 200, free 300, reserved 608 MiB), GPU 3 used -7 and free -9."""
    figures = {"0": ("-5", "NaN"), "1": ("100", "NaN"), "2": ("200", "300"), "3": ("-7", "-9")}
    lines = []
    for line in l40s_gpus(4, "gpu1-wl8sg").splitlines():
        head = line.rsplit(" ", 1)[0]
        gpu = re.search(r'gpu="(\d)"', head).group(1)  # type: ignore[union-attr]
        used, free = figures[gpu]
        lines.append(f"{head} {used if 'FB_USED' in head else free if 'FB_FREE' in head else '608'}")
    return "\n".join(lines) + "\n"


def test_a_gpu_figure_that_cannot_be_true_is_named_and_never_summed() -> None:
    """Before: Prometheus summed every GPU's figures, so a -5 MiB or NaN sample moved the node's sum unseen."""
    view = read(FakePrometheus([Target("dcgm", "10.0.0.7:9400", lying_l40s_page())]))
    # only GPU 2 reports a true used and free: 200 MiB used of 200 + 300 + 608 MiB
    assert summary(node(view, "gpu1-wl8sg")) == NodeGpus(source=GpuSource.DCGM, count=4, used_bytes=200 * MIB,
                                                         total_bytes=(200 + 300 + 608) * MIB)  # fmt: skip
    # GPU 0's NaN free follows its negative used (`or`): not named, and not summed either
    assert sorted((s.query, s.lie.value, s.value) for s in view.ignored) == [
        ("gpu_lies", "nan", "nan"), ("gpu_lies", "negative", "-5"), ("gpu_lies", "negative", "-7"),
        ("gpu_lies", "negative", "-9"),
    ]  # fmt: skip
    assert "gpu_lies sample of 10.0.0.7:9400 -5 is negative: not used" in node(view, "gpu1-wl8sg").notes

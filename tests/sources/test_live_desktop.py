"""A live node under WSL2 knows a desktop shares its GPUs: the source reads the kernel's version string (here a fake
/proc/version, tests/data/host/SOURCES.md), the observation carries it, and every prediction of the node holds the
fact `plan --desktop` states, measured, with its origin (`MeasuredInputs.desktop_seen`)."""

from __future__ import annotations

from pathlib import Path

from kvtop.commands.node_source import LiveSource
from kvtop.commands.render_snapshot import snapshot_json, snapshot_text
from kvtop.domain.calibration.estimate import preload_estimate
from kvtop.domain.calibration.host_memory import DESKTOP_HELD_BYTES
from kvtop.domain.gpu_total_origin import GpuTotalOrigin
from kvtop.domain.host_desktop import DesktopEvidence
from kvtop.sources.host_desktop import read_host_desktop
from kvtop.sources.nvml import NvmlSource
from tests.data_paths import DATA
from tests.fakes.fake_process_table import two_engine_node
from tests.sources.test_live import CountingLoader, fake_nvml_of, refused

WSL2_PATH = DATA / "host" / "proc_version_wsl2"
SENTENCE = ("a desktop (Windows, WSL2) may hold memory on any GPU of this node, read from /proc/version: "
            "5.15.167.4-microsoft-standard-WSL2")


def _source(proc_version: Path, dxg: Path) -> LiveSource:
    node, table = two_engine_node()
    return LiveSource(nvml=NvmlSource(nvml_module=fake_nvml_of(node)), table=table, model_loader=CountingLoader(),
                      http_client=refused(), desktop_reader=lambda: read_host_desktop(proc_version, dxg))  # fmt: skip


def test_a_wsl2_node_predicts_with_the_desktop_it_read(tmp_path: Path) -> None:
    """The recorded two-engine node (vLLM serving gpt-oss-120b on an A100) read with WSL2's kernel string: the
    observation says the desktop and where it was read; the clean and the explained ledger hold it as `--desktop`
    does, and the plan's desktop sentence says its origin. The newest vLLM (0.34.0) sizes from the free memory at its
    start, so the desktop's share is charged at the low end; and under WSL2 CUDA's total is the card's whole memory, NVML's total (`GpuTotalOrigin.WSL2`), not NVML
    v2's total less the driver's reserved that the same node with no desktop shown (a stock kernel string) sizes from,
    so vLLM's share of the larger total holds more tokens."""
    wsl = _source(WSL2_PATH, tmp_path / "dxg").collect()
    linux = _source(DATA / "host" / "proc_version_ubuntu", tmp_path / "dxg").collect()
    desktop = wsl.observation.desktop
    assert desktop is not None and desktop.evidence is DesktopEvidence.PROC_VERSION and desktop.sentence == SENTENCE
    assert linux.observation.desktop is None
    vllm, plain = wsl.engines[1], linux.engines[1]
    assert vllm.ledger is not None and plain.ledger is not None and vllm.explained is not None
    for ledger in (vllm.ledger, vllm.explained):
        assert ledger.measured.desktop and ledger.measured.desktop_seen == desktop
    assert not plain.ledger.measured.desktop and plain.ledger.measured.desktop_seen is None
    assert vllm.ledger.measured.wsl2 and vllm.ledger.measured.gpu_total_origin is GpuTotalOrigin.WSL2
    assert not plain.ledger.measured.wsl2 and plain.ledger.measured.cuda_total_bytes is not None
    assert vllm.ledger.engine_total_bytes == vllm.ledger.gpu_total_bytes == plain.ledger.gpu_total_bytes
    assert plain.ledger.engine_total_bytes == plain.ledger.measured.cuda_total_bytes < plain.ledger.gpu_total_bytes
    assert vllm.ledger.token_capacity > plain.ledger.token_capacity
    estimate = preload_estimate(vllm.ledger)
    # the newest vLLM (0.34.0) sizes its extensible KV cache from the free memory at the worker's start
    # (extensible_kv_cache.py), which the desktop takes from: its fitted share comes off the low end (0.33.0 sized
    # from the total and said it only)
    assert estimate.desktop is not None and estimate.desktop.low_end_bytes == DESKTOP_HELD_BYTES
    assert estimate.desktop.note.endswith("(Windows desktop under WSL2, read from /proc/version: 5.15.167.4-microsoft-standard-WSL2)")
    assert preload_estimate(plain.ledger).desktop is None


def test_the_snapshot_says_the_desktop_fact_with_its_origin(tmp_path: Path) -> None:
    snapshot = _source(WSL2_PATH, tmp_path / "dxg").collect()
    assert SENTENCE in snapshot_text(snapshot).splitlines()
    assert snapshot_json(snapshot)["desktop"] == {"evidence": "proc_version", "detail": "5.15.167.4-microsoft-standard-WSL2",
                               "sentence": SENTENCE}  # fmt: skip

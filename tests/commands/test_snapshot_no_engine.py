"""`kvtop snapshot` of a node with no engine: an H200 read live (session 49, tests/data/device/) printed
'kvtop snapshot · nvml · driver 580.159.04 · 1 GPUs · 0 engine(s)' and the foreign process, with nothing saying that
no engine was found (the dashboard says it). It now says one GPU in the singular and names the engines looked for."""

from __future__ import annotations

from kvtop.commands.render_snapshot import snapshot_text
from tests.ui.helpers import h200_snapshot


def test_no_engine_is_said_and_one_gpu_is_one():
    lines = snapshot_text(h200_snapshot()).splitlines()
    assert lines[0] == "kvtop snapshot · nvml · driver 580.159.04 · 1 GPU · 0 engines"
    # pid 524 holds 8802 MiB (nvidia-smi --query-compute-apps, tests/data/device/SOURCES.md) = 8.5957 GiB
    assert any(line.split()[:3] == ["0", "524", "co-tenant"] and "8.60" in line for line in lines)
    assert lines[-1] == "no SGLang, vLLM, LMDeploy, TensorRT-LLM or llama.cpp engine found on this node: nothing predicted"

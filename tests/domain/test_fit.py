"""smallest_fitting_layout(): a launch memory share that fits no layout is named as typed data (setting, value).

Meta-Llama-3-70B on H100 (79.65 GiB): at a share of 0.0001 each GPU gives about 8 MB, below 141 GB of bf16 weights
÷ 32 ranks = 4.4 GB, so no layout up to 32 GPUs fits; at the engine's own share TP 2 is the fewest that do (65.71 GiB
of weights per rank; TP 1's 131 GiB is over the whole GPU).
"""

from __future__ import annotations

import pytest

from kvtop.domain.fit import DroppedShare, launch_share, smallest_fitting_layout
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

H100 = 81559 << 20
LLAMA_70B = CONFIGS / "meta-llama--Meta-Llama-3-70B.json"
# vLLM pinned before v0.29.0: from there the V2 runner's measured CUDA graphs come on top of what its profile held
# (3.6 GiB together at TP 2, v2_graphs.py), which leaves TP 2 under the 8,192-token context at the central estimate;
# the layout search is what these tests check, not that release's charge
RELEASE = {"vllm": ["--engine-version", "0.28.0"], "sglang": []}


@pytest.mark.parametrize(
    ("engine", "flag", "setting", "gpus"),
    # SGLang's own share at TP 2 is 0.828 ((81,559 − 14,032 MiB reserve) ÷ 81,559 MiB): 65.95 GiB for 65.71 GiB of
    # weights does not hold a pool (checked below with predict), so its fewest GPUs are 4
    [("vllm", "--gpu-memory-utilization", "gpu_memory_utilization", 2),
     ("sglang", "--mem-fraction-static", "mem_fraction_static", 4)],
)  # fmt: skip
def test_a_share_that_fits_nowhere_is_the_setting_and_its_value(
    engine: str, flag: str, setting: str, gpus: int
) -> None:
    model = load_model(str(LLAMA_70B))
    ledger = predict(model, parse_flags(engine, [*RELEASE[engine], flag, "0.0001"]), gpu_total_bytes=H100)
    assert not ledger.engine.fits
    found = smallest_fitting_layout(ledger)
    assert found is not None
    assert found.dropped == DroppedShare(setting=setting, value=0.0001)
    assert (found.gpus, found.settings.tp, launch_share(found.settings, setting)) == (gpus, gpus, None)
    fewer = predict(model, parse_flags(engine, [*RELEASE[engine], "--tp", str(gpus // 2)]), gpu_total_bytes=H100)
    assert not fewer.engine.fits  # at the engine's own share, half the GPUs do not fit


def test_a_launch_that_fits_somewhere_drops_nothing() -> None:
    """At the engine's own share TP 1 does not fit (131 GiB of weights) and TP 2 does: nothing dropped."""
    ledger = predict(load_model(str(LLAMA_70B)), parse_flags("vllm", RELEASE["vllm"]), gpu_total_bytes=H100)
    found = smallest_fitting_layout(ledger)
    assert found is not None and (found.gpus, found.dropped) == (2, None)


def test_launch_share_reads_only_a_share() -> None:
    settings = parse_flags("vllm", ["--gpu-memory-utilization", "0.85", "--tensor-parallel-size", "2"])
    assert launch_share(settings, "gpu_memory_utilization") == 0.85
    assert launch_share(settings, "mem_fraction_static") is None  # another engine's share, unset
    with pytest.raises(TypeError, match="tp is no memory share of LaunchSettings"):
        launch_share(settings, "tp")

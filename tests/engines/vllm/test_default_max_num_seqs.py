"""vLLM's default max_num_seqs follows the engine era, and the plan's max running requests and the profiling run's
batch read the one value (operator trial, I1: a v0.7.3 plan of DeepSeek-R1 on H200 showed "Max running reqs 1,024"
beside its activation term's "V0 defaults: 256 seqs").

Expected values from vLLM's own code: V0 `EngineArgs.max_num_seqs = 256` (vllm/engine/arg_utils.py, v0.7.3); from
v0.8.0 `_set_default_args_v1` sets 1024 on a GPU of ≥ 70 GiB whose name has no "a100", else 256 (the same rule in
`get_batch_defaults`, v0.13.0 and v0.33.0)."""

from __future__ import annotations

import pytest

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.profile_run import batch_limits
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS

R1 = str(CONFIGS / "deepseek-ai--DeepSeek-R1.json")


@pytest.mark.parametrize(("release", "gpu", "seqs"), [
    ("0.7.3", "H200", 256),  # V0: 256 whatever the GPU
    ("0.8.0", "H200", 1024),  # V1: 143,771 MiB ≥ 70 GiB, not an A100
    ("0.13.0", "H200", 1024),
    ("0.13.0", "A100-80GB", 256),  # "a100" in the device name
])  # fmt: skip
def test_the_plans_max_running_requests_and_the_profiled_batch_agree(release: str, gpu: str, seqs: int) -> None:
    settings = parse_flags("vllm", ["--tensor-parallel-size", "8"]).model_copy(update={"engine_version": release})
    total = gpu_total_bytes(gpu)
    ledger = predict(load_model(R1), settings, gpu_total_bytes=total, gpu_name=gpu)
    assert ledger.engine.max_running_requests == seqs
    version = ResolvedVersion(text=release)
    inputs = CalibrationInputs(model=None, settings=settings, layout=ParallelLayout(tp=8), gpu_total_bytes=total,
                               gpu_name=gpu, context_length=8192, version=version, weights_bytes=0)  # fmt: skip
    assert batch_limits(inputs)[1] == seqs


def test_a_stated_max_num_seqs_wins_in_every_era() -> None:
    settings = parse_flags("vllm", ["--tensor-parallel-size", "8", "--max-num-seqs", "64"])
    ledger = predict(load_model(R1), settings.model_copy(update={"engine_version": "0.7.3"}),
                     gpu_total_bytes=gpu_total_bytes("H200"), gpu_name="H200")  # fmt: skip
    assert ledger.engine.max_running_requests == 64

"""`--load-format runai_streamer`: the Run:ai streamer builds the same model and copies the same safetensors tensors into
it (RunaiModelStreamerLoader: v0.8.0 model_loader/loader.py:1424-1441; its buffer on the host, weight_utils.py
`device="cpu"` unless `distributed`, v0.18.0 :893-911), so the plan is the one without it. The end-to-end figure is
the calibration record `file69641025864-gemma-4-31b-it-fp8-rtxpro6000-cloudrun-v0172dev` (planned as 0.18.0):
'Model loading took 31.47 GiB', 'GPU KV cache size: 124,704 tokens'.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from tests.cli_in_process import Ran, run_kvtop
from tests.data_paths import CONFIGS

_LAUNCH = [
    "--dtype", "bfloat16", "--quantization", "fp8", "--kv-cache-dtype", "fp8", "--max-num-seqs", "8",
    "--gpu-memory-utilization", "0.95", "--max-model-len", "32767",
]  # fmt: skip


def _plan(release: str, *extra: str) -> Ran:
    return run_kvtop("plan", "--engine", "vllm", "--engine-version", release, "--gpu", "RTXPRO6000",
                     "--model", str(CONFIGS / "heldout/wave5/google--gemma-4-31B-it.json"), "--no-calibration-store", "--json",
                     *_LAUNCH, *extra)  # fmt: skip


def test_the_cloud_run_start_plans_as_without_the_streamer() -> None:
    streamed, default = _plan("0.18.0", "--load-format", "runai_streamer"), _plan("0.18.0")
    assert streamed.returncode == 0, streamed.stderr
    planned = int(json.loads(streamed.stdout)["token_capacity"])
    assert planned == int(json.loads(default.stdout)["token_capacity"])
    logged = 124_704
    assert abs(planned - logged) / logged < 0.025  # +2.05 %, as the record's note says without the flag


def test_a_release_before_the_streamer_refuses_it() -> None:
    completed = _plan("0.6.5", "--load-format", "runai_streamer")
    assert completed.returncode != 0
    assert "--load-format: not a load format of vLLM 0.6.5" in completed.stderr


def test_the_sharded_streamer_is_still_refused() -> None:
    with pytest.raises(InputError, match="not modelled"):
        parse_flags("vllm", ["--load-format", "runai_streamer_sharded"], strict=True)

"""NVIDIA Dynamo's vLLM runtime image sets `ENV VLLM_USE_FLASHINFER_SAMPLER=1` (ai-dynamo/dynamo
container/templates/vllm_runtime.Dockerfile): a launch that runs it samples with FlashInfer, as a launch that sets the
variable itself does (sampler_path.py DYNAMO_RUNTIME_IMAGE), where vLLM's sampler is opt-in (v0.11.1 on, vllm#26859).

The figures are a real start's (tests/data/calibration/vllm.jsonl, dmvevents-dynamo-efa-rev2-llama-3.1-8b-h100-v0160;
dmvevents/awsome-inference-1 docs/evidence/multinode-2026-05-05-rev2/t12-decode-full.log): Llama-3.1-8B-Instruct on an
H100 (p5.48xlarge), vLLM 0.16.0 in an image over `nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.1`, `python3 -m dynamo.vllm
… --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}' --max-model-len 4096
--gpu-memory-utilization 0.85`; the log prints '[topk_topp_sampler.py:47] Using FlashInfer for top-p & top-k sampling.',
'Model loading took 14.99 GiB memory', 'Available KV cache memory: 50.35 GiB', 'GPU KV cache size: 412,496 tokens'.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.sampler_path import sampler_path
from tests.data_paths import CONFIGS

LLAMA_8B = CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"
LOGGED_TOKENS = 412_496
LOGGED_KV_GIB = 50.35
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.1"
WORKER = ("python3 -m dynamo.vllm --model meta-llama/Llama-3.1-8B-Instruct --disaggregation-mode prefill "
          "--kv-transfer-config '{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}' --max-model-len 4096 "
          "--gpu-memory-utilization 0.85")
H100 = "NVIDIA H100 80GB HBM3"


def _plan(capsys: pytest.CaptureFixture[str], command: str) -> dict[str, object]:
    assert main(["plan", "--json", "--no-calibration-store", "--model", str(LLAMA_8B), "--engine", "vllm",
                 "--engine-version", "0.16.0", "--gpu", "H100", "--cmd", command]) == 0  # fmt: skip
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_the_rev2_worker_in_dynamos_image_lands_on_its_log(capsys: pytest.CaptureFixture[str]) -> None:
    imaged = _plan(capsys, f"docker run --gpus all {IMAGE} {WORKER}")
    tokens = int(imaged["token_capacity"])  # type: ignore[call-overload]
    assert abs(tokens - LOGGED_TOKENS) / LOGGED_TOKENS < 0.01
    assert int(imaged["token_capacity_min"]) <= LOGGED_TOKENS <= int(imaged["token_capacity_max"])  # type: ignore[call-overload]
    assert abs(int(imaged["kv_budget_bytes"]) / 2**30 - LOGGED_KV_GIB) < 0.01 * LOGGED_KV_GIB  # type: ignore[call-overload]
    activation = next(t for t in imaged["terms"] if t["term"] == "activation")  # type: ignore[attr-defined]
    assert "Dynamo's vLLM runtime image sets ENV VLLM_USE_FLASHINFER_SAMPLER=1" in activation["basis"]
    # the same worker with no image is planned on the native sort's copies, more than 5 % short of the log
    bare = _plan(capsys, WORKER)
    assert (LOGGED_TOKENS - int(bare["token_capacity"])) / LOGGED_TOKENS > 0.05  # type: ignore[call-overload]


def test_the_launchs_own_value_wins_over_the_images() -> None:
    v016 = ResolvedVersion(text="0.16.0")
    assert sampler_path(v016, H100, None, IMAGE)[0] == "flashinfer"
    assert sampler_path(v016, H100, {"VLLM_USE_FLASHINFER_SAMPLER": "0"}, IMAGE)[0] == "native"
    # another image, or none, leaves the opt-in release's native default
    assert sampler_path(v016, H100, None, "vllm/vllm-openai:v0.16.0")[0] == "native"
    assert sampler_path(v016, H100)[0] == "native"


def test_only_dynamo_releases_after_the_env_was_added() -> None:
    # ai-dynamo/dynamo#5613 (merged 2026-01-23) added the ENV; Dynamo 0.8.1's vllm-runtime (vLLM 0.12.0, an opt-in
    # release) was built from container/Dockerfile.vllm without it, so it samples natively
    v012 = ResolvedVersion(text="0.12.0")
    assert sampler_path(v012, H100, None, "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.8.1")[0] == "native"
    assert sampler_path(v012, H100, None, "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.9.0-cuda13")[0] == "flashinfer"
    assert sampler_path(v012, H100, None, "nvcr.io/nvidia/ai-dynamo/vllm-runtime:latest")[0] == "flashinfer"

"""A launch in NVIDIA Dynamo's vllm-runtime image with no vLLM release stated says that the image's tag is Dynamo's
release, not vLLM's (#27, session 70 operator pass).

`--cmd "docker run … nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.9.0 python3 -m dynamo.vllm …"` planned under "vLLM latest"
(version not stated) and named the image only inside the sampler's term; an operator read the tag 0.9.0 beside
"vLLM latest" with nothing saying which vLLM the plan assumed. Dynamo's 0.9.0 ships an older vLLM (sampler_path.py:
vLLM 0.14.1), whose rules differ from the latest's (the V1 runner, not V2): Llama-3.1-8B at 8,192 tokens on an H100
plans 486,400 tokens at the latest rules and 445,728 at --engine-version 0.14.1. Expected: a not-modelled line naming
the image and asking for --engine-version; none once a release is given.
"""

from __future__ import annotations

import pytest

from tests.engines.measured_flags import plan_json

CMD = ("docker run --gpus all nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.9.0 python3 -m dynamo.vllm "
       "--model meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192")  # fmt: skip
BASE = ("--model", "llama-3.1-8b", "--gpu", "H100", "--cmd", CMD)


def test_the_image_tag_is_said_to_be_dynamo_s_release(capsys: pytest.CaptureFixture[str]) -> None:
    out = plan_json(capsys, BASE)
    assert out["version_source"] == "not_stated"
    said = [line for line in out["not_modelled"] if "Dynamo's image ships" in line]
    assert said == ["the vLLM release NVIDIA Dynamo's image ships (nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.9.0: its tag "
                    "0.9.0 is Dynamo's release, not vLLM's): not read; the plan takes vLLM's latest rules; give "
                    "--engine-version with the image's vLLM release"]  # fmt: skip


def test_a_stated_release_says_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    out = plan_json(capsys, BASE, "--engine-version", "0.14.1")
    assert not [line for line in out["not_modelled"] if "Dynamo's image ships" in line]

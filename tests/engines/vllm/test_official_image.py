"""The image a launch line runs (`docker run … vllm/vllm-openai:TAG`) is a launch fact: its tag names the release
where --engine-version does not, and from v0.9.0 through v0.11.0 its install decides the sampler's path, which the
release leaves to the install (kvtop/domain/engines/vllm/sampler_path.py IMAGE_FLASHINFER_ERAS).

Independent sources: the official image's docker/Dockerfile installs FlashInfer into the stage vllm-openai builds on,
linux/amd64 only (vllm-project/vllm docker/Dockerfile at 0000977e); flashinfer-ai/flashinfer#1180: the official image
(2025-06) logs 'Using FlashInfer for top-p & top-k sampling.'; V1's sampler disables FlashInfer >= 0.2.3 before v0.9.0
(vLLM 0.8.0 v1/sample/ops/topk_topp_sampler.py:28-42) and takes it from v0.9.0 (:33-38)."""

from __future__ import annotations

import pytest

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.sampler_path import sampler_path
from kvtop.domain.launch import parse_launch_command
from kvtop.domain.launch_tokens import container_image

RUN = "docker run --runtime nvidia --gpus all -v hf:/root/.cache/huggingface -p 8000:8000 --ipc=host"


@pytest.mark.parametrize(("command", "image", "version"), [
    (f"{RUN} vllm/vllm-openai:v0.11.0 --model Qwen/Qwen3-8B", "vllm/vllm-openai:v0.11.0", "0.11.0"),
    (f"{RUN} docker.io/vllm/vllm-openai:v0.10.1.1 Qwen/Qwen3-8B", "docker.io/vllm/vllm-openai:v0.10.1.1", "0.10.1.1"),
    (f"{RUN} vllm/vllm-openai:latest --model Qwen/Qwen3-8B", "vllm/vllm-openai:latest", None),  # no release named
    (f"sudo {RUN} vllm/vllm-openai:nightly --model Qwen/Qwen3-8B", "vllm/vllm-openai:nightly", None),
    ("vllm serve Qwen/Qwen3-8B", None, None),
])  # fmt: skip
def test_the_image_and_its_release(command: str, image: str | None, version: str | None) -> None:
    settings = parse_launch_command(command)
    assert settings is not None and settings.engine == "vllm"
    assert settings.image == image
    assert settings.engine_version == version
    assert settings.model == "Qwen/Qwen3-8B"


def test_a_typed_version_wins_over_the_tag() -> None:
    settings = parse_launch_command(f"{RUN} vllm/vllm-openai:v0.11.0 --model m --engine-version 0.10.0")
    assert settings is not None and settings.engine_version == "0.10.0"


def test_another_engines_image_is_kept_without_a_release() -> None:
    """SGLang's image runs its server module after it: the image is the last image-shaped word before it."""
    assert container_image(["docker", "run", "-v", "/data:/data", "lmsysorg/sglang:v0.5.3", "python3", "-m"]) == (
        "lmsysorg/sglang:v0.5.3"
    )
    assert container_image(["vllm", "serve"]) is None


@pytest.mark.parametrize(("version", "gpu", "image", "path"), [
    ("0.11.0", "H100", "vllm/vllm-openai:v0.11.0", "flashinfer"),
    ("0.9.2", "A100-80GB", "vllm/vllm-openai:v0.9.2", "flashinfer"),
    ("0.11.0", "H100", None, "either"),  # a pip install: FlashInfer is an extra (the wheel's METADATA) until v0.11.1
    ("0.8.5.post1", "H100", "vllm/vllm-openai:v0.8.5.post1", "either"),  # the image's FlashInfer version not read
    ("0.11.0", "GH200", "vllm/vllm-openai:v0.11.0", "either"),  # the arm64 image installs no FlashInfer
    ("0.11.2", "H100", "vllm/vllm-openai:v0.11.2", "native"),  # opt-in from v0.11.1 (vllm#26859)
])  # fmt: skip
def test_the_official_image_decides_the_sampler(version: str, gpu: str, image: str | None, path: str) -> None:
    found, why = sampler_path(ResolvedVersion(text=version), gpu, {}, image)
    assert found == path
    if path == "flashinfer":
        assert why.startswith("FlashInfer: the official image installs it (measured from the launch line")


def test_the_launch_env_still_wins() -> None:
    found, why = sampler_path(ResolvedVersion(text="0.11.0"), "H100", {"VLLM_USE_FLASHINFER_SAMPLER": "0"},
                              "vllm/vllm-openai:v0.11.0")  # fmt: skip
    assert found == "native" and "VLLM_USE_FLASHINFER_SAMPLER=0" in why

"""The image a launch line runs (`docker run … vllm/vllm-openai:TAG`) is a launch fact: its tag names the release
where --engine-version does not, and from v0.9.0 through v0.11.0 its install decides the sampler's path, which the
release leaves to the install (kvtop/domain/engines/vllm/sampler_path.py FLASHINFER_TAKEN_ERAS).

Independent sources: the official image's docker/Dockerfile installs FlashInfer into the stage vllm-openai builds on,
linux/amd64 only (vllm-project/vllm docker/Dockerfile at 0000977e); flashinfer-ai/flashinfer#1180: the official image
(2025-06) logs 'Using FlashInfer for top-p & top-k sampling.'; V1's sampler disables FlashInfer >= 0.2.3 before v0.9.0
(vLLM 0.8.0 v1/sample/ops/topk_topp_sampler.py:28-42) and takes it from v0.9.0 (:33-38)."""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.sampler_path import sampler_path
from kvtop.domain.launch_line import parse_launch_command
from kvtop.domain.launch_tokens import container_image, image_release, image_repository_and_tag
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from tests.conftest import CONFIGS

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
    ("0.10.2", "NVIDIA GH200 480GB", "vllm/vllm-openai:v0.10.2", "either"),  # NVML's name of the same arm64 host
    ("0.10.2", "gh200", "vllm/vllm-openai:v0.10.2", "either"),  # as typed to --gpu
    ("0.10.2", "NVIDIA GB200", "vllm/vllm-openai:v0.10.2", "either"),
    ("0.10.2", "NVIDIA H100 80GB HBM3", "vllm/vllm-openai:v0.10.2", "flashinfer"),  # NVML's name of an amd64 host's GPU
    ("0.11.2", "H100", "vllm/vllm-openai:v0.11.2", "native"),  # opt-in from v0.11.1 (vllm#26859)
])  # fmt: skip
def test_the_official_image_decides_the_sampler(version: str, gpu: str, image: str | None, path: str) -> None:
    found, why = sampler_path(ResolvedVersion(text=version), gpu, {}, image)
    assert found == path
    if path == "flashinfer":
        assert why.startswith("FlashInfer: the official image installs it (stated by the launch line's image")


def test_the_launch_env_still_wins() -> None:
    found, why = sampler_path(ResolvedVersion(text="0.11.0"), "H100", {"VLLM_USE_FLASHINFER_SAMPLER": "0"},
                              "vllm/vllm-openai:v0.11.0")  # fmt: skip
    assert found == "native" and "VLLM_USE_FLASHINFER_SAMPLER=0" in why


@pytest.mark.parametrize(("image", "repository", "tag"), [
    ("vllm/vllm-openai:v0.11.0", "vllm/vllm-openai", "v0.11.0"),
    ("registry.local:5000/vllm/vllm-openai", "registry.local:5000/vllm/vllm-openai", None),  # a port is no tag
    ("registry.local:5000/vllm/vllm-openai:v0.10.2", "registry.local:5000/vllm/vllm-openai", "v0.10.2"),
    ("vllm/vllm-openai@sha256:" + "0" * 64, "vllm/vllm-openai", None),  # a digest alone names no tag
])  # fmt: skip
def test_one_parser_of_the_image(image: str, repository: str, tag: str | None) -> None:
    """`docker run` reads `[registry[:port]/]repository[:tag][@digest]` (Docker's reference grammar): the tag is
    after the last ':' that has no '/' after it."""
    assert image_repository_and_tag(image) == (repository, tag)


def test_only_the_engines_release_image_names_a_release_in_the_plan() -> None:
    """The plan says the image states its release only where it is vLLM's release image with that tag: a registry's
    port (`host:5000/x`, no tag) or another repository tagged alike states none."""
    official = frozenset({"vllm/vllm-openai"})
    assert image_release("registry.local:5000/vllm/vllm-openai:v0.10.2", official) == "0.10.2"
    assert image_release("host:5000/mirror/0.10.2", official) is None
    assert image_release("my/fork:v0.10.2", official) is None
    model = model_from_config(json.loads((CONFIGS / "Qwen--Qwen3-8B.json").read_text()))
    for command, said in ((f"{RUN} vllm/vllm-openai:v0.10.2 --model m", True),
                          (f"{RUN} my/fork:v0.10.2 vllm serve m --engine-version 0.10.2", False)):  # fmt: skip
        settings = parse_launch_command(command)
        assert settings is not None and settings.engine_version == "0.10.2"
        detail = predict(model, settings, gpu_total_bytes=80 * 2**30, gpu_name="H100").version.detail
        assert ("is its tag" in detail) is said

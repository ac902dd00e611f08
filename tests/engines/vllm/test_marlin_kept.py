"""MXFP4's Marlin experts keep the WorkspaceManager's buffers through vLLM's profiled sampler from v0.17.0
(marlin_kept.py): `MarlinExperts.workspace_shapes` (fused_moe/fused_marlin_moe.py:664-694 at v0.17.1) over the
modular kernel's `_allocate_buffers` (modular_kernel.py:1140-1160), the expert width rounded up to 128 and the hidden
size to 256 (quantization/mxfp4.py:295-310).

gpt-oss-120b (hidden 2,880, expert width 2,880, top-4, bf16) on an RTX PRO 6000 (SM 12.0: Marlin whatever the
install) at v0.17.1, 8,192 tokens: workspace13 with the output 8,192 × 4 × max(2,944, 3,072) × 2 B, workspace2
8,192 × 4 × max(2 × 2,944, 3,072) × 2 B. Its start (search-index 56696032727, tests/data/calibration/vllm.jsonl)
printed 1.71 GiB of KV where the plan without the workspace gave 2.34.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.engines.vllm.marlin_kept import marlin_kept_bytes
from kvtop.domain.engines.vllm.sampler_peak import counted_sampler_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS

GPT_OSS_120B = load_config_file(CONFIGS / "openai--gpt-oss-120b.json")
TOKENS = 8192
EXPECTED = TOKENS * 4 * 3072 * 2 + TOKENS * 4 * 5888 * 2  # 587,202,560 B: 0.55 GiB


def _version(text: str) -> ResolvedVersion:
    return ResolvedVersion(text=text, source=VersionSource.FLAG, detail=f"--engine-version {text}")


def _kept(version: str, gpu: str) -> int:
    settings = parse_flags("vllm", ["--engine-version", version])
    return marlin_kept_bytes(GPT_OSS_120B, ParallelLayout(), _version(version), gpu, settings, TOKENS)


def test_the_kept_buffers_are_marlins_shapes() -> None:
    assert EXPECTED == 587_202_560
    assert _kept("0.17.1", "RTXPRO6000") == EXPECTED


def test_nothing_kept_before_the_modular_kernel_nor_on_hoppers_triton() -> None:
    assert _kept("0.16.0", "RTXPRO6000") == 0  # fused_marlin_moe's own caches, freed with the layer
    assert _kept("0.19.0", "H100") == 0  # Triton's experts from the wheel's vendored triton_kernels (mxfp4_backend.py)


def test_the_sampler_count_holds_them() -> None:
    settings = parse_flags("vllm", ["--engine-version", "0.17.1"])
    args = (GPT_OSS_120B, ParallelLayout(), _version("0.17.1"), "RTXPRO6000", TOKENS, 1024)
    with_settings = counted_sampler_bytes(*args, settings=settings)
    without = counted_sampler_bytes(*args, settings=settings.model_copy(update={"flags": {"mxfp4-backend": "triton"}}))
    assert with_settings is not None and without is not None
    assert with_settings - without == EXPECTED

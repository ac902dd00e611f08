"""vLLM's default context scales the config's positions by config.json's own rope, not only by a launch's
(rope_override.config_derived, read by `derived_or_positions` and the --max-model-len check).

Expected values: vLLM's code by hand — `_get_and_verify_max_len` multiplies the positions by the rope's `factor` for
every type but su, longrope and llama3 (v0.8.5 config.py:3048-3072, v0.11.0 config/model.py:1839-1863, v0.24.0
:2147-2177, v0.29.0 :2445-2469; yarn takes its original_max_position_embeddings first), and leaves the yarn variants
out too from v0.30.0 (v0.30.0 :2461-2492, v0.34.0 :2643-2678); `max_model_len = int(derived_max_model_len)` where none
is given. InternLM2.5-7B (MLC preset): 32,768 × dynamic 2.0 = 65,536; MiniCPM-2B (MLC preset): 65,536 × dynamic 4.0
= 262,144; InternLM3-8B-Instruct: 32,768 × dynamic 6.0 = 196,608; sarvam-105b (reconstructed): yarn 4,096 × 40 =
163,840 through v0.29.0, its 131,072 positions from v0.30.0.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.long_context import context_above
from kvtop.domain.launch import parse_flags
from kvtop.domain.refusals import AbovePositions
from kvtop.sources.hub import load_config_file
from tests.data_paths import DATA

HELDOUT = DATA / "configs" / "heldout"
INTERNLM25 = HELDOUT / "mlc--internlm2_5_7b.json"
MINICPM = HELDOUT / "mlc--minicpm_2b.json"
INTERNLM3 = HELDOUT / "wave3" / "internlm--internlm3-8b-instruct.json"
SARVAM = DATA / "configs" / "recon" / "recon--sarvamai--sarvam-105b.json"
RELEASES = ("0.8.5", "0.11.0", "0.24.0", "0.34.0")


def _context(path: Path, version: str, *flags: str) -> int:
    model = load_config_file(path)
    settings = parse_flags("vllm", ["--engine-version", version, *flags])
    return engine_rules("vllm").context_length(model, settings, ResolvedVersion(text=version))


@pytest.mark.parametrize("version", RELEASES)
@pytest.mark.parametrize(("path", "expected"), [(INTERNLM25, 65_536), (MINICPM, 262_144), (INTERNLM3, 196_608)])
def test_a_dynamic_rope_scales_the_default_context(path: Path, expected: int, version: str) -> None:
    assert _context(path, version) == expected


@pytest.mark.parametrize(("version", "expected"), [
    ("0.8.5", 163_840), ("0.24.0", 163_840), ("0.29.0", 163_840), ("0.30.0", 131_072), ("0.34.0", 131_072),
])  # fmt: skip
def test_yarn_is_scaled_through_v0_29_0_only(version: str, expected: int) -> None:
    assert _context(SARVAM, version) == expected


def test_a_stated_length_up_to_the_derived_one_is_not_refused() -> None:
    """InternLM2.5-7B at v0.24.0: --max-model-len 65,536 is within the derived 65,536; 65,537 is above it."""
    model = load_config_file(INTERNLM25)
    version = ResolvedVersion(text="0.24.0")

    def above(length: str) -> AbovePositions | None:
        settings = parse_flags("vllm", ["--engine-version", "0.24.0", "--max-model-len", length])
        return context_above(model, settings, version)

    assert above("65536") is None
    refused = above("65537")
    assert refused is not None and refused.positions == 65_536 and "dynamic" in refused.whose


def test_a_launch_rope_replaces_the_config_s() -> None:
    """--rope-scaling linear 1.0 at v0.11.0 replaces InternLM2.5's dynamic 2.0: 32,768 × 1.0."""
    assert _context(INTERNLM25, "0.11.0", "--rope-scaling", '{"rope_type": "linear", "factor": 1.0}') == 32_768


@pytest.mark.parametrize(("version", "expected"), [("0.29.0", 131_072), ("0.30.0", 40_960), ("0.34.0", 40_960)])
def test_a_launch_s_yarn_is_scaled_through_v0_29_0_only(version: str, expected: int) -> None:
    """Qwen3-8B (40,960 positions) with --hf-overrides' yarn × 4 over 32,768: 131,072 through v0.29.0 (v0.29.0
    config/model.py:2445-2469); from v0.30.0 `_get_and_verify_max_len` leaves every yarn variant out, the launch's
    rope_parameters as config.json's (v0.30.0 :2461-2492, v0.34.0 :2654-2678): the 40,960 positions."""
    rope = '{"rope_parameters": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}'
    assert _context(DATA / "configs" / "Qwen--Qwen3-8B.json", version, "--hf-overrides", rope) == expected

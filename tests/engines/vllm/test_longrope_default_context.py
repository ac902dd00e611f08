"""vLLM's default context for a longrope config: with no --max-model-len, `_get_and_verify_max_len` starts at the
config's `original_max_position_embeddings`, not its positions, from v0.11.1 (rope_override.longrope_default).

Expected values: vLLM's code by hand — v0.11.0 config/model.py:1870-1871 `max_model_len = int(derived_max_model_len)`
(the config's 131,072 positions: a longrope factor is never applied, :1847); v0.11.1/v0.11.2 :2112-2120, v0.12.0
:2231-2240, v0.13.0 :2147-2157, v0.34.0 :2687-2693 `getattr(hf_config, "original_max_position_embeddings", …)`, which
Phi-4-mini-instruct's and Phi-4-multimodal-instruct's config.json state at their top level as 4,096. The rope cache:
Phi3LongRoPEScaledRotaryEmbedding concatenates a short cache over the original positions and a long one over the
positions (v0.11.0 phi3_long_rope_scaled_rope.py:63-71): (4,096 + 131,072) rows × 96 (head_dim 3,072 / 24 = 128 ×
partial_rotary_factor 0.75) × 2 B (bf16) = 25,952,256 B.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtop.domain.calibration.estimate import calibration_inputs, planned_capacity
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.weights_held import rope_cache
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.sources.hub import load_config_file
from tests.data_paths import DATA

PHI4_MINI = DATA / "calibration" / "configs" / "microsoft--Phi-4-mini-instruct.json"
PHI4_MM = DATA / "configs" / "heldout" / "wave6d" / "microsoft--Phi-4-multimodal-instruct.json"
# MLC's presets of Phi-3.5-mini-instruct (longrope) and Phi-3.5-vision-instruct (the legacy type "su", which
# patch_rope_scaling / patch_rope_parameters rename longrope: v0.11.2 transformers_utils/config.py:422-424)
PHI35_MINI = DATA / "configs" / "heldout" / "mlc--phi-3_5.json"
PHI35_VISION = DATA / "configs" / "heldout" / "mlc--phi-3_5-vision.json"


def _context(path: Path, version: str, *flags: str) -> int:
    model = load_config_file(path)
    settings = parse_flags("vllm", ["--engine-version", version, *flags])
    return engine_rules("vllm").context_length(model, settings, ResolvedVersion(text=version))


def test_the_top_level_original_positions_are_read() -> None:
    """config.json: "original_max_position_embeddings": 4096 beside a rope_scaling block that states none."""
    for path in (PHI4_MINI, PHI4_MM, PHI35_MINI, PHI35_VISION):
        assert load_config_file(path).rope_original_positions == 4096


@pytest.mark.parametrize("path", [PHI4_MINI, PHI4_MM, PHI35_MINI, PHI35_VISION])
@pytest.mark.parametrize(("version", "expected"), [
    ("0.10.2", 131_072), ("0.11.0", 131_072), ("0.11.1", 4_096), ("0.12.0", 4_096), ("0.13.0", 4_096),
    ("0.34.0", 4_096),
])  # fmt: skip
def test_vllm_starts_a_longrope_model_at_its_original_positions(path: Path, version: str, expected: int) -> None:
    assert _context(path, version) == expected


def test_a_stated_length_stands() -> None:
    """`if max_model_len is None` guards the longrope default: a stated 16,384 (under the derived 131,072) is taken."""
    assert _context(PHI4_MINI, "0.34.0", "--max-model-len", "16384") == 16_384


def test_a_launch_rope_that_replaces_the_longrope_one_leaves_the_derived_length() -> None:
    """At v0.13.0 an `--hf-overrides` rope_parameters replaces config.json's longrope (patch_rope_parameters runs
    before it is set): a linear factor-2 rope derives 131,072 × 2 = 262,144 (:2127-2140), the default there."""
    overrides = '{"rope_parameters": {"rope_type": "linear", "factor": 2.0}}'
    assert _context(PHI4_MINI, "0.13.0", "--hf-overrides", overrides) == 262_144


def test_the_plan_holds_both_longrope_caches_and_plans_the_default_context() -> None:
    settings = parse_flags("vllm", ["--engine-version", "0.34.0"])
    plan = planned_capacity(load_config_file(PHI4_MINI), settings, gpu_total_bytes=gpu_total_bytes("H100"),
                            gpu_name="H100")  # fmt: skip
    assert plan.ledger.context_length == 4_096
    found = rope_cache(calibration_inputs(plan.ledger))
    assert found is not None and found[0] == 25_952_256


def test_the_plan_says_why_it_starts_at_the_original_positions() -> None:
    """The plan's note names the default and the longest --max-model-len: the derived length, the config's 131,072
    positions (a longrope factor is not applied to it, v0.34.0 config/model.py `rope_type not in ("su", "longrope",
    "llama3")`); no note where a length is stated or before v0.11.1."""
    def notes(version: str, *flags: str) -> str:
        settings = parse_flags("vllm", ["--engine-version", version, *flags])
        return " ".join(planned_capacity(load_config_file(PHI4_MINI), settings, gpu_total_bytes=gpu_total_bytes("H100"),
                                         gpu_name="H100").ledger.notes)  # fmt: skip

    assert "original_max_position_embeddings 4,096" in notes("0.34.0")
    assert "--max-model-len up to 131,072" in notes("0.34.0")
    assert "original_max_position_embeddings" not in notes("0.11.0")
    assert "original_max_position_embeddings" not in notes("0.34.0", "--max-model-len", "16384")

"""Phi-3's longrope cache on SGLang (rope_rows.longrope_rows, weights_held.rope_cache_of, rope_growth).

Expected by hand from SGLang's code: get_rope's `longrope` branch (0.5.23 layers/rotary_embedding/factory.py:402-427)
builds Phi3LongRoPEScaledRotaryEmbedding over the rope block's original_max_position_embeddings, which models/llama.py
:329-334 copies in from the config; the class (rope_variant.py:37-101) registers a short cache of those rows, a long one
of the max positions and their `torch.cat`, each `.to(dtype)` (the model's 16-bit dtype), width the rotary dim.
Phi-4-mini-instruct (config.json: 131,072 positions, original 4,096, hidden 3,072 / 24 heads = head 128, partial
rotary factor 0.75 → 96): 2 × (4,096 + 131,072) = 270,336 rows × 96 × 2 B = 51,904,512 B (kvtop before: 131,072 ×
96 × 4 B = 50,331,648). Phi-3.5-mini (the same positions, head 96, whole): 270,336 × 96 × 2 B = 51,904,512 B.
0.4.1.post4's llama.py imports vLLM's get_rope: the float32 row stays there. The module has no `cos_sin_cache`, so
reserve_rope_cache_for_long_sequences grows nothing (utils/common.py:5030-5035).
"""

from __future__ import annotations

import json
from pathlib import Path

from kvtop.domain.engines.sglang.long_context import context_above
from kvtop.domain.engines.sglang.rope_growth import rope_growth
from kvtop.domain.engines.sglang.rope_rows import longrope_rows
from kvtop.domain.engines.sglang.weights_held import rope_cache_of
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.launch import parse_flags
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config

DATA = Path(__file__).resolve().parents[2] / "data"
PHI4_MINI = DATA / "calibration" / "configs" / "microsoft--Phi-4-mini-instruct.json"
PHI35_MINI = DATA / "configs" / "heldout" / "mlc--phi-3_5.json"
AT = ResolvedVersion(text="0.5.23")


def _model(path: Path, **update: object) -> ModelSpec:
    config = json.loads(path.read_text())
    return model_from_config({**config, **update}, source=path.stem)


def test_phi4_mini_longrope_cache_is_three_model_dtype_buffers() -> None:
    model = _model(PHI4_MINI)
    assert (model.rope_type, model.rope_original_positions, model.max_position_embeddings) == ("longrope", 4096, 131072)
    assert longrope_rows(model, AT) == 270_336
    found = rope_cache_of(model, AT)
    assert found is not None and found[0] == 51_904_512
    assert "Phi3LongRoPEScaledRotaryEmbedding" in found[1]


def test_phi35_mini_whole_head_and_the_older_release() -> None:
    model = _model(PHI35_MINI)
    found = rope_cache_of(model, AT)
    assert found is not None and found[0] == 51_904_512
    assert rope_cache_of(model, ResolvedVersion(text="0.4.3")) == found  # the class from 0.4.3
    before = rope_cache_of(model, ResolvedVersion(text="0.4.1.post4"))  # vLLM's get_rope: left as it was
    assert before is not None and before[0] == 131_072 * 96 * 4


def test_a_legacy_su_rope_is_built_as_longrope() -> None:
    model = _model(PHI35_MINI, rope_scaling={**json.loads(PHI35_MINI.read_text())["rope_scaling"], "type": "su"})
    assert model.rope_type == "su" and longrope_rows(model, AT) == 270_336


def test_the_longrope_module_is_never_grown() -> None:
    model = _model(PHI4_MINI)
    settings = parse_flags("sglang", ["--context-length", "262144"])
    assert context_above(model, settings) is not None  # above the derived 131,072: a YaRN or default rope would grow
    assert rope_growth(model, settings, AT) is None


def test_a_yarn_factor_of_one_still_spans_the_original_positions() -> None:
    """SGLang's get_rope has no factor test on its `yarn` branch (0.5.23 factory.py:311-370) and
    YaRNScalingRotaryEmbedding spans `max_position_embeddings × scaling_factor` of the original it is handed
    (yarn.py:171-174): Qwen3-8B (40,960 positions, head 128) with `{"rope_type": "yarn", "factor": 1.0,
    "original_max_position_embeddings": 32768}` builds 32,768 rows × 128 × 4 B = 16,777,216 B, not 40,960 rows'."""
    config = json.loads((DATA / "configs" / "Qwen--Qwen3-8B.json").read_text())
    yarn = {"rope_type": "yarn", "factor": 1.0, "original_max_position_embeddings": 32768}
    model = model_from_config({**config, "rope_scaling": yarn}, source="qwen3-8b")
    found = rope_cache_of(model, AT)
    assert found is not None and found[0] == 32_768 * 128 * 4

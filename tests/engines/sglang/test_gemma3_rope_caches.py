"""SGLang's rope caches for Gemma-3 and a config's `linear` rope (kvtop/domain/engines/sglang/weights_held.py
`rope_cache`), float32 on CUDA (srt/layers/rotary_embedding/base.py "cache needs to be in FP32").

Expected values: the engine code's arithmetic over google--gemma-3-27b-it's config (131,072 positions, head 128,
rope_scaling linear factor 8) and Llama-2-13B's (4,096 positions, head 128):
- before 0.5.10 models/gemma3_causal.py calls no get_rope (0.5.9 :450-457: two Gemma3RotaryEmbedding holding inv_freq
  only): no cache (kvtop counted one of 131,072 × 128 × 4 B = 64 MiB);
- from 0.5.10rc0 each layer type asks get_rope for a default rope (0.5.23 :194-225), two bases, two modules:
  2 × 131,072 × 128 × 4 B = 128 MiB; the linear factor is not read;
- any other class with a linear rope: LinearScalingRotaryEmbedding spans positions × factor (0.5.23 base.py:660).
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from kvtop.domain.engines.sglang.weights_held import rope_cache
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.model import ModelSpec
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS, DATA

LLAMA = {record.id: record for record in load("sglang")}["sglang-pr4760-llama-3.1-8b-h100"].inputs()
GEMMA3 = load_model(str(CONFIGS / "google--gemma-3-27b-it.json"))
LLAMA2 = load_model(str(DATA / "calibration" / "configs" / "meta-llama--Llama-2-13b-hf.json"))


def at(version: str, model: ModelSpec) -> tuple[int, str] | None:
    return rope_cache(LLAMA.model_copy(update={"model": model, "version": ResolvedVersion(text=version)}))


def test_gemma3_holds_no_cache_before_0_5_10() -> None:
    assert (GEMMA3.architecture, GEMMA3.rope_type, GEMMA3.rope_factor) == ("Gemma3ForConditionalGeneration", "linear", 8)
    assert at("0.5.9", GEMMA3) is None
    assert at("0.4.6.post5", GEMMA3) is None


def test_gemma3_holds_two_default_caches_from_0_5_10() -> None:
    for version in ("0.5.10rc0", "0.5.10", "0.5.23"):
        found = at(version, GEMMA3)
        assert found is not None and found[0] == 2 * 131_072 * 128 * 4 == 134_217_728
        assert "131,072 positions" in found[1]


def test_a_linear_rope_spans_positions_times_factor() -> None:
    assert (LLAMA2.rope_type, LLAMA2.max_position_embeddings, LLAMA2.head_dim) == ("", 4_096, 128)
    plain = at("0.5.9", LLAMA2)
    assert plain is not None and plain[0] == 4_096 * 128 * 4
    linear = LLAMA2.model_copy(update={"rope_type": "linear", "rope_factor": 4.0})
    for version in ("0.4.3", "0.5.9", "0.5.23"):
        found = at(version, linear)
        assert found is not None and found[0] == 4_096 * 4 * 128 * 4 == 8_388_608
        assert "16,384 positions" in found[1] and "LinearScalingRotaryEmbedding" in found[1]

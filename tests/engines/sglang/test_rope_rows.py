"""The rows of SGLang's rope cache by the config's rope type (rope_rows.py), and its growth past them (rope_growth.py).

Expected by hand from SGLang's classes (0.5.23 layers/rotary_embedding: YaRNScalingRotaryEmbedding yarn.py:171-174
`arange(max_position_embeddings × scaling_factor)` over the `original_max_position` get_rope hands it, factory.py:311-
370; DynamicNTKScalingRotaryEmbedding rope_variant.py:880-887 `max_position_embeddings × scaling_factor`), float32 on
CUDA, and utils/common.py:4999-5039's reserve (context + 256, 128-aligned). Qwen3-8B (config.json: 40,960 positions,
head 128) with the YaRN block its model card gives (`{"rope_type": "yarn", "factor": 4.0,
"original_max_position_embeddings": 32768}`): 32,768 × 4 = 131,072 rows × 128 × 4 B = 67,108,864 B, not 40,960 rows'
20,971,520 B. At --context-length 131,072 the cache grows by 131,328 − 131,072 = 256 rows (131,072 B), not from 40,960
(90,368 rows, 46,268,416 B). InternLM2.5-7B (32,768 positions, head 128, `dynamic` factor 2.0; internlm2.py hands
get_rope the config's rope_scaling, :179-186): 65,536 rows, 33,554,432 B.
"""

from __future__ import annotations

import json

from kvtop.domain.engines.sglang.rope_growth import rope_growth
from kvtop.domain.engines.sglang.rope_rows import rope_cache_rows
from kvtop.domain.engines.sglang.weights_held import rope_cache_of
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.launch import parse_flags
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from tests.conftest import CONFIGS

AT = ResolvedVersion(text="0.5.23")
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}  # Qwen3's model card


def _qwen3_8b(rope: dict[str, object] | None) -> ModelSpec:
    config = json.loads((CONFIGS / "Qwen--Qwen3-8B.json").read_text())
    return model_from_config({**config, "rope_scaling": rope}, source="qwen3-8b")


def test_a_yarn_cache_spans_the_original_positions_times_its_factor() -> None:
    plain, yarn = _qwen3_8b(None), _qwen3_8b(YARN)
    assert (yarn.rope_type, yarn.rope_original_positions, yarn.rope_factor) == ("yarn", 32768, 4.0)
    assert rope_cache_rows(plain) == 40_960 and rope_cache_rows(yarn) == 131_072
    found = rope_cache_of(yarn, AT)
    assert found is not None and found[0] == 67_108_864 and "YaRNScalingRotaryEmbedding" in found[1]
    unscaled = rope_cache_of(plain, AT)
    assert unscaled is not None and unscaled[0] == 40_960 * 128 * 4 == 20_971_520


def test_a_yarn_cache_grows_only_past_its_own_rows() -> None:
    flags = parse_flags("sglang", ["--context-length", "131072"])
    yarn, plain = rope_growth(_qwen3_8b(YARN), flags, AT), rope_growth(_qwen3_8b(None), flags, AT)
    assert yarn is not None and yarn[0] == 256 * 128 * 4 == 131_072
    assert plain is not None and plain[0] == (131_328 - 40_960) * 128 * 4 == 46_268_416


def test_a_dynamic_cache_spans_the_positions_times_its_factor() -> None:
    model = model_from_config(json.loads((CONFIGS / "heldout" / "mlc--internlm2_5_7b.json").read_text()), source="il")
    assert rope_cache_rows(model) == 65_536
    found = rope_cache_of(model, AT)
    assert found is not None and found[0] == 65_536 * 128 * 4 == 33_554_432


def test_a_linear_or_dynamic_factor_below_one_caches_fewer_rows() -> None:
    """EDITED configs (no public config with such a block was found): Qwen3-8B's 40,960 positions with a `linear`
    block of factor 0.5 and InternLM2.5-7B's `dynamic` factor 2.0 set to 0.75. get_rope passes the factor unguarded
    (0.5.23 factory.py:278-310): LinearScalingRotaryEmbedding arange(40,960 × 0.5) = 20,480 rows (base.py:658-659),
    20,480 × 128 × 4 B = 10,485,760 B, not 40,960's 20,971,520 B; DynamicNTKScalingRotaryEmbedding
    arange(32,768 × 0.75) = 24,576 rows (rope_variant.py:880-887), 12,582,912 B."""
    linear = _qwen3_8b({"rope_type": "linear", "factor": 0.5})
    assert rope_cache_rows(linear) == 20_480
    found = rope_cache_of(linear, AT)
    assert found is not None and found[0] == 20_480 * 128 * 4 == 10_485_760
    assert "LinearScalingRotaryEmbedding" in found[1]
    config = json.loads((CONFIGS / "heldout" / "mlc--internlm2_5_7b.json").read_text())
    dynamic = model_from_config({**config, "rope_scaling": config["rope_scaling"] | {"factor": 0.75}}, source="il")
    assert rope_cache_rows(dynamic) == 24_576
    found = rope_cache_of(dynamic, AT)
    assert found is not None and found[0] == 24_576 * 128 * 4 == 12_582_912

"""SGLang's context_len where the config holds none of get_context_length's keys, read from the config itself.

0.5.23 `get_context_length` (utils/hf_transformers/common.py) returns the first of CONTEXT_LENGTH_KEYS
(max_sequence_length, seq_length, max_seq_len, model_max_length, max_position_embeddings) the text config holds,
else 2048. openai/whisper-small's config.json (tests/data/configs/families/) states `"max_target_positions": 448`
and none of those keys: 2,048. Whether a model falls back is the config's fact (`ModelSpec.positions_field`), not
a list of classes: an encoder-decoder of another class whose positions come from the same field falls back too.
"""

from __future__ import annotations

from kvtop.domain.engines.sglang.context_len import FALLBACK_CONTEXT, engine_context
from kvtop.domain.launch import parse_flags
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

WHISPER = CONFIGS / "families/openai--whisper-small.json"
LLAMA = CONFIGS / "meta-llama--Llama-3.1-70B-Instruct.json"
SGLANG = parse_flags("sglang", [])


def test_the_config_says_which_field_its_positions_came_from() -> None:
    whisper = load_model(str(WHISPER))
    assert (whisper.positions_field, whisper.max_position_embeddings) == ("max_target_positions", 448)
    # Llama-3.1-70B's config.json: "max_position_embeddings": 131072, one of get_context_length's keys
    llama = load_model(str(LLAMA))
    assert (llama.positions_field, llama.max_position_embeddings) == ("max_position_embeddings", 131_072)
    assert engine_context(llama, SGLANG) == 131_072


def test_a_config_with_no_context_key_falls_back_whatever_its_class() -> None:
    whisper = load_model(str(WHISPER))
    assert engine_context(whisper, SGLANG) == FALLBACK_CONTEXT == 2048
    # another encoder-decoder class of the same config shape: no list entry needed, still get_context_length's 2048
    other = whisper.model_copy(update={"architecture": "FutureSpeechForConditionalGeneration"})
    assert engine_context(other, SGLANG) == 2048
    # a stated --context-length is taken as it is
    assert engine_context(other, parse_flags("sglang", ["--context-length", "448"])) == 448

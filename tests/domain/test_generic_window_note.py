"""A generic reading's window note names no engine (shared code): whether the config's sliding_window covers every
layer is each engine's rule (vLLM's in engines/vllm, docs/engines/vllm.md §3.4), the note says only what is assumed.

Input: meta-llama/Llama-3.1-8B's config (tests/data/configs, SOURCES.md beside it) renamed to a class no entry lists
(QuuxForCausalLM) with a `sliding_window` of 4,096 written in, as a class the engines register but kvtop has no
entry for would state it.
"""

from __future__ import annotations

import json

from kvtop.domain.model_config import model_from_config
from tests.conftest import CONFIGS

ENGINE_WORDS = ("vllm", "sglang", "tensorrt", "trt-llm", "lmdeploy", "llama.cpp")


def test_generic_window_note_names_no_engine() -> None:
    llama = json.loads((CONFIGS / "meta-llama--Llama-3.1-8B.json").read_text())
    model = model_from_config(llama | {"architectures": ["QuuxForCausalLM"], "model_type": "quux", "sliding_window": 4096})
    (reading,) = [n for n in model.not_modelled if n.startswith("generic reading: no architecture entry for 'quux'")]
    assert "the config's sliding_window (4,096) on every layer where the engine windows a class" in reading
    assert not any(word in reading.lower() for word in ENGINE_WORDS)

"""A speculative-decoding draft's config as the served model: refused with the reason, still read as a draft.

The Eagle-3 drafts (tests/data/configs/drafts: `LlamaForCausalLMEagle3`, model_type llama, one layer) are
refused served alone by vLLM 0.33.0 (the registry sweep's rows, tests/data/engine_diff/registry: "engine
refuses: AssertionError" at TP 1 and 2); kvtop had planned them as plain Llama.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from tests.conftest import CONFIGS

H100 = 80 * 1024**3


def test_an_eagle3_draft_is_not_planned_as_the_served_model() -> None:
    name = "drafts/sgl-project--SpecForge-llama3-70B-eagle3.json"
    draft = model_from_config(json.loads((CONFIGS / name).read_text()), source=name)
    with pytest.raises(UnsupportedModelError, match=r"^architectures: LlamaForCausalLMEagle3 .*speculative-decoding"):
        predict(draft, parse_flags("vllm", []), gpu_total_bytes=H100)


def test_an_eagle3_draft_is_still_read_as_the_draft_of_a_launch() -> None:
    target = model_from_config(json.loads((CONFIGS / "meta-llama--Llama-3.1-70B-Instruct.json").read_text()), source="t")
    name = "drafts/sgl-project--SpecForge-llama3-70B-eagle3.json"
    draft = model_from_config(json.loads((CONFIGS / name).read_text()), source=name)
    flags = ["--tp-size", "8", "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "/d/eagle3"]
    ledger = predict(target, parse_flags("sglang", flags), gpu_total_bytes=H100, gpu_name="H100", draft=draft)
    assert ledger.kv_bytes_per_token == int(40_960 * (1 + 1 / 80))  # the draft's one layer beside the target's 80

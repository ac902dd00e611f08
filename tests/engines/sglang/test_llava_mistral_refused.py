"""LLaVA-1.6-Mistral (model_type llava_mistral, LlavaMistralForCausalLM) in SGLang 0.5.23: the config class is
LLaVA's own package code (haotian-liu/LLaVA llava_mistral.py `LlavaConfig(MistralConfig)`), not the checkpoint's
(no auto_map), and neither transformers 5.19 nor SGLang's config registry holds it, so AutoConfig refuses it
("has model type `llava_mistral` but Transformers does not recognize this architecture", sgl-project/sglang#128).
Against the registry sweep's SGLang rows for the reconstructed config (tests/data/configs/recon, SOURCES.md)."""

from __future__ import annotations

import json

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_model
from tests.data_paths import DATA

CONFIG = "recon--liuhaotian--llava-v1.6-mistral-7b"
H100 = 81559 << 20


def test_sglang_refuses_llava_mistral_as_its_engine_does() -> None:
    rows = json.loads((DATA / "engine_diff" / "registry" / "sglang-0.5.23.json").read_text())["rows"]
    mine = [row for row in rows if row["config"] == CONFIG]
    assert sorted(row["tp"] for row in mine) == [1, 2]
    assert all(row["status"] == "refused" and "does not recognize this architecture" in row["message"] for row in mine)
    model = load_model(str(DATA / "configs" / "recon" / f"{CONFIG}.json"))
    with pytest.raises(InputError) as refused:
        predict(model, parse_flags("sglang", ["--engine-version", "0.5.23"]), gpu_total_bytes=H100, gpu_name="H100")
    assert refused.value.field == "model_type"

"""A planner edit the engine's flags cannot hold is refused by its field, not shown '✓ valid' (operator pass, s72).

Helper Q typed 'bogus', '-1' and an `sk-…` key into llama.cpp's speculative field and the edited launch's flags came
out `{}` (its `with_setup` writes only `-md`); TensorRT-LLM took 99999999999999999999 redundant experts and wrote
nothing. Each engine's own `with_setup`/`setup` pair decides what it keeps; a count no engine's int holds is refused
by its field."""

from __future__ import annotations

import pytest

from kvtop.domain.errors import InputError
from kvtop.ui.planning import apply_edits
from tests.ui.fakes import llama_settings

HUGE = "99999999999999999999"


@pytest.mark.parametrize(
    ("engine", "texts", "words"),
    [
        ("llamacpp", {"spec_method": "bogus"}, "speculative: not modelled for llama.cpp (no flag of its takes 'bogus')"),
        ("llamacpp", {"spec_method": "-1"}, "speculative: not modelled for llama.cpp (no flag of its takes '-1')"),
        ("llamacpp", {"spec_method": "sk-abcdefghijklmnopqrstuvwxyz0123456789"},
         "speculative: not modelled for llama.cpp (no flag of its takes '***')"),
        ("llamacpp", {"lora_slots": "4"}, "LoRA slots: not modelled for llama.cpp (no flag of its takes '4')"),
        ("trtllm", {"redundant_experts": "8"},
         "redundant experts: not modelled for TensorRT-LLM (no flag of its takes '8')"),
        ("lmdeploy", {"redundant_experts": "8"}, "redundant experts: not modelled for LMDeploy (no flag of its takes '8')"),
    ],
)
def test_an_edit_no_flag_of_the_engine_takes_is_refused_by_its_field(engine: str, texts: dict[str, str], words: str) -> None:
    with pytest.raises(InputError) as raised:
        apply_edits(llama_settings().model_copy(update={"engine": engine}), texts)
    assert str(raised.value) == words


@pytest.mark.parametrize("engine", ["llamacpp", "trtllm", "sglang", "vllm", "lmdeploy"])
@pytest.mark.parametrize(("key", "label"), [("lora_slots", "LoRA slots"), ("redundant_experts", "redundant experts")])
def test_a_count_past_a_32_bit_int_is_refused_by_its_field(engine: str, key: str, label: str) -> None:
    with pytest.raises(InputError) as raised:
        apply_edits(llama_settings().model_copy(update={"engine": engine}), {key: HUGE})
    assert str(raised.value) == f"{label}: must be at most 2,147,483,647 (got {HUGE})"


def test_an_edit_the_engine_takes_is_still_written() -> None:
    # SGLang writes both (server_args.py --ep-num-redundant-experts, --max-loras-per-batch); an untouched form passes
    edited = apply_edits(llama_settings(), {"redundant_experts": "8", "lora_slots": "4", "spec_method": ""})
    assert edited.flags == {"ep-num-redundant-experts": "8", "enable-lora": True, "max-loras-per-batch": "4"}
    untouched = apply_edits(llama_settings().model_copy(update={"engine": "llamacpp"}),
                            {"redundant_experts": "0", "lora_slots": "", "spec_method": ""})  # fmt: skip
    assert untouched.flags == {}


HF_TOKEN = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"  # the shape of a Hugging Face user token, not a real one


@pytest.mark.parametrize("engine", ["sglang", "vllm", "lmdeploy", "trtllm"])
def test_a_key_typed_as_the_speculative_method_is_masked_as_typed(engine: str) -> None:
    # SGLang upper-cased the method before its check, so the error said 'HF_ABCD…', a shape the redactor misses
    with pytest.raises(InputError) as raised:
        apply_edits(llama_settings().model_copy(update={"engine": engine}), {"spec_method": HF_TOKEN})
    said = str(raised.value)
    assert "got '***'" in said and "ABCDEFGH" not in said.upper(), said

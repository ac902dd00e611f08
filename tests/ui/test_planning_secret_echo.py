"""A key pasted into a planner number field is not echoed back in its error line (operator trial, session 72).

The planner's parse told 'TP: needs a whole number, got 'hf_AbCd…'' with the whole Hugging Face token in it, while
the engine version field beside it said 'not a release: '***''. The error line is text kvtop shows (a screenshot, a
pasted bug report); the value is quoted as every other message quotes text from outside (`redact.quoted`)."""

from __future__ import annotations

import pytest

from kvtop.domain.errors import InputError
from kvtop.ui.planning import apply_edits
from tests.ui.fakes import llama_settings

HF_TOKEN = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"  # the shape of a Hugging Face user token, not a real one


@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("tp", "TP: needs a whole number, got '***'"),
        ("context_length", "context length: needs a whole number, got '***'"),
        ("memory_fraction", "memory fraction: needs a number between 0 and 1, got '***'"),
        ("host_kv_gib", "host KV GiB: needs a size in GiB above 0 and under 1,048,576 (or x2: twice the GPU pool), got '***'"),
    ],
)
def test_a_key_typed_in_a_number_field_is_masked_in_its_error(key: str, words: str) -> None:
    with pytest.raises(InputError) as raised:
        apply_edits(llama_settings(), {key: HF_TOKEN})
    said = str(raised.value)
    assert HF_TOKEN not in said and "AbCdEfGh" not in said, said
    assert said == words


def test_a_plain_wrong_word_is_still_quoted_as_typed() -> None:
    with pytest.raises(InputError) as raised:
        apply_edits(llama_settings(), {"pp": "x"})
    assert str(raised.value) == "PP: needs a whole number, got 'x'"

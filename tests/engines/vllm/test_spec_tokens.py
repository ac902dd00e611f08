"""num_speculative_tokens as vLLM's SpeculativeConfig takes it: a whole number of at least 1, from
`--speculative-config` or `--spec-tokens` (else `--num-speculative-tokens`).

Independent source, the engine's code: config/speculative.py refuses 0 ('Expected num_speculative_tokens to be greater
than zero', v0.11.0:526; v0.22.0 declares the field `Field(default=None, gt=0)` at :80 and keeps the check at :987;
v0.34.0 :455 and :1660); engine/arg_utils.py v0.34.0:1903 and :2144 merge `--spec-tokens` into that field."""

from __future__ import annotations

import pytest

from kvtop.domain.engines.vllm.spec_methods import draft_tokens, spec_config
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags


def _tokens(*flags: str) -> int | None:
    return draft_tokens(parse_flags("vllm", ["--engine-version", "0.34.0", *flags]))


def test_the_stated_count_is_read_from_either_spelling() -> None:
    assert _tokens("--speculative-config", '{"method": "ngram", "num_speculative_tokens": 3}') == 3
    assert _tokens("--speculative-config", '{"method": "ngram"}', "--spec-tokens", "4") == 4
    assert _tokens("--speculative-config", '{"method": "ngram"}') is None


@pytest.mark.parametrize(("flags", "field"), [
    (("--speculative-config", '{"method": "ngram", "num_speculative_tokens": 0}'), "--speculative-config"),
    (("--speculative-config", '{"method": "ngram", "num_speculative_tokens": false}'), "--speculative-config"),
    (("--speculative-config", '{"method": "ngram"}', "--spec-tokens", "0"), "--spec-tokens"),
])  # fmt: skip
def test_zero_is_refused_as_vllm_refuses_it_not_read_as_unset(flags: tuple[str, ...], field: str) -> None:
    with pytest.raises(InputError) as refused:
        spec_config(parse_flags("vllm", ["--engine-version", "0.34.0", *flags]))
    assert refused.value.field == field

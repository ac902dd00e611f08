"""vLLM's `--api-key`: one key before v0.10.1, a list from it.

Expected from vLLM's own declarations, read off the PyPI wheels: v0.10.0 `FrontendArgs.api_key: Optional[str]`
(vllm/entrypoints/openai/cli_args.py:88), so a second word is argparse's "unrecognized arguments"; v0.10.1
`Optional[list[str]]` (cli_args.py:90), which get_kwargs turns into nargs="+" (engine/arg_utils.py:209-218).
"""

from __future__ import annotations

import pytest

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.api_keys import refuse_several_keys
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags


def test_two_keys_before_v0_10_1_are_refused_without_quoting_them() -> None:
    with pytest.raises(InputError, match="takes one key") as caught:
        refuse_several_keys({"api-key": "alphakey1 bravokey2"}, ResolvedVersion(text="0.10.0"))
    assert "alphakey1" not in str(caught.value) and "bravokey2" not in str(caught.value)


@pytest.mark.parametrize(("version", "keys"), [("0.10.1", "alphakey1 bravokey2"), ("0.33.0", "a b c"),
                                               ("0.9.2", "alphakey1")])  # fmt: skip
def test_a_list_from_v0_10_1_and_one_key_anywhere_pass(version: str, keys: str) -> None:
    refuse_several_keys({"api-key": keys}, ResolvedVersion(text=version))


@pytest.mark.parametrize(("engine", "tokens"), [
    ("vllm", ["--api-key"]), ("vllm", ["--api-key", "--port", "8000"]), ("sglang", ["--api-key"]),
    ("sglang", ["--admin-api-key", "--port", "30000"]),
])  # fmt: skip
def test_the_flag_with_no_key_is_refused_naming_it(engine: str, tokens: list[str]) -> None:
    # vLLM: api_key Optional[str] (v0.10.0) / nargs="+" (v0.10.1 on); SGLang: ServerArgs.api_key, admin_api_key
    # Optional[str] (srt/arg_groups/fields/serving.py:160, :164, v0.5.23): argparse says "expected one argument"
    with pytest.raises(InputError, match="takes a key after it") as caught:
        parse_flags(engine, tokens, strict=True)  # as typed to kvtop plan
    assert caught.value.field == tokens[0]


def test_a_key_after_the_flag_passes_and_is_never_quoted() -> None:
    assert parse_flags("vllm", ["--api-key", "alphakey1"], strict=True).flags["api-key"] == "alphakey1"

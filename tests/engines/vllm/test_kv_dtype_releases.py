"""vLLM's --kv-cache-dtype refusal says the truth by release: a word the release has but kvtop does not model is
"not modelled" naming the release; a word it lacks names the releases that have it (helper B: vLLM 0.30.0 logged
'Using int4_per_token_head data type to store kv cache', alpharomercoma/qwen3.8-27b-rtx4090-vllm serve_original.log)."""

from __future__ import annotations

import pytest

from kvtop.domain.engines.vllm.kv_dtype_releases import CACHE_DTYPES
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags

# each wheel's vllm/config/cache.py `CacheDType = Literal[...]`, copied in order (pip download vllm==X --no-deps)
WHEELS = {
    "0.10.2": "auto fp8 fp8_e4m3 fp8_e5m2 fp8_inc",  # :25
    "0.11.0": "auto bfloat16 fp8 fp8_e4m3 fp8_e5m2 fp8_inc",  # :25-26
    "0.17.1": "auto bfloat16 fp8 fp8_e4m3 fp8_e5m2 fp8_inc fp8_ds_mla",  # :23-31
    "0.19.0": "auto float16 bfloat16 fp8 fp8_e4m3 fp8_e5m2 fp8_inc fp8_ds_mla",  # :14-23
    "0.24.0": "auto float16 bfloat16 fp8 fp8_e4m3 fp8_e5m2 fp8_inc fp8_ds_mla turboquant_k8v4 turboquant_4bit_nc "
    "turboquant_k3v4_nc turboquant_3bit_nc int8_per_token_head fp8_per_token_head nvfp4",  # :19-35
    "0.27.1": "auto float16 bfloat16 fp8 fp8_e4m3 fp8_e5m2 fp8_inc fp8_ds_mla turboquant_k8v4 turboquant_4bit_nc "
    "turboquant_k3v4_nc turboquant_3bit_nc int4_per_token_head int8_per_token_head fp8_per_token_head nvfp4",  # :19-36
    "0.31.0": "auto float16 bfloat16 fp8 fp8_e4m3 fp8_e5m2 fp8_inc fp8_ds_mla nvfp4_ds_mla turboquant_k8v4 "
    "turboquant_4bit_nc turboquant_k3v4_nc turboquant_3bit_nc int4_per_token_head int8_per_token_head "
    "fp8_per_token_head nvfp4 nvfp4_4over6",  # :39-58
    "0.34.0": "auto float16 bfloat16 fp8 fp8_e4m3 fp8_e5m2 fp8_inc fp8_ds_mla nvfp4_ds_mla turboquant_k8v4 "
    "turboquant_4bit_nc turboquant_k3v4_nc turboquant_3bit_nc octave_k3v4 octave_k3v3 octave_k3v3_compact "
    "ultraquant_4bit int4_per_token_head int8_per_token_head fp8_per_token_head nvfp4 nvfp4_4over6",  # :44-67
}


# the table's row each wheel falls in (its list first read at that release)
ROW_OF = {"0.10.2": "0.10.1", "0.11.0": "0.11.0", "0.17.1": "0.12.0", "0.19.0": "0.18.0", "0.24.0": "0.20.0", "0.27.1": "0.27.1",
          "0.31.0": "0.30.0", "0.34.0": "0.33.0"}  # fmt: skip


@pytest.mark.parametrize("release", WHEELS)
def test_the_table_holds_each_wheels_list(release: str) -> None:
    (row,) = [names for first, names, _ in CACHE_DTYPES if first == ROW_OF[release]]
    assert " ".join(row) == WHEELS[release]


def refusal(*argv: str) -> str:
    with pytest.raises(InputError) as caught:
        parse_flags("vllm", ["--kv-cache-dtype", *argv], strict=True)
    assert caught.value.field == "--kv-cache-dtype"
    return str(caught.value)


def test_int4_per_token_head_at_0_30_0_is_not_modelled_not_absent() -> None:
    said = refusal("int4_per_token_head", "--engine-version", "0.30.0")
    assert "not modelled: vLLM 0.30.0 has it (CacheDType, v0.30.0 config/cache.py:39-58)" in said
    assert "has no KV cache dtype" not in said


def test_a_release_before_it_names_the_releases_that_have_it() -> None:
    said = refusal("int4_per_token_head", "--engine-version", "0.24.0")
    assert "vLLM 0.24.0 has no KV cache dtype 'int4_per_token_head' (releases read that have it: 0.27.1 on)" in said


def test_a_release_not_read_is_taken_as_the_one_before_it_and_says_so() -> None:
    said = refusal("octave_k3v4", "--engine-version", "0.32.0")  # octave first read at 0.33.0
    assert ("vLLM 0.32.0 has no KV cache dtype 'octave_k3v4' (releases read that have it: 0.33.0 on, "
            "taken as 0.30.0's: 0.32.0 not read)") in said
    said = refusal("nvfp4_4over6", "--engine-version", "0.32.0")
    assert "vLLM 0.32.0 has it (CacheDType, v0.30.0 config/cache.py:39-58, taken as 0.30.0's: 0.32.0 not read)" in said


def test_unstated_release_is_the_latest_read_and_a_word_none_has_is_absent() -> None:
    assert "not modelled: vLLM 0.34.0 has it (CacheDType, v0.33.0 config/cache.py:44-67)" in refusal("octave_k3v4")
    assert "vLLM 0.34.0 has no KV cache dtype 'int3' (no release read has it, 0.10.1 – 0.34.0, 21 read)" in refusal(
        "int3"
    )

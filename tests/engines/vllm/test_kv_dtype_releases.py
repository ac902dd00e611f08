"""vLLM's --kv-cache-dtype refusal says the truth by release: a word the release has but kvtop does not model is
"not modelled" naming the release; a word it lacks names the releases that have it (helper B: vLLM 0.30.0 logged
'Using int4_per_token_head data type to store kv cache', alpharomercoma/qwen3.8-27b-rtx4090-vllm serve_original.log)."""

from __future__ import annotations

import pytest

from benchmarks.calibration.corpus import load
from kvtop.domain.engines.vllm.kv_dtype_releases import CACHE_DTYPES
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings, check_parallel, parse_flags
from kvtop.domain.launch_line import parse_launch_command

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
    (row,) = [era.value for era in CACHE_DTYPES if era.since == ROW_OF[release]]
    assert " ".join(row or ()) == WHEELS[release]


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


def test_a_modelled_dtype_the_release_lacks_is_refused_naming_those_that_have_it() -> None:
    # v0.12.0 config/cache.py:23-31 CacheDType: auto bfloat16 fp8 fp8_e4m3 fp8_e5m2 fp8_inc fp8_ds_mla (no nvfp4)
    said = refusal("nvfp4", "--engine-version", "0.12.0")
    assert said == "--kv-cache-dtype: vLLM 0.12.0 has no KV cache dtype 'nvfp4' (releases read that have it: 0.20.0 on)"
    assert "vLLM 0.10.2 has no KV cache dtype 'bfloat16' (releases read that have it: 0.11.0 on)" in refusal(
        "bfloat16", "--engine-version", "0.10.2"
    )
    assert "vLLM 0.11.0 has no KV cache dtype 'fp8_ds_mla'" in refusal("fp8_ds_mla", "--engine-version", "0.11.0")


@pytest.mark.parametrize("release", ["0.20.0", "0.24.0", "latest", "0.19.1", "0.9.2"])
def test_a_release_that_has_it_or_is_not_known_to_lack_it_plans(release: str) -> None:
    # 0.19.1: between 0.19.0 (read, no nvfp4) and 0.20.0 (read, nvfp4), not read; 0.9.2: before the first list read
    settings = parse_flags("vllm", ["--kv-cache-dtype", "nvfp4", "--engine-version", release], strict=True)
    assert settings.kv_cache_dtype == "nvfp4"


def test_merged_settings_are_checked_at_their_release() -> None:
    # `plan --cmd 'vllm serve … --kv-cache-dtype nvfp4' --engine-version 0.12.0`: the two meet after parsing
    settings = LaunchSettings(engine="vllm", kv_cache_dtype="nvfp4", engine_version="0.12.0")
    with pytest.raises(InputError, match="vLLM 0.12.0 has no KV cache dtype 'nvfp4'"):
        check_parallel(settings)


def test_every_corpus_launch_still_plans_at_its_release() -> None:
    # the vLLM corpus's --kv-cache-dtype at each record's release (stated, else the one out on its date): fp8 at
    # 0.10.0 - 0.30.0, fp8_e4m3 at 0.11.2 - 0.26.0, bfloat16 at 0.26.1 - 0.31.0; none is refused
    typed = [record for record in load("vllm") if record.settings.kv_cache_dtype != "auto"]
    assert len(typed) >= 43  # 43 of 626 at session 67
    for record in typed:
        check_parallel(record.settings)


def test_a_release_named_only_by_the_image_tag_is_checked_too() -> None:
    # `docker run … vllm/vllm-openai:v0.10.2 … --kv-cache-dtype bfloat16`: the tag's release is set after the flags
    # are parsed (launch_line.with_image), so the final settings' check refuses it (v0.10.2 :25: no bfloat16)
    settings = parse_launch_command("docker run --gpus all vllm/vllm-openai:v0.10.2 --model m --kv-cache-dtype bfloat16")
    assert settings is not None and settings.engine_version == "0.10.2"
    with pytest.raises(InputError, match="vLLM 0.10.2 has no KV cache dtype 'bfloat16'"):
        check_parallel(settings)

"""A fix line says a change as the engine's own CLI or YAML takes it at the plan's release (`launch_change`, the copied
launch's writer), never in kvtop's spelling.

Expected words, each from the engine's own parser (read for session 72):
- vLLM v0.11.0 wheel, vllm/engine/arg_utils.py:764-765 `--gpu-memory-utilization`, :769-770 `--kv-cache-dtype` (its
  choices config/cache.py:25 CacheDType: auto, bfloat16, fp8, …), :530 `--dtype`.
- SGLang 0.5.5 wheel, python/sglang/srt/server_args.py:2094-2097 `--mem-fraction-static` (float), :2041-2045
  `--kv-cache-dtype` (choices auto, fp8_e5m2, fp8_e4m3, bf16, …), :2011-2015 `--dtype` (… bfloat16 …), :3159-3161
  `--disable-radix-cache` (store_true).
- LMDeploy (the InternLM/lmdeploy tags), lmdeploy/cli/utils.py:130-134 at v0.4.2 `--quant-policy` (type=int,
  choices=[0, 4, 8]; 8 is int8 KV), :273-278 at v0.16.0 (QuantPolicy values or names: 8 still int8); :525-528 at
  v0.16.0 `--cache-max-entry-count` (float).
- llama.cpp, common/arg.cpp as vendored by llama-cpp-python 0.3.16's sdist: :1464 `{"-c", "--ctx-size"}`, :2153-2164
  `{"-ctk", "--cache-type-k"}` (kv_cache_type_from_str over kv_cache_types, :853-863, which hold GGML_TYPE_Q8_0).
- TensorRT-LLM, tensorrt_llm/commands/serve.py at NVIDIA/TensorRT-LLM 00209af1 (and 4c05a748): its @click.option list
  declares `--kv_cache_free_gpu_memory_fraction` and `--extra_llm_api_options` and no `--kv_cache_config.*` (click stops
  with "No such option"); `get_llm_args` builds `KvCacheConfig(free_gpu_memory_fraction=…)` and the YAML is merged by
  `update_llm_args_with_extra_dict`, so a KV dtype is the YAML's `kv_cache_config: {dtype: fp8}` (KvCacheConfig.dtype,
  llmapi/llm_args.py); a TensorRT engine's KV dtype and block are its build's (quantize.py `--kv_cache_dtype`,
  trtllm-build `--tokens_per_block`), and before trtllm-serve (0.15.0) there is no server line at all.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest
import yaml

from kvtop.domain.engines.catalogue import ENGINE_IDS, engine_module
from kvtop.domain.launch import FIELD_TYPES, LaunchSettings, engine_flags, parse_flags
from kvtop.domain.launch_change import KVTOP_SPELLING, launch_change, options, set_words, setting_name

TRT_FILE = "extra_llm_api_options.yaml"


@pytest.mark.parametrize(
    ("engine", "update", "words"),
    [
        ("vllm", {"gpu_memory_utilization": 0.92}, "--gpu-memory-utilization 0.92"),
        ("vllm", {"kv_cache_dtype": "fp8"}, "--kv-cache-dtype fp8"),
        ("vllm", {"dtype": "bfloat16"}, "--dtype bfloat16"),
        ("sglang", {"mem_fraction_static": 0.844}, "--mem-fraction-static 0.844"),
        ("sglang", {"kv_cache_dtype": "fp8_e4m3"}, "--kv-cache-dtype fp8_e4m3"),
        ("sglang", {"dtype": "bfloat16"}, "--dtype bfloat16"),
        ("sglang", {"disable_radix_cache": True}, "--disable-radix-cache"),
        ("lmdeploy", {"kv_cache_dtype": "8"}, "--quant-policy 8"),
        ("lmdeploy", {"cache_max_entry_count": 0.8}, "--cache-max-entry-count 0.8"),
        ("llamacpp", {"context_length": 8192}, "-c 8192"),
        ("llamacpp", {"kv_cache_dtype": "q8_0"}, "-ctk q8_0"),
        ("trtllm", {"free_gpu_memory_fraction": 0.92}, "--kv_cache_free_gpu_memory_fraction 0.92"),
        ("trtllm", {"kv_cache_dtype": "fp8"},
         f"--extra_llm_api_options {TRT_FILE} · {TRT_FILE}: {{kv_cache_config: {{dtype: fp8}}}}"),
    ],
)  # fmt: skip
def test_each_engines_fix_is_what_its_own_parser_takes(engine: str, update: dict[str, object], words: str) -> None:
    assert set_words(LaunchSettings(engine=engine), **update) == words


def test_tensorrt_llm_fp8_kv_with_a_line_fraction_moves_the_fraction_into_the_yaml() -> None:
    """Before PR #9262 a YAML kv_cache_config replaced the line's whole KvCacheConfig (its fraction back at 0.9), so the
    fix that brings the YAML's kv_cache_config carries the line's 0.85 into it and drops it from the line; the flow
    mapping it prints is YAML that reads back to the body (PyYAML, the engine's loader)."""
    before = LaunchSettings(engine="trtllm", free_gpu_memory_fraction=0.85)
    change = launch_change(before, before.model_copy(update={"kv_cache_dtype": "fp8"}))
    assert change.line == (("--extra_llm_api_options", TRT_FILE),)
    assert change.line_dropped == ("--kv_cache_free_gpu_memory_fraction",)
    assert change.config == {"kv_cache_config": {"dtype": "fp8", "free_gpu_memory_fraction": 0.85}}
    said = change.said()
    assert yaml.safe_load(said.rsplit(f"{TRT_FILE}: ", 1)[1]) == change.config
    assert change.names == ("kv_cache_config.dtype",)  # the moved fraction is not what the fix changes
    assert "--kv_cache_config." not in said


def test_tensorrt_llm_names_its_settings_by_the_yaml_key_where_serve_has_no_option() -> None:
    plain = LaunchSettings(engine="trtllm")
    assert setting_name(plain, "kv_cache_max_tokens", 1) == "kv_cache_config.max_tokens"
    assert setting_name(plain, "free_gpu_memory_fraction", 0.5) == "--kv_cache_free_gpu_memory_fraction"
    yaml_launch = plain.model_copy(update={"kv_cache_dtype": "fp8"})  # a kv_cache_config in the YAML already
    assert setting_name(yaml_launch, "free_gpu_memory_fraction", 0.5) == "kv_cache_config.free_gpu_memory_fraction"


def test_tensorrt_engine_block_and_kv_dtype_are_the_builds_each_by_its_tool() -> None:
    """A TensorRT engine's KV dtype is quantize.py's `--kv_cache_dtype` (examples/quantization/quantize.py, as the
    4275 case's build line `quantize.py --qformat fp8 --kv_cache_dtype fp8` ran it), its block trtllm-build's
    `--tokens_per_block`: the fix names the tool that takes each, not one "build flags" for both."""
    built = LaunchSettings(engine="trtllm", backend="tensorrt")
    assert set_words(built, page_size=64) == "rebuild the engine: trtllm-build --tokens_per_block 64"
    assert set_words(built, kv_cache_dtype="fp8") == "rebuild the engine: quantize.py --kv_cache_dtype fp8"
    assert set_words(built, kv_cache_dtype="fp8", page_size=32) == (
        "rebuild the engine: quantize.py --kv_cache_dtype fp8; trtllm-build --tokens_per_block 32")


def test_the_pytorch_backend_names_no_build_step_for_its_quantization() -> None:
    """The PyTorch backend (the default from 1.0) builds no TensorRT engine: its quantization is the checkpoint's, so
    the fix is no `--qformat` build flag; the words are kvtop's own and say so."""
    words = set_words(LaunchSettings(engine="trtllm"), quantization="fp8")
    assert "build" not in words and "quantize.py" not in words
    assert words.startswith("--qformat fp8 (") and KVTOP_SPELLING in words


def test_a_launch_with_its_own_yaml_is_told_to_add_the_keys_not_given_kvtops_file() -> None:
    """A launch that names its own --extra_llm_api_options YAML keeps it: the fix says which keys to add to that file
    (`update_llm_args_with_extra_dict` reads the one file the option names), never `--extra_llm_api_options
    extra_llm_api_options.yaml`, which, followed, would drop every key of the person's file."""
    own = parse_flags("trtllm", ["--tp_size", "8", "--extra_llm_api_options", "/cfg/my.yaml", "--engine-version", "1.1.0"])
    words = set_words(own, kv_cache_dtype="fp8")
    assert words == "add to your --extra_llm_api_options file: {kv_cache_config: {dtype: fp8}}"
    assert yaml.safe_load(words.split("file: ", 1)[1]) == {"kv_cache_config": {"dtype": "fp8"}}
    # a key taken back out is dropped from that file, the file still named; with the line's fraction beside it, the
    # fraction moves into the file (KvCacheConfig replaced whole before PR #9262) and leaves the line
    fp8 = own.model_copy(update={"kv_cache_dtype": "fp8"})
    assert launch_change(fp8, own).said() == "drop kv_cache_config.dtype from your --extra_llm_api_options file"
    shared = own.model_copy(update={"free_gpu_memory_fraction": 0.85})
    assert set_words(shared, kv_cache_dtype="fp8") == ("drop --kv_cache_free_gpu_memory_fraction · add to your "
        "--extra_llm_api_options file: {kv_cache_config: {dtype: fp8, free_gpu_memory_fraction: 0.85}}")  # fmt: skip
    # without a file of its own the launch is given kvtop's, pointer and body
    plain = parse_flags("trtllm", ["--tp_size", "8", "--engine-version", "1.1.0"])
    assert set_words(plain, kv_cache_dtype="fp8").startswith(f"--extra_llm_api_options {TRT_FILE} · {TRT_FILE}: ")


def test_the_copied_launch_keeps_the_persons_own_yaml_as_its_pointer() -> None:
    """The launch after the fix (copied by plan, diagnose's fix_launch and the planner) names the person's own file,
    never kvtop's `extra_llm_api_options.yaml` (pasted, that drops every key of theirs: FR2 #3), with or without keys of
    kvtop's to add; `engine_config` marks it own and the one-line form says to add the keys to it."""
    from kvtop.commands.render_launch import engine_config_json
    from kvtop.domain.launch_change import launch_words

    own = parse_flags("trtllm", ["--tp_size", "8", "--extra_llm_api_options", "/cfg/my.yaml", "--engine-version", "1.1.0"])
    assert own.engine_launch().line == ("--tp_size", "8", "--extra_llm_api_options", "/cfg/my.yaml")
    launch = own.model_copy(update={"kv_cache_dtype": "fp8"}).engine_launch()
    assert launch.line == ("--tp_size", "8", "--extra_llm_api_options", "/cfg/my.yaml")
    assert (launch.config_file, launch.config_own) == ("/cfg/my.yaml", True)
    assert launch_words(launch) == ("--tp_size 8 --extra_llm_api_options /cfg/my.yaml · add to /cfg/my.yaml: "
                                    "{kv_cache_config: {dtype: fp8}}")  # fmt: skip
    config = engine_config_json(launch)
    assert config is not None and (config["file"], config["own"]) == ("/cfg/my.yaml", True)


def test_a_repeated_option_is_one_group_of_all_its_uses() -> None:
    """vLLM's `--lora-modules` may be given twice (argparse nargs='+' per use); the change keeps both uses."""
    groups = options(["--lora-modules", "a=/x", "--tp", "2", "--lora-modules", "b=/y"])
    assert groups["--lora-modules"] == ("--lora-modules", "a=/x", "--lora-modules", "b=/y")
    assert groups["--tp"] == ("--tp", "2")


def test_before_trtllm_serve_the_words_are_kvtops_and_say_so() -> None:
    """TensorRT-LLM 0.8.0 has no trtllm-serve (first in 0.15.0): no line of the engine's to write; kvtop's own spelling,
    named as such, not passed off as the engine's."""
    old = LaunchSettings(engine="trtllm", engine_version="0.8.0")
    words = set_words(old, free_gpu_memory_fraction=0.92)
    assert words.startswith("--kv_cache_free_gpu_memory_fraction 0.92 (")
    assert f"({KVTOP_SPELLING}: TensorRT-LLM 0.8.0 has no trtllm-serve, first in 0.15.0" in words


def test_a_dropped_share_says_drop_and_a_switch_comes_in_the_releases_form() -> None:
    """Dropping vLLM's share is `drop --gpu-memory-utilization`; a BooleanOptionalAction switch off at v0.11.0 is
    `--no-enable-prefix-caching` (engine/arg_utils.py's CacheConfig field; switch_spelling.py)."""
    set_share = LaunchSettings(engine="vllm", gpu_memory_utilization=0.95)
    assert set_words(set_share, gpu_memory_utilization=None) == "drop --gpu-memory-utilization"
    before = parse_flags("vllm", ["--engine-version", "0.11.0"])
    after = parse_flags("vllm", ["--engine-version", "0.11.0", "--no-enable-prefix-caching"])
    assert launch_change(before, after).said() == "--no-enable-prefix-caching"


def _sample(engine: str, field: str) -> object | None:
    """A value of `field` other than its default that the engine's flags take (None: no plain sample)."""
    kind = FIELD_TYPES[field]
    if field in ("tp", "pp", "dp", "ep", "dcp"):
        return 2
    if kind is bool:
        return True
    if kind is int:
        return 4096
    if kind is float:
        return 0.5
    return {"dtype": "bfloat16", "quantization": "fp8"}.get(field)


# (engine, field) whose change may be said in kvtop's own spelling, each with why (FR2 #5: any other writer that drops
# a field fails here, not passes on `to_flags`'s fallback): TensorRT-LLM's PyTorch backend (the latest's default)
# builds no engine, its quantization is the checkpoint's (test_the_pytorch_backend_names_no_build_step_…)
KVTOP_SPELLED: frozenset[tuple[str, str]] = frozenset({("trtllm", "quantization")})


@pytest.mark.parametrize("engine", ENGINE_IDS)
def test_every_modelled_setting_is_written_back(engine: str) -> None:
    """The copied launch (and so every fix) writes each field the engine's flags read: a field read and never written
    is lost from a pasted line and leaves a fix that moves it empty (SGLang's --disable-radix-cache, --dtype,
    --dcp-size and LMDeploy's --cp were, before session 72)."""
    lost = []
    # LMDeploy leaves out, by name and why, what its CLI does not take at every release (flags.NOT_WRITTEN)
    kept_out: Mapping[str, str] = getattr(engine_module(engine, "flags"), "NOT_WRITTEN", {})
    for spelling, field in engine_flags(engine).spellings.items():
        value = _sample(engine, field)
        if field in ("model", "host", "port", "engine_version", *kept_out) or value is None:
            continue
        try:
            changed = LaunchSettings(engine=engine, **{"tp": 2} if field == "dcp" else {}, **{field: value})
        except ValueError:
            continue  # a value the engine refuses alone (checked where it is read)
        base = LaunchSettings(engine=engine, **{"tp": 2} if field == "dcp" else {})
        change = launch_change(base, changed)
        # a change the engine's writer dropped falls back to kvtop's own spelling (`spelled_by`): lost all the same,
        # unless named in KVTOP_SPELLED
        if change.empty or (change.spelled_by and (engine, field) not in KVTOP_SPELLED):
            lost.append(spelling)
    assert lost == []

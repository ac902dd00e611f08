"""A TensorRT-LLM launch as `trtllm-serve` takes it: serve's own click options on the line, every other LLM-API key a
rule reads in the `--extra_llm_api_options` YAML the line names, a TensorRT engine's build flags apart.

`trtllm-serve serve` declares its options with click (tensorrt_llm/commands/serve.py); an option it does not declare
(`--kv_cache_config.dtype`, `--moe_config.backend`, `--disable_overlap_scheduler`) stops it with "No such option".
The YAML is read by `update_llm_args_with_extra_dict` (llmapi/llm_utils.py) and wins over the line. Build flags
(`--qformat`: quantize.py; `--max_input_len`, `--use_gpt_attention_plugin`: trtllm-build) shape a TensorRT engine
before serve loads it: no serve option or YAML key sets them. kvtop's `--dp` is not TensorRT-LLM's: one trtllm-serve
is one replica, and `enable_attention_dp: true` makes every one of the tp ranks its own attention rank (dp = tp).
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.engine_launch import EngineLaunch, yaml_flow
from kvtop.domain.engines.trtllm.cuda_graphs import EMPTY_MAPPING, GRAPHS_KEY, NULL_WORDS
from kvtop.domain.engines.trtllm.deployment import FLAGS as DEPLOYMENT_FLAGS
from kvtop.domain.engines.trtllm.engine_build import EMBEDDING_SHARING_FLAG, OLD_BUILDER_FLAGS
from kvtop.domain.engines.trtllm.eras import CALENDAR, default_backend
from kvtop.domain.engines.trtllm.overlap_scheduler import OVERLAP_KEYS, flag_bool
from kvtop.domain.engines.versions import NOT_STATED, from_flag, parse_release
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.launch_vocabulary import written_flags

SERVE_SOURCE = (
    "tensorrt_llm/commands/serve.py `serve`'s @click.option names, read at NVIDIA/TensorRT-LLM 4c05a748 (a 2025 "
    "tree: --tp_size, --kv_cache_free_gpu_memory_fraction, --extra_llm_api_options, no --config) and 00209af1 (a "
    "2026 tree: the same plus the long aliases and --config); not read before trtllm-serve had --backend"
)
# the options both trees declare: the line is written from these alone
SERVE_OPTIONS = frozenset({
    "--tokenizer", "--host", "--port", "--backend", "--log_level", "--max_beam_width", "--max_batch_size",
    "--max_num_tokens", "--max_seq_len", "--tp_size", "--pp_size", "--ep_size", "--cluster_size", "--gpus_per_node",
    "--kv_cache_free_gpu_memory_fraction", "--num_postprocess_workers", "--trust_remote_code", "--extra_llm_api_options",
    "--reasoning_parser", "--metadata_server_config_file", "--server_role", "--fail_fast_on_attention_window_too_large",
    "--disagg_cluster_uri", "--enable_chunked_prefill", "--media_io_kwargs",
})  # fmt: skip
# declared at 00209af1 only (aliases of the above, or later options)
SERVE_OPTIONS_2026 = frozenset({
    "--tensor_parallel_size", "--pipeline_parallel_size", "--context_parallel_size", "--cp_size",
    "--moe_expert_parallel_size", "--moe_cluster_parallel_size", "--free_gpu_memory_fraction", "--config",
    "--custom_tokenizer", "--custom_module_dirs", "--revision", "--tool_parser", "--otlp_traces_endpoint",
    "--chat_template",
})  # fmt: skip
CONFIG_OPTION = "--extra_llm_api_options"
CONFIG_FILE = "extra_llm_api_options.yaml"
BUILD_SAID = ("the TensorRT engine's build: quantize.py --qformat / --kv_cache_dtype, trtllm-build the rest (the "
              "--use_*_plugin / --enable_context_fmha / --use_inflight_batching spellings are 0.8's examples/<model>/"
              "build.py; trtllm-build's is --gpt_attention_plugin …); not serve's, and the line's --max_batch_size, "
              "--max_num_tokens, --max_seq_len, --max_beam_width may not exceed the engine's build limits")
# the tool of the build step that takes each build flag (BUILD_SAID): quantize.py the checkpoint's formats, 0.8's
# examples/<model>/build.py its --use_* / --enable_* switches (and, with convert_checkpoint.py, embedding sharing),
# trtllm-build every other (--tokens_per_block, --max_input_len)
_QUANTIZE_FLAGS = frozenset({"--qformat", "--kv_cache_dtype"})
_EXAMPLE_BUILD_FLAGS = frozenset(f"--{name}" for name in OLD_BUILDER_FLAGS)


def _build_tool(flag: str) -> str:
    if flag in _QUANTIZE_FLAGS:
        return "quantize.py"
    if flag in _EXAMPLE_BUILD_FLAGS:
        return "examples/<model>/build.py (0.8)"
    if flag == f"--{EMBEDDING_SHARING_FLAG}":
        return "examples/<model>/build.py or convert_checkpoint.py"
    return "trtllm-build"


# the PyTorch backend builds no TensorRT engine: its quantization is the checkpoint's (hf_quant_config.json /
# config.json quantization_config, read by the model loader), so `--qformat` is no setting of its launch; a build flag
# the launch was given is said as kvtop's record of it, naming no build step
PYTORCH_BUILD_SAID = ("no build step on the PyTorch backend (it builds no TensorRT engine): kvtop's record of what the "
                      "launch was given, not a setting trtllm-serve or its YAML takes")

# the modelled fields serve's options set (field -> option), in the order the line writes them
_LINE: Mapping[str, str] = {
    "tp": "--tp_size", "pp": "--pp_size", "ep": "--ep_size", "backend": "--backend",
    "max_running_requests": "--max_batch_size", "max_num_batched_tokens": "--max_num_tokens",
    "context_length": "--max_seq_len", "max_beam_width": "--max_beam_width",
}  # fmt: skip
_FRACTION = "--kv_cache_free_gpu_memory_fraction"
# the modelled fields only the YAML sets (field -> its dotted key)
_YAML_FIELDS: Mapping[str, str] = {
    "kv_cache_dtype": "kv_cache_config.dtype", "page_size": "kv_cache_config.tokens_per_block",
    "kv_cache_max_tokens": "kv_cache_config.max_tokens", "max_gpu_total_bytes": "kv_cache_config.max_gpu_total_bytes",
    "enable_dp_attention": "enable_attention_dp", "cuda_graph_max_bs": "cuda_graph_config.max_batch_size",
}  # fmt: skip
_BUILD_FIELDS: Mapping[str, str] = {"quantization": "--qformat", "max_input_len": "--max_input_len"}
# a TensorRT engine's KV dtype and block size are built in (quantize.py `--kv_cache_dtype`, trtllm-build
# `--tokens_per_block`; eras.ENGINE_TOKENS_PER_BLOCK_ERAS): said with the build where the backend is TensorRT
_ENGINE_BUILT: Mapping[str, str] = {"kv_cache_dtype": "--kv_cache_dtype", "page_size": "--tokens_per_block"}
# before 1.0 serve's `--backend` took only `pytorch` ("Set to 'pytorch' for pytorch path. Default is cpp path.",
# Choice(["pytorch"]) default None: nvidia.github.io/TensorRT-LLM/0.18.2/commands/trtllm-serve.html; find_string copies
# 50627517773, 6225645832): a TensorRT engine is served with no --backend there, and `--backend tensorrt` is refused
# trtllm-serve's first release: 0.15.0 (its docs' release list has no trtllm-serve page before; not pinned at the
# tags). Before it a TensorRT engine is run by Triton's tensorrtllm backend (config.pbtxt) or examples/run.py
SERVE_SINCE = "0.15.0"
# PR #4603 ("Flatten PyTorchConfig knobs into TorchLlmArgs"; 0.21.0rc0, uploaded 2025-06-04, read as its first release,
# not pinned) gave the YAML the sections kvtop writes; before, the PyTorch backend's knobs sat under
# pytorch_backend_config (PyTorchConfig, ids 377615380, 204719384; the DeepSeek-R1 blog's YAML, id 56391322792)
FLAT_SINCE = "0.21.0rc0"
_BEFORE_FLAT: Mapping[str, str] = {
    "cuda_graph_config": "pytorch_backend_config.use_cuda_graph / cuda_graph_max_batch_size",
    "moe_config": "pytorch_backend_config.moe_backend / moe_load_balancer",
}
BUILD_FLAGS = frozenset(f"--{name}" for name in (*OLD_BUILDER_FLAGS, EMBEDDING_SHARING_FLAG))
# the read keys (kept in `flags` by their dotted path) that go in the YAML, and how each value is typed there
YAML_KEYS = frozenset({
    "moe_config.backend", "allreduce_strategy", "use_cute_dsl_blockscaling_bmm", "cache_transceiver_config.backend",
    "cache_transceiver_config.max_tokens_in_buffer", GRAPHS_KEY, *OVERLAP_KEYS,
}) | {flag[2:] for flag in DEPLOYMENT_FLAGS}  # fmt: skip
BOOL_KEYS = frozenset({"use_cute_dsl_blockscaling_bmm", *OVERLAP_KEYS})
_INT_KEYS = frozenset({
    "cache_transceiver_config.max_tokens_in_buffer", "speculative_config.max_draft_len",
    "speculative_config.num_nextn_predict_layers", "moe_config.load_balancer.num_slots", "lora_config.max_loras",
    "lora_config.max_lora_rank", "kv_cache_config.host_cache_size",
})  # fmt: skip
_LINE_KEYS = frozenset({"gpus_per_node"})  # read keys that are serve options
# every option the line writes is one both trees declare (SERVE_SOURCE); SERVE_OPTIONS_2026's are never written
if not {*_LINE.values(), _FRACTION, CONFIG_OPTION, *(f"--{key}" for key in _LINE_KEYS)} <= SERVE_OPTIONS:
    raise RuntimeError("serve_launch writes an option trtllm-serve does not declare")


def _put(body: dict[str, object], path: str, value: object) -> None:
    """Set a dotted key in the nested body; never replaces a section that holds keys (`cuda_graph_config: {}` beside
    `cuda_graph_config.max_batch_size`: the section stays), and a child under a section set to null is left out
    (graphs_off refuses null beside a child before a plan is made)."""
    *parents, leaf = path.split(".")
    node = body
    for part in parents:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            return
        node = child
    if isinstance(node.get(leaf), dict) and node[leaf]:
        return
    node[leaf] = value


def _yaml_value(key: str, raw: object) -> object:
    """A kept value as the YAML types it: the null words null, a count an int, else the text."""
    text = str(raw).strip()
    if text.lower() in NULL_WORDS:
        return None
    if key == GRAPHS_KEY and text == EMPTY_MAPPING:
        return {}  # the default CudaGraphConfig as a mapping, not the string '{}' (Optional[CudaGraphConfig] refuses it)
    if key in _INT_KEYS and text.lstrip("-").isdigit():
        return int(text)
    return text


def tensorrt_engine(settings: LaunchSettings) -> bool:
    """Whether the launch serves a built TensorRT engine: `--backend tensorrt` / `trt`, or unset before 1.0 (at a stated
    release; unstated is the latest, whose default is the PyTorch backend)."""
    if settings.backend is not None:
        return settings.backend in ("tensorrt", "trt")
    return _default_is_tensorrt(settings)


def _default_is_tensorrt(settings: LaunchSettings) -> bool:
    """Whether the launch's release serves a TensorRT engine with `--backend` unset (eras.DEFAULT_BACKEND_ERAS)."""
    version = from_flag(settings.engine_version, CALENDAR) if settings.engine_version else NOT_STATED
    return default_backend(version) == "tensorrt"


def yaml_body(settings: LaunchSettings) -> dict[str, object]:
    """The --extra_llm_api_options body: the modelled fields only the YAML sets, the read keys the launch set (a
    switch written true, or left out where false), and the fraction beside any kv_cache_config key (before PR #9262 a
    YAML kv_cache_config replaced the line's whole KvCacheConfig, its fraction back at 0.9)."""
    body: dict[str, object] = {}
    built = tensorrt_engine(settings)
    for field, key in _YAML_FIELDS.items():
        if built and field in _ENGINE_BUILT:
            continue
        value = getattr(settings, field)
        if value is None or value is False or (field == "kv_cache_dtype" and value == "auto"):
            continue
        _put(body, key, value)
    for key in sorted(YAML_KEYS):
        raw = settings.flags.get(key)
        if raw is None:
            continue
        if key in BOOL_KEYS:
            if flag_bool(raw, key):
                _put(body, key, True)
            continue
        _put(body, key, _yaml_value(key, raw))
    if "kv_cache_config" in body and settings.free_gpu_memory_fraction is not None:
        _put(body, "kv_cache_config.free_gpu_memory_fraction", settings.free_gpu_memory_fraction)
    return body


def _before(settings: LaunchSettings, since: str) -> bool:
    """Whether the stated release is before `since` (an unstated one is the latest: never)."""
    release, first = parse_release(settings.engine_version), parse_release(since)
    return release is not None and first is not None and release < first


def _line_fields(settings: LaunchSettings) -> Mapping[str, str]:
    """Serve's options for the modelled fields: without `--backend` where it names a TensorRT engine before 1.0 (serve's
    Choice then was `pytorch` alone, unset the TensorRT engine)."""
    if tensorrt_engine(settings) and _default_is_tensorrt(settings):
        return {field: option for field, option in _LINE.items() if field != "backend"}
    return _LINE


def serve_launch(settings: LaunchSettings) -> EngineLaunch:
    """trtllm-serve's line (serve's options only, `--extra_llm_api_options` naming the YAML where it has a body), the
    YAML's body, and the build flags apart; before trtllm-serve's first release no line, and that named."""
    body = yaml_body(settings)
    line = written_flags(settings, _line_fields(settings))
    if "kv_cache_config" not in body and settings.free_gpu_memory_fraction is not None:
        line += [_FRACTION, repr(settings.free_gpu_memory_fraction)]
    for key in sorted(_LINE_KEYS):
        raw = settings.flags.get(key)
        if raw is not None and raw is not False:
            line += [f"--{key}"] if raw is True else [f"--{key}", str(raw)]
    # the person's own file stays the line's pointer and the file kvtop's keys are added to (FR2 #3): kvtop's own name
    # would drop it when pasted
    own = settings.extra_llm_api_options or None
    file = own or CONFIG_FILE
    if body or own:
        line += [CONFIG_OPTION, file]
    engine_built = tensorrt_engine(settings)
    build = written_flags(settings, {**_BUILD_FIELDS, **_ENGINE_BUILT} if engine_built else {
        field: flag for field, flag in _BUILD_FIELDS.items() if field != "quantization"})  # fmt: skip
    build_said = (BUILD_SAID if engine_built else PYTORCH_BUILD_SAID) if build else ""
    tools = {flag: _build_tool(flag) for flag in build if flag.startswith("--")} if engine_built else {}
    for flag in sorted(BUILD_FLAGS):
        raw = settings.flags.get(flag[2:])
        if raw is not None and raw is not False:
            build += [flag] if raw is True else [flag, str(raw)]
    older = [f"{key} ({_BEFORE_FLAT[key]} there)" for key in _BEFORE_FLAT if key in body]
    said = (f"not TensorRT-LLM {settings.engine_version}'s schema: {', '.join(older)}; these sections came with PR "
            f"#4603 ({FLAT_SINCE}, not pinned), kvtop does not write the older spelling") if older and _before(
        settings, FLAT_SINCE) else ""  # fmt: skip
    if _before(settings, SERVE_SINCE):  # no file to name: the options alone, the YAML's keys said apart
        options = line[:-2] if body else line
        said = (f"TensorRT-LLM {settings.engine_version} has no trtllm-serve, first in {SERVE_SINCE} (not pinned): the "
                "engine runs under Triton's tensorrtllm backend (config.pbtxt) or examples/run.py, whose options kvtop "
                "does not write" + (f"; kvtop's settings: {' '.join(options)}" if options else "")
                + (f"; LLM-API keys: {yaml_flow(body)}" if body else ""))
        return EngineLaunch(line=(), line_said=said, build=tuple(build), build_said=build_said, build_tools=tools)
    moved = {"kv_cache_config.free_gpu_memory_fraction": _FRACTION} if "kv_cache_config" in body and (
        settings.free_gpu_memory_fraction is not None) else {}  # fmt: skip
    return EngineLaunch(line=tuple(line), config=body, config_option=CONFIG_OPTION if body or own else None,
                        config_file=file if body or own else None, build=tuple(build), build_said=build_said,
                        config_said=said, config_own=own is not None, moved=moved,
                        build_tools=tools)  # fmt: skip

"""TensorRT-LLM's command line: `trtllm-serve [serve] MODEL` (click, underscores), its
`--extra_llm_api_options` / `--config` YAML, and Dynamo's `python -m dynamo.trtllm` (hyphens).

Spellings from `tensorrt_llm/commands/serve.py` (`serve`'s click options) and
docs/engines/trtllm.md §6, §8. The YAML's keys have no serve option of their own; kvtop
spells each as `--<section>.<key>` (the YAML path, written as a flag), so a plan, a cause and a fix can
say them, and reads them so after `kvtop plan … --`; what trtllm-serve takes (`launch_parts`) puts them
back in the YAML (serve_launch.py). `settings_with_options` maps a read YAML onto the settings: the YAML wins over the
command line, as `update_llm_args_with_extra_dict` makes it win in trtllm-serve.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kvtop.domain.engine_launch import EngineLaunch
from kvtop.domain.engines.trtllm.build_quant import BUILD_QUANT
from kvtop.domain.engines.trtllm.build_quant import SOURCE as BUILD_SOURCE
from kvtop.domain.engines.trtllm.cuda_graphs import GRAPHS_KEY, NULL_WORDS, graphs_off
from kvtop.domain.engines.trtllm.deployment import FLAGS as DEPLOYMENT_FLAGS
from kvtop.domain.engines.trtllm.max_seq_len import ALLOW_LONG_ENV
from kvtop.domain.engines.trtllm.overlap_scheduler import OVERLAP_KEYS, flag_bool
from kvtop.domain.engines.trtllm.serve_launch import BOOL_KEYS, BUILD_FLAGS, serve_launch
from kvtop.domain.engines.versions import parse_release
from kvtop.domain.errors import InputError
from kvtop.domain.launch import NO_WORDS, LaunchSettings, OwnFlag, written_flags
from kvtop.domain.launch_tokens import positional_model
from kvtop.domain.launch_vocabulary import NeutralGroup, refuse_unlisted_kv_dtype
from kvtop.domain.load_casts import LoadCasts
from kvtop.domain.redact import quoted, shown_cut

SPELLINGS: Mapping[str, str] = {
    # trtllm-serve (the first spelling of each field is the one kvtop names)
    "--host": "host",
    "--port": "port",
    "--tp_size": "tp",
    "--tensor_parallel_size": "tp",
    "--pp_size": "pp",
    "--pipeline_parallel_size": "pp",
    "--ep_size": "ep",
    "--moe_expert_parallel_size": "ep",
    "--kv_cache_free_gpu_memory_fraction": "free_gpu_memory_fraction",
    "--free_gpu_memory_fraction": "free_gpu_memory_fraction",
    "--max_batch_size": "max_running_requests",
    "--max_num_tokens": "max_num_batched_tokens",
    "--max_seq_len": "context_length",
    "--max_beam_width": "max_beam_width",
    "--backend": "backend",
    "--extra_llm_api_options": "extra_llm_api_options",
    "--config": "extra_llm_api_options",
    # the YAML's keys, written as flags
    "--kv_cache_config.dtype": "kv_cache_dtype",
    "--kv_cache_config.tokens_per_block": "page_size",
    "--kv_cache_config.max_tokens": "kv_cache_max_tokens",
    "--kv_cache_config.max_gpu_total_bytes": "max_gpu_total_bytes",
    "--kv_cache_config.free_gpu_memory_fraction": "free_gpu_memory_fraction",
    "--enable_attention_dp": "enable_dp_attention",
    "--cuda_graph_config.max_batch_size": "cuda_graph_max_bs",
    # trtllm-build / quantize.py: a TensorRT engine's KV dtype and block size are built in
    "--kv_cache_dtype": "kv_cache_dtype",
    "--tokens_per_block": "page_size",
    # and the longest prompt the engine admits: pre-v0.8 engines size TensorRT's activation memory from
    # max_batch_size × max_input_len (calibration.packed_tokens_estimate)
    "--max_input_len": "max_input_len",
    # how the engine's weights were quantized at build (build_quant.py): quantize.py's `--qformat`, or the
    # checkpoint's / engine's config.json `quantization.quant_algo` written as a flag
    "--qformat": "quantization",
    "--quantization.quant_algo": "quantization",
    # the Triton `tensorrtllm` backend's model parameters (config.pbtxt, tensorrtllm_backend ≤ v0.8 era on):
    # the same executor settings under the backend's own names
    "--kv_cache_free_gpu_mem_fraction": "free_gpu_memory_fraction",
    "--max_tokens_in_paged_kv_cache": "kv_cache_max_tokens",
    # Dynamo (`python -m dynamo.trtllm`, docs/engines/trtllm.md §8)
    "--model-path": "model",
    "--tensor-parallel-size": "tp",
    "--pipeline-parallel-size": "pp",
    "--expert-parallel-size": "ep",
    "--max-seq-len": "context_length",
    "--max-num-tokens": "max_num_batched_tokens",
    "--max-batch-size": "max_running_requests",
    "--free-gpu-memory-fraction": "free_gpu_memory_fraction",
    "--extra-engine-args": "extra_llm_api_options",
    "--kv-block-size": "page_size",
}
# a TensorRT engine's build flags a plan reads (engine_build.py, serve_launch.BUILD_FLAGS): build.py's own spellings,
# which say a v0.8 engine was made by the old builder, and `--use_embedding_sharing` (build.py, convert_checkpoint),
# which shares a tied LM head
# trtllm-serve's other options: they do not change the KV budget kvtop models (kept verbatim). `--trust_remote_code`
# (commands/serve.py `serve`: `@click.option("--trust_remote_code", is_flag=True)`, read at commit 00209af1) lets
# the model's own code load; click takes option names as declared, so `--trust-remote-code` is refused, naming this
# spelling (unknown_flags.respelled); Dynamo's TensorRT-LLM worker options (dynamo/trtllm/backend_args.py) have neither
PASSTHROUGH = frozenset(
    {
        "--tokenizer",
        "--custom_tokenizer",
        "--custom_module_dirs",
        "--log_level",
        "--context_parallel_size",
        "--cp_size",
        "--moe_cluster_parallel_size",
        "--cluster_size",
        "--num_postprocess_workers",
        "--trust_remote_code",
        "--revision",
        "--reasoning_parser",
        "--tool_parser",
        "--metadata_server_config_file",
        "--server_role",
        "--fail_fast_on_attention_window_too_large",
        "--otlp_traces_endpoint",
        "--disagg_cluster_uri",
        "--enable_chunked_prefill",
        "--media_io_kwargs",
        "--chat_template",
        "--kv_cache_config.enable_block_reuse",
        "--override-engine-args",
    }
)
# the flags a rule reads (the LLM API's keys, as the YAML writes them): moe_weights.py the MXFP4 experts' padding;
# allreduce_workspace.py the fusion workspace (strategy, the node's GPUs); deepseek_weights.py MLA's BF16 dequantized
# copies; engine_build.py which builder made a v0.8 engine, a tied head shared; transceiver_buffers.py a disaggregated
# worker's transfer buffers (named, not charged); cuda_graphs.py whether the decode CUDA graphs are captured
# (`cuda_graph_config: null`, written `--cuda_graph_config null`); budget.py the profiling run's temporary pool
# (`disable_overlap_scheduler`; before PR #4603 `pytorch_backend_config.disable_overlap_scheduler`, before PR #4174
# `pytorch_backend_config.enable_overlap_scheduler`, overlap_scheduler.KEY_ERAS: one generated token
# a dummy request instead of two, §3 step 1)
READ_BY_RULES = frozenset({"--moe_config.backend", "--allreduce_strategy", "--gpus_per_node",
                           "--use_cute_dsl_blockscaling_bmm", "--cache_transceiver_config.backend",
                           "--cache_transceiver_config.max_tokens_in_buffer", "--cuda_graph_config",
                           *(f"--{key}" for key in OVERLAP_KEYS)}) | BUILD_FLAGS  # fmt: skip
PASSTHROUGH = PASSTHROUGH | READ_BY_RULES | DEPLOYMENT_FLAGS  # deployment.py reads DEPLOYMENT_FLAGS
PREFERRED: Mapping[str, str] = {
    "tp": "--tp_size",
    "pp": "--pp_size",
    "ep": "--ep_size",
    "backend": "--backend",
    "max_running_requests": "--max_batch_size",
    "max_num_batched_tokens": "--max_num_tokens",
    "context_length": "--max_seq_len",
    "max_beam_width": "--max_beam_width",
    "max_input_len": "--max_input_len",
    "free_gpu_memory_fraction": "--kv_cache_free_gpu_memory_fraction",
    "kv_cache_dtype": "--kv_cache_config.dtype",
    "page_size": "--kv_cache_config.tokens_per_block",
    "kv_cache_max_tokens": "--kv_cache_config.max_tokens",
    "max_gpu_total_bytes": "--kv_cache_config.max_gpu_total_bytes",
    "enable_dp_attention": "--enable_attention_dp",
    "cuda_graph_max_bs": "--cuda_graph_config.max_batch_size",
    "dp": "--dp",
    "quantization": "--qformat",
}
KV_CACHE_DTYPES = ("auto", "fp8", "nvfp4")  # KvCacheConfig.dtype (llm_args.py): "auto" follows the checkpoint
BACKENDS = ("pytorch", "tensorrt", "trt", "_autodeploy")
ENTRY_MODULES = ("tensorrt_llm.commands.serve", "dynamo.trtllm")

# the YAML's keys kvtop reads (dotted path -> LaunchSettings field); the rest is kept verbatim
_OPTION_FIELDS: Mapping[str, str] = {
    "kv_cache_config.free_gpu_memory_fraction": "free_gpu_memory_fraction",
    "kv_cache_config.max_tokens": "kv_cache_max_tokens",
    "kv_cache_config.max_gpu_total_bytes": "max_gpu_total_bytes",
    "kv_cache_config.dtype": "kv_cache_dtype",
    "kv_cache_config.tokens_per_block": "page_size",
    "tensor_parallel_size": "tp",
    "pipeline_parallel_size": "pp",
    "moe_expert_parallel_size": "ep",
    "max_batch_size": "max_running_requests",
    "max_num_tokens": "max_num_batched_tokens",
    "max_seq_len": "context_length",
    "max_beam_width": "max_beam_width",
    "backend": "backend",
    "enable_attention_dp": "enable_dp_attention",
    "cuda_graph_config.max_batch_size": "cuda_graph_max_bs",
}
_OPTION_TYPES: Mapping[str, type] = {
    "free_gpu_memory_fraction": float,
    "kv_cache_max_tokens": int,
    "max_gpu_total_bytes": int,
    "kv_cache_dtype": str,
    "page_size": int,
    "tp": int,
    "pp": int,
    "ep": int,
    "max_running_requests": int,
    "max_num_batched_tokens": int,
    "context_length": int,
    "max_beam_width": int,
    "backend": str,
    "enable_dp_attention": bool,
    "cuda_graph_max_bs": int,
}
_MAX_OPTION_KEYS = 4096
# before PR #9262 ("Prevent YAML partial kv_cache_config from incorrectly overriding …") the YAML's kv_cache_config
# replaced the line's whole KvCacheConfig (llm_utils.update_llm_args_with_extra_dict: `llm_args | llm_args_dict`), so
# a YAML kv_cache_config without the fraction ran at KvCacheConfig's 0.9, whatever the line said. The PR's merge date
# was not read (no copy of the merge commit found). Its thread (NVIDIA/TensorRT-LLM#9262, issues corpus) has a first
# /bot run 2025-11-18 and a reviewer asking for tests 2025-11-27, so it was not merged before 2025-11-27: 1.2.0rc3
# (PyPI 2025-11-21) and 1.2.0rc4 (2025-11-25) are read as lacking it; 1.2.0rc5 (2025-12-10) on as carrying it (the
# first upload after that review; not pinned: the merge may be later)
PARTIAL_KV_CONFIG_SINCE = "1.2.0rc5"
# a 16-bit checkpoint built into a quantized engine (`--qformat`, `quant_algo`): the engine's weights
LOAD_CASTS = LoadCasts(online_quant=BUILD_QUANT, quantization_flag="--qformat", when="at build",
                       releases="TensorRT-LLM 0.8 on (QuantAlgo)", source=BUILD_SOURCE)  # fmt: skip


class TrtllmFlags:
    load_casts: LoadCasts = LOAD_CASTS
    spellings: Mapping[str, str] = SPELLINGS
    own_flags: Mapping[str, OwnFlag] = {}  # kvtop takes no flag of its own for this engine
    kv_cache_dtypes: tuple[str, ...] = KV_CACHE_DTYPES
    # how the server takes its model (every release kvtop models, tensorrt_llm/commands/serve.py: `@click.argument("model", type=str)`,
    # `trtllm-serve MODEL [options]`; it has no model option)
    model_flag: str | None = None
    passthrough: frozenset[str] = PASSTHROUGH
    read_by_rules: frozenset[str] = READ_BY_RULES
    # max_seq_len.py: TLLM_ALLOW_LONG_MAX_MODEL_LEN keeps a --max_seq_len above the inferred one (1.3.0rc0 on)
    env_read: frozenset[str] = frozenset({ALLOW_LONG_ENV})
    release_images: frozenset[str] = frozenset()  # no container image whose tag kvtop reads as the release
    # trtllm-serve's click options (tensorrt_llm/commands/serve.py) and the YAML's LlmArgs fields are not
    # classified yet: no list of those with no effect on memory, none of those kvtop does not model; a flag outside
    # SPELLINGS and PASSTHROUGH is refused as unknown
    memory_neutral_groups: Mapping[str, NeutralGroup] = {}
    memory_neutral: frozenset[str] = frozenset()
    unmodelled: frozenset[str] = frozenset()
    partly_read: Mapping[str, str] = {}  # no unmodelled flag a rule reads in part
    value_placeholders: Mapping[str, str] = {}  # no pass-through flag listed with a placeholder
    list_valued: frozenset[str] = frozenset()  # no flag kvtop reads takes several values
    # no flag of TensorRT-LLM's CLIs takes a secret: trtllm-serve's `serve`, `grpc`, `mm_embedding_serve` and
    # `disaggregated` options (tensorrt_llm/commands/serve.py, NVIDIA/TensorRT-LLM@00209af1), their shared
    # common_llm_options.py (@1f719075) and trtllm-bench's (commands/bench.py, @0c9a37db) name none; an API key was
    # asked for in NVIDIA/TensorRT-LLM#9950 (2025-12) and not added. A hub token comes from HF_TOKEN (masked by its name)
    secret_flags: frozenset[str] = frozenset()
    # llm_args.py: max_gpu_total_bytes 0 is "unset" (the fraction decides)
    specials: Mapping[str, tuple[int, str]] = {"max_gpu_total_bytes": (0, "leaves it unset")}
    choices: Mapping[str, tuple[str, ...]] = {"backend": BACKENDS}

    def refuse(self, field: str, value: object, flag: str) -> None:
        return None

    def check_parallel(self, settings: LaunchSettings) -> None:
        """TensorRT-LLM splits experts inside the TP group (moe_tp × moe_ep = tp); attention DP makes every
        one of the tp ranks its own attention rank; it has no decode context parallelism."""
        if settings.ep > 1 and settings.tp % settings.ep:
            raise InputError(
                f"expert parallel size {settings.ep} must divide tp {settings.tp} "
                "(TensorRT-LLM splits the experts inside the TP group)",
                field="--ep_size",
            )
        if settings.dcp > 1:
            raise InputError(
                "TensorRT-LLM has no decode context parallelism (its --cp_size is not modelled)",
                field="--dcp",
            )
        if settings.enable_dp_attention and settings.dp != settings.tp:
            raise InputError(
                f"TensorRT-LLM's attention DP gives each of the tp {settings.tp} ranks its own attention: "
                f"add --dp {settings.tp} (or set enable_attention_dp in the --extra_llm_api_options YAML)",
                field="--enable_attention_dp",
            )
        if not settings.enable_dp_attention and settings.dp > 1:
            raise InputError(
                "one trtllm-serve runs one replica: data parallelism is several servers "
                "(or enable_attention_dp: true)",
                field="--dp",
            )

    def launch_parts(self, settings: LaunchSettings) -> EngineLaunch:
        """What trtllm-serve takes: serve's options, the --extra_llm_api_options YAML, the build's flags apart."""
        return serve_launch(settings)

    def to_flags(self, settings: LaunchSettings) -> list[str]:
        """The modelled settings, then every key a rule reads that the launch (or its --extra_llm_api_options YAML)
        set, as kvtop spells the YAML's keys (`--moe_config.backend TRTLLM`, `--cuda_graph_config null`): a line
        without them plans another launch (gpt-oss-120b on a B200 at 1.3.0rc10 with `moe_config.backend: TRTLLM` pads
        its MXFP4 experts' hidden to 3,072, 4.35 GiB beyond the book: 2,559,648 tokens; the default CUTLASS pads it to
        2,944, 2.55 GiB and a 0.54 GiB workspace: 2,588,800). The deployment keys come after (`LaunchSettings.to_flags`)."""
        read = [token for flag in sorted(self.read_by_rules - DEPLOYMENT_FLAGS)
                if (value := _switch(flag, settings.flags.get(flag[2:]))) is not None and value is not False
                for token in ((flag,) if value is True else (flag, _written(flag, value)))]  # fmt: skip
        return [*written_flags(settings, PREFERRED), *read]

    def read_int(self, field: str, raw: str, flag: str, engine_version: str | None) -> int | None:
        return None  # no suffixed counts read: every count is a plain whole number (int())

    def as_parsed(self, spelling: str) -> str:
        return spelling  # click matches option names as declared: both spellings are listed in SPELLINGS

    def refuse_kv_dtype(self, dtype: str, flag: str, engine_version: str | None) -> None:
        """One outside KvCacheConfig.dtype's words kvtop models (`kv_cache_dtypes`) is refused, not by release (kvtop
        does not read the words by release: one a release lacks plans there)."""
        refuse_unlisted_kv_dtype("TensorRT-LLM", dtype, self.kv_cache_dtypes, flag)

    def kv_cache_dtype_words(self, engine_version: str | None) -> Mapping[str, str]:
        """Empty: its KV dtype values are the formats' own names, at every release."""
        return NO_WORDS

    def find_launch(self, argv: Sequence[str]) -> tuple[int, str | None] | None:
        for index, token in enumerate(argv):
            nxt = argv[index + 1] if index + 1 < len(argv) else ""
            if token.rsplit("/", 1)[-1] == "trtllm-serve":
                if nxt == "serve":
                    return index + 2, positional_model(argv[index + 2 :])
                return index + 1, positional_model(argv[index + 1 :])
            if token in ENTRY_MODULES:
                if token == "dynamo.trtllm":
                    return index + 1, None
                return index + 1, positional_model(argv[index + 1 :])
        return None


def _switch(flag: str, value: object) -> object:
    """A switch's typed word as a bool (a typed 'false' is not written back as set); any other value as kept."""
    return flag_bool(value, flag[2:]) if flag[2:] in BOOL_KEYS and value is not None else value


def _written(flag: str, value: object) -> str:
    """A read key's value as the line writes it: the YAML's null (kept as 'None') as `null`, the word kvtop reads."""
    text = str(value)
    return "null" if flag == f"--{GRAPHS_KEY}" and text.strip().lower() in NULL_WORDS else text


def _flatten(options: Mapping[str, object], prefix: str = "") -> dict[str, object]:
    """{'kv_cache_config': {'max_tokens': 8}} -> {'kv_cache_config.max_tokens': 8}."""
    flat: dict[str, object] = {}
    for key, value in options.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(_flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def _typed(key: str, value: object, kind: type, source: str) -> object:
    """A YAML value as the field's type; an InputError naming the key when it is not one."""
    if kind is bool:
        if isinstance(value, bool):
            return value
    elif kind is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif isinstance(value, str):
        return value
    shown = quoted(value)
    raise InputError(f"expected {kind.__name__}, got {shown}", field=key, source=source)


def settings_with_options(
    settings: LaunchSettings, options: Mapping[str, object], source: str
) -> LaunchSettings:
    """`settings` with what an --extra_llm_api_options YAML states (it wins over the command line).

    `enable_attention_dp: true` gives every one of the tp ranks its own attention (dp = tp); a
    `max_gpu_total_bytes` of 0 is unset. Keys kvtop does not read are kept in `flags` as their path.
    """
    flat = _flatten(options)
    if len(flat) > _MAX_OPTION_KEYS:
        raise InputError(
            # not "N keys:": a word then a colon reads as a secret's name to the redactor
            f"{len(flat):,} settings, more than any --extra_llm_api_options file holds (kvtop reads at most "
            f"{_MAX_OPTION_KEYS:,})", field="YAML", source=source,
        )
    update: dict[str, object] = {}
    extra: dict[str, str | bool] = {}
    for key, value in flat.items():
        field = _OPTION_FIELDS.get(key)
        if field is None and value is None and key != GRAPHS_KEY:
            continue  # null: the key's default, as the LLM API's model reads it (`moe_config.backend: null`)
        if field is None:
            extra[key] = value if isinstance(value, bool) else shown_cut(str(value), 200)
            continue
        if value is None:
            continue
        typed = _typed(key, value, _OPTION_TYPES[field], source)
        if field == "kv_cache_dtype":
            refuse_unlisted_kv_dtype("TensorRT-LLM", str(typed), KV_CACHE_DTYPES, key, source)
        if field == "max_gpu_total_bytes" and typed == 0:
            typed = None
        update[field] = typed
    if update.get("enable_dp_attention"):
        update["dp"] = update.get("tp", settings.tp)
    if _replaces_kv_config(flat, settings.engine_version):
        update["free_gpu_memory_fraction"] = None  # the replaced KvCacheConfig's default, 0.9
        update["replaced_fraction"] = settings.free_gpu_memory_fraction  # said, not planned (`replaced_fraction_note`)
    for key in BOOL_KEYS & extra.keys():  # a word that is not a bool, named in the file it came from
        flag_bool(extra[key], key, source)
    merged = {**settings.model_dump(), **update, "flags": {**settings.flags, **extra}}
    try:
        result = LaunchSettings.model_validate(merged)
    except InputError as error:  # a value out of range: name the file it came from
        raise InputError(str(error), source=source) from None
    if GRAPHS_KEY in extra:  # `cuda_graph_config` other than null or {}: named in the file it came from, as above
        try:
            graphs_off(result)
        except InputError as error:
            raise InputError(error.detail, field=GRAPHS_KEY, source=source) from None
    return result


def replaced_fraction_note(settings: LaunchSettings) -> str | None:
    """Where a YAML kv_cache_config replaced the line's whole KvCacheConfig (before PR #9262), the line's typed
    fraction in words: not read, KvCacheConfig's 0.9 runs (FR2 #4); None where the line typed none or it was read."""
    typed = settings.replaced_fraction
    if typed is None:
        return None
    return (f"--kv_cache_free_gpu_memory_fraction {typed:g} not read: before PR #9262 (first in "
            f"{PARTIAL_KV_CONFIG_SINCE}, not pinned) the --extra_llm_api_options YAML's kv_cache_config replaces the "
            f"line's whole KvCacheConfig, so TensorRT-LLM {settings.engine_version} runs at its default 0.9; put "
            f"free_gpu_memory_fraction: {typed:g} under the YAML's kv_cache_config to keep it")


def _replaces_kv_config(flat: Mapping[str, object], engine_version: str | None) -> bool:
    """Whether this YAML's kv_cache_config, without the fraction, puts the fraction back at 0.9: a release before
    PR #9262 (PARTIAL_KV_CONFIG_SINCE); at an unstated release (the latest) it does not."""
    if "kv_cache_config.free_gpu_memory_fraction" in flat or not any(k.startswith("kv_cache_config.") for k in flat):
        return False
    release, since = parse_release(engine_version), parse_release(PARTIAL_KV_CONFIG_SINCE)
    return release is not None and since is not None and release < since

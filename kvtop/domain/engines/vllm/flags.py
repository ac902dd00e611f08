"""vLLM's command line: `vllm serve MODEL` / `python -m vllm.entrypoints.openai.api_server` and EngineArgs.

Spellings from `vllm/engine/arg_utils.py` (`EngineArgs.add_cli_args`); the KV dtypes are its
`CacheDType` values that kvtop models (docs/engines/vllm.md §3).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kvtop.domain.engines.stated_release import stated_release
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.api_keys import API_KEY_FLAG, refuse_bare_key, refuse_several_keys
from kvtop.domain.engines.vllm.arg_choices import refuse_dtype, refuse_quantization
from kvtop.domain.engines.vllm.backends import ATTENTION_BACKEND_FLAG
from kvtop.domain.engines.vllm.batching_async import RAY_V2_ENV
from kvtop.domain.engines.vllm.compilation import CONFIG_FLAG, SHORT_FLAG, SHORT_SPAN
from kvtop.domain.engines.vllm.compilation import FLAGS as COMPILATION_FLAGS
from kvtop.domain.engines.vllm.compile_cache import DISABLE_ENV as COMPILE_CACHE_ENV
from kvtop.domain.engines.vllm.deployment import FLAGS as DEPLOYMENT_FLAGS
from kvtop.domain.engines.vllm.dp_flags import FLAGS as DP_FLAGS
from kvtop.domain.engines.vllm.dp_flags import SPANS as DP_SPANS
from kvtop.domain.engines.vllm.dp_flags import refuse_unread_backend
from kvtop.domain.engines.vllm.eras import STATE_WIDTH_FROM_ROPE_ERAS
from kvtop.domain.engines.vllm.extensible_kv import FLAG as EXTENSIBLE_FLAG
from kvtop.domain.engines.vllm.extensible_kv import FLAGS as EXTENSIBLE_FLAGS
from kvtop.domain.engines.vllm.extensible_kv import SPAN as EXTENSIBLE_SPAN
from kvtop.domain.engines.vllm.flags_neutral import NEUTRAL_GROUPS
from kvtop.domain.engines.vllm.flags_table import FlagSpan, merged, refuse_missing, spellings
from kvtop.domain.engines.vllm.flags_unmodelled import UNMODELLED
from kvtop.domain.engines.vllm.flags_valued import refuse_missing_load_format, refuse_unread_value
from kvtop.domain.engines.vllm.graph_sizes import SIZES_FLAG
from kvtop.domain.engines.vllm.human_ints import read_int as read_human_int
from kvtop.domain.engines.vllm.human_ints import refuse_missing_kv_bytes
from kvtop.domain.engines.vllm.hybrid import CACHE_MODE_FLAG, CACHE_MODE_SPAN
from kvtop.domain.engines.vllm.hybrid import FLAGS as HYBRID_FLAGS
from kvtop.domain.engines.vllm.kv_dtype_releases import refuse_kv_dtype
from kvtop.domain.engines.vllm.long_context import ALLOW_LONG_ENV
from kvtop.domain.engines.vllm.mamba_dtype import SPANS as MAMBA_DTYPE_SPANS
from kvtop.domain.engines.vllm.mm_limits import FLAG as MM_LIMIT_FLAG
from kvtop.domain.engines.vllm.mm_limits import FLAGS as MM_LIMIT_FLAGS
from kvtop.domain.engines.vllm.mm_limits import SPAN as MM_LIMIT_SPAN
from kvtop.domain.engines.vllm.mm_limits import read_limits
from kvtop.domain.engines.vllm.mxfp4_backend import FLASHINFER_BF16_ENV, MARLIN_ENV
from kvtop.domain.engines.vllm.performance_mode import FLAG as PERFORMANCE_MODE_FLAG
from kvtop.domain.engines.vllm.performance_mode import performance_mode
from kvtop.domain.engines.vllm.pooling_runner import FLAGS as POOLING_FLAGS
from kvtop.domain.engines.vllm.pooling_runner import SPANS as POOLING_SPANS
from kvtop.domain.engines.vllm.pooling_runner import refuse_values as refuse_pooling_values
from kvtop.domain.engines.vllm.pp_split import PP_PARTITION_ENV
from kvtop.domain.engines.vllm.rope_override import FLAGS as ROPE_FLAGS
from kvtop.domain.engines.vllm.rope_override import HF_OVERRIDES_FLAG, launch_ropes, refuse_unmodelled_keys
from kvtop.domain.engines.vllm.runner_eras import RUNNER_ENV
from kvtop.domain.engines.vllm.sampler_path import FLASHINFER_SAMPLER_ENV, OFFICIAL_IMAGE, official_image
from kvtop.domain.engines.vllm.skip_mm_profiling import FLAG as SKIP_MM_FLAG
from kvtop.domain.engines.vllm.skip_mm_profiling import FLAGS as SKIP_MM_FLAGS
from kvtop.domain.engines.vllm.skip_mm_profiling import SPAN as SKIP_MM_SPAN
from kvtop.domain.engines.vllm.span import FLAGS as SPAN_FLAGS
from kvtop.domain.engines.vllm.span import NODE_FLAGS, NODE_SPANS, check_node_rank
from kvtop.domain.engines.vllm.spec_methods import SPLIT_FIELDS
from kvtop.domain.engines.vllm.switch_spelling import SWITCHES, written_switch
from kvtop.domain.engines.vllm.text_only import FLAG as TEXT_ONLY_FLAG
from kvtop.domain.engines.vllm.text_only import FLAGS as TEXT_ONLY_FLAGS
from kvtop.domain.engines.vllm.text_only import SPAN as TEXT_ONLY_SPAN
from kvtop.domain.engines.vllm.tower_limits import TOWERS
from kvtop.domain.engines.vllm.v0_backends import ATTENTION_BACKEND_ENV
from kvtop.domain.engines.vllm.v1_opt_in import USE_V1_ENV
from kvtop.domain.engines.vllm.wsl2_pinned import PIN_ENV
from kvtop.domain.errors import InputError
from kvtop.domain.launch import NO_WORDS, LaunchSettings, OwnFlag, written_flags
from kvtop.domain.launch_tokens import positional_model
from kvtop.domain.launch_vocabulary import NeutralGroup
from kvtop.domain.load_casts import ONLINE_FP8, LoadCasts

SPELLINGS: Mapping[str, str] = {
    "--host": "host", "--port": "port",
    "--tensor-parallel-size": "tp", "-tp": "tp",
    "--pipeline-parallel-size": "pp", "-pp": "pp",
    "--data-parallel-size": "dp", "-dp": "dp",
    "--decode-context-parallel-size": "dcp", "-dcp": "dcp",
    "--enable-expert-parallel": "enable_expert_parallel",
    "--gpu-memory-utilization": "gpu_memory_utilization",
    "--kv-cache-dtype": "kv_cache_dtype",
    "--block-size": "page_size",
    "--max-model-len": "context_length",
    "--max-num-seqs": "max_running_requests",
    "--max-num-batched-tokens": "max_num_batched_tokens",
    "--kv-cache-memory-bytes": "kv_cache_memory_bytes", "--kv-cache-memory": "kv_cache_memory_bytes",
    "--num-gpu-blocks-override": "num_gpu_blocks_override",
    "--disable-hybrid-kv-cache-manager": "disable_hybrid_kv_cache_manager",
    "--enforce-eager": "enforce_eager",
    "--quantization": "quantization", "-q": "quantization",
    "--dtype": "dtype",
}  # fmt: skip
PREFERRED: Mapping[str, str] = {
    "tp": "--tensor-parallel-size", "pp": "--pipeline-parallel-size", "dp": "--data-parallel-size",
    "dcp": "--decode-context-parallel-size", "enable_expert_parallel": "--enable-expert-parallel",
    "kv_cache_dtype": "--kv-cache-dtype", "gpu_memory_utilization": "--gpu-memory-utilization",
    "page_size": "--block-size", "context_length": "--max-model-len", "max_running_requests": "--max-num-seqs",
    "max_num_batched_tokens": "--max-num-batched-tokens", "kv_cache_memory_bytes": "--kv-cache-memory-bytes",
    # session 71: the line had dropped these, so `--quantization fp8` (Llama-3.1-8B, H100, v0.11.0: 474,768 tokens)
    # copied a line that plans 421,520 and launches unquantized; each is written only where set (a bool where on)
    "num_gpu_blocks_override": "--num-gpu-blocks-override", "quantization": "--quantization", "dtype": "--dtype",
    "enforce_eager": "--enforce-eager", "disable_hybrid_kv_cache_manager": "--disable-hybrid-kv-cache-manager",
}  # fmt: skip
# Scheduler switches kvtop reads from `flags` (batching.chunked_prefill, batching_async.async_scheduling, hybrid._cache_mode); argparse's
# BooleanOptionalAction spells each with and without `--no-`.
SCHEDULER_FLAGS = frozenset({
    "--enable-chunked-prefill", "--no-enable-chunked-prefill", "--enable-prefix-caching", "--no-enable-prefix-caching",
    "--async-scheduling", "--no-async-scheduling",
})  # fmt: skip
# `--async-scheduling` (SchedulerConfig.async_scheduling, a bool field: `--no-` too) first in v0.10.0 (engine/arg_utils.py
# :821 at v0.10.0; v0.9.2's has no async_scheduling): argparse stops an older release (batching_async.py reads it)
ASYNC_FLAG = "--async-scheduling"
ASYNC_SPAN = FlagSpan("0.10.0", None, "engine/arg_utils.py:1811 (v0.33.0)", True)
# `--mm-encoder-tp-mode` ("weights" | "data"): read as the tower's split (architectures.TOWER_SPLIT.data_parallel_flag)
ENCODER_TP_FLAG = "--mm-encoder-tp-mode"
# first in v0.10.2 (engine/arg_utils.py:786; v0.10.1's has no mm_encoder_tp_mode): argparse stops an older release
ENCODER_TP_SPAN = FlagSpan("0.10.2", None, "engine/arg_utils.py:1528 (v0.33.0)")
# `--disable-custom-all-reduce` (ParallelConfig.disable_custom_all_reduce; BooleanOptionalAction from EngineArgs'
# bool fields, v0.33.0 arg_utils.py): the TP group's all-reduce part of non-torch memory, read by
# calibration_non_torch.custom_all_reduce_on. `--trust-remote-code` (ModelConfig.trust_remote_code) only lets the
# config's own code load: no memory of its own, accepted as typed
ALL_REDUCE_FLAGS = frozenset({"--disable-custom-all-reduce", "--no-disable-custom-all-reduce"})
REMOTE_CODE_FLAGS = frozenset({"--trust-remote-code", "--no-trust-remote-code"})
# kvtop's own: the engine is started through vLLM's offline `LLM(...)` class (`from vllm import LLM`; usage context
# LLM_CLASS), not `vllm serve`: its batch defaults differ (eras.LLM_CLASS_BATCH_ERAS). No flag of vLLM's: refused
# inside `--cmd`, never written back
OWN_FLAGS: Mapping[str, OwnFlag] = {
    "--llm-class": OwnFlag(
        field="llm_class", says="started through vllm.LLM(...) (offline, usage context LLM_CLASS), not vllm serve"
    ),
    # `EngineArgs.from_cli_args` → `LLMEngine.from_engine_args` (usage context ENGINE_CONTEXT): the scheduler's own
    # batch defaults (eras.ENGINE_CONTEXT_BATCH_ERAS)
    "--engine-context": OwnFlag(
        field="engine_context", says="started through EngineArgs → LLMEngine (usage context ENGINE_CONTEXT), not vllm serve"
    ),
}
# Flags with no effect on GPU memory (flags_neutral.py, every flag of the releases read classified; docs/engines/vllm.md
# §3.13): accepted as typed, named on the plan's line under the engine flags, never written back; a release that lacks
# one refuses it as vLLM's argparse would. The rest kvtop does not read are flags_unmodelled.py's: refused
MEMORY_NEUTRAL = merged(group for _, group in NEUTRAL_GROUPS.values())
NEUTRAL_SPELLINGS = spellings(MEMORY_NEUTRAL)
# every flag whose presence is checked by release, one table (flags_table.refuse_missing: vLLM's argparse,
# "unrecognized arguments"), at the launch check where --engine-version states the release and at the plan's
# resolved release (a log's too: budget.py): the memory-neutral ones, `-cc` (compilation.py), `--mamba-cache-mode`
# (hybrid.py), `--mamba-cache-dtype` / `--mamba-ssm-cache-dtype` (mamba_dtype.py), the DP backend and NCCL-off switch (dp_flags.py), the node flags (span.py), the pooling runner's `--runner` / `--convert` / `--task` (pooling.py), `--limit-mm-per-prompt`
# (mm_limits.py), `--language-model-only` (text_only.py), `--skip-mm-profiling` (skip_mm_profiling.py). Not here: flags whose release is an exact era with its own words (`--kv-cache-memory-bytes`,
# human_ints.py; `--rope-scaling` / `--hf-overrides`, rope_override.py) or a value's release (`--load-format
# runai_streamer`, flags_valued.py)
# --spec-method / --spec-model / --spec-tokens (spec_methods.SPLIT_FIELDS): absent from v0.21.0
SPLIT_SPEC_SPAN = FlagSpan("0.22.0", None, "engine/arg_utils.py:1900-1903 (v0.34.0)")
# `--enable-eplb` (ParallelConfig.enable_eplb, a bool field: `--no-` too) first in v0.9.2 (engine/arg_utils.py:687-688;
# v0.9.0's and v0.9.1's wheels have no eplb): argparse stops an older release (R8: 0.8.5 planned, and wrote back
# `--no-enable-eplb`)
EPLB_FLAG = "--enable-eplb"
EPLB_SPAN = FlagSpan("0.9.2", None, "engine/arg_utils.py:687-688 (v0.9.2), :1367 (v0.34.0)", True)
# `--reasoning-parser`: no effect on memory but at v0.22.x, where the reasoning config it sets keeps V2's listed class
# on the V1 model runner (runner_refusals.REASONING_ON_V2): read, not neutral
REASONING_FLAG = "--reasoning-parser"
REASONING_SPAN = FlagSpan("0.7.1", None, "engine/arg_utils.py:1146 (v0.33.0)")
RELEASE_SPANS = merged((MEMORY_NEUTRAL, POOLING_SPANS, DP_SPANS, NODE_SPANS, {
    SHORT_FLAG: SHORT_SPAN, CACHE_MODE_FLAG: CACHE_MODE_SPAN, MM_LIMIT_FLAG: MM_LIMIT_SPAN, TEXT_ONLY_FLAG: TEXT_ONLY_SPAN,
    SKIP_MM_FLAG: SKIP_MM_SPAN,
    ENCODER_TP_FLAG: ENCODER_TP_SPAN, ASYNC_FLAG: ASYNC_SPAN, EXTENSIBLE_FLAG: EXTENSIBLE_SPAN, EPLB_FLAG: EPLB_SPAN,
    REASONING_FLAG: REASONING_SPAN,
    **{f"--{flag}": SPLIT_SPEC_SPAN for flag, _ in SPLIT_FIELDS}, **MAMBA_DTYPE_SPANS,
}))  # fmt: skip
# each kind of NEUTRAL_GROUPS as `--help` names it
NEUTRAL_KINDS: Mapping[str, str] = {
    "server": "API server", "chat": "chat, tool and reasoning parsers", "log": "logging and metrics",
    "fetch": "checkpoint download", "cpu": "host-memory caches", "request": "request defaults",
    "cluster": "rendezvous and timeouts", "structured": "structured outputs",
    "step": "per-step", "value": "by value",
}  # fmt: skip
NEUTRAL_BY_KIND = {NEUTRAL_KINDS[kind]: NeutralGroup(why, spellings(group)) for kind, (why, group) in NEUTRAL_GROUPS.items()}
UNMODELLED_SPELLINGS = spellings(UNMODELLED)
KV_CACHE_DTYPES = ("auto", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_ds_mla", "nvfp4")

# `--dtype` (ModelConfig.dtype: `_STR_DTYPE_TO_TORCH_DTYPE`, "float" is float32) builds the model in that
# dtype and copies the checkpoint's tensors into it; `--quantization fp8` on an unquantized checkpoint
# quantizes each linear matrix at load (Fp8LinearMethod.process_weights_after_loading, per tensor)
# ModelOpt's fields that nothing claims (docs/engines/vllm.md §3.9): vLLM sets quant_method "modelopt*" only from
# producer.name == "modelopt" with a `quantization` section (v0.33.0 ModelArchConfigConvertor.
# _normalize_quantization_config; v0.13.0 ModelConfig._parse_quant_hf_config), and ModelOpt's
# override_quantization_method needs that quant_method: an hf_quant_config.json naming no producer, or config.json's
# top-level quant_algo without a quant_method, gives no quantization method: bf16 weights and a bf16 KV cache
UNCLAIMED_MODELOPT = (
    "vLLM ignores this checkpoint's ModelOpt fields (its format is not applied): it takes them only from a "
    "`quantization` section beside producer 'modelopt' (_normalize_quantization_config; v0.13.0 and v0.33.0 read), "
    "so it finds no quantization method and holds the weights and the KV cache in the model dtype"
)
LOAD_CASTS = LoadCasts(
    dtypes=(("auto", None), ("half", 2), ("float16", 2), ("bfloat16", 2), ("float", 4), ("float32", 4)),
    online_quant=(("fp8", ONLINE_FP8),),
    ignores_unclaimed_modelopt=UNCLAIMED_MODELOPT,
    state_width_from_rope=STATE_WIDTH_FROM_ROPE_ERAS,
    towers=TOWERS,
    releases="--dtype: every release kvtop models; online fp8: v0.4.0 on (Fp8LinearMethod, activation_scheme dynamic); "
    "unclaimed ModelOpt fields: v0.13.0 and v0.33.0 (both wheels read; earlier releases not read); the lightning "
    "width from qk_rope_head_dim: v0.33.0; --language-model-only's unbuilt towers: v0.17.0, v0.17.1, v0.18.0, v0.19.0, v0.33.0, v0.34.0 "
    "(text_only.py); every modality's limit at 0: v0.10.2 – v0.34.0 (tower_limits.py)",
    source="vllm/config/model.py (_get_and_verify_dtype), model_executor/layers/quantization/fp8.py, "
    "transformers 5.20.2 models/bailing_hybrid/configuration_bailing_hybrid.py",
)


# vLLM's FlexibleArgumentParser.parse_args rewrites every `--` option's name, up to its first ".", with "_" as "-"
# before argparse matches it, so `--gpu_memory_utilization 0.8` is `--gpu-memory-utilization 0.8`
# (vllm/utils/argparse_utils.py, read at v0.13.0 and v0.33.0; a v0.10.2 start launched with
# `--gpu_memory_utilization 0.8` logs `Requested memory: 0.80 (util)`, the calibration record
# file34681159919-qwen3-8b-fp8-4090-v0102; releases before v0.10.2 not checked). docs/engines/vllm.md §3.12.


# vLLM's short aliases of flags kvtop reads or lists as memory-neutral: one add_argument call spells both (v0.33.0
# vllm/engine/arg_utils.py :1177 -n, :1178 -r, :1252 -dpr, :1258 -dpl, :1264 -dpa, :1270 -dpp, :1304 -ep (first read in
# v0.15.1), :1865 -sc (v0.19.0); entrypoints/common/cli_args.py _customize_cli_kwargs -asc). The aliases of flags kvtop
# does not model (-pcp, -dpn, -dpb, -dph, -dpe, -dpm, -dc, -ac, -spec-draft-tp) stay in flags_unmodelled.py
ALIASES: Mapping[str, str] = {
    "-n": "--nnodes", "-r": "--node-rank", "-dpr": "--data-parallel-start-rank", "-dpl": "--data-parallel-size-local",
    "-dpa": "--data-parallel-address", "-dpp": "--data-parallel-rpc-port", "-ep": "--enable-expert-parallel",
    "-sc": "--speculative-config", "-asc": "--api-server-count",
}  # fmt: skip


def as_parsed(spelling: str) -> str:
    """`--a_b[.c_d]` as vLLM's parser reads it: `--a-b[.c_d]` (only the name before the first "." is rewritten);
    `-O.<field>` (`-O`'s dotted form, the compilation config's until v0.12.x: compilation.py) as
    `--compilation-config.<field>`; a short alias (`-ep`, `-dpa`, ALIASES) as its long flag. `-cc` stays itself:
    only a release from v0.12.0 has it (compilation.long_spelled reads it as the long flag, RELEASE_SPANS refuses
    it before)."""
    if spelling in ALIASES:  # the long flag the same add_argument call spells
        return ALIASES[spelling]
    head, dot, rest = spelling.partition(".")
    if head == "-O" and dot:
        return CONFIG_FLAG + dot + rest
    if not spelling.startswith("--"):
        return spelling
    name, dot, rest = spelling[2:].partition(".")
    return "--" + name.replace("_", "-") + dot + rest


def _values(flag: str, value: object) -> list[str]:
    """The tokens a flag's value is written as: a list flag's values one a token, else the value."""
    return str(value).split() if flag in VllmFlags.list_valued else [str(value)]


def _written(settings: LaunchSettings, flag: str, version: ResolvedVersion) -> tuple[str, ...]:
    """One read flag's tokens in the copied line: a switch (`switch_spelling.SWITCHES`) once, at `--x`, in the form
    `version` parses; a bare flag alone; else the flag and its value as typed."""
    name = flag.removeprefix("--")
    if name.removeprefix("no-") in SWITCHES:
        return written_switch(settings.flags, name, version) if name in SWITCHES else ()
    value = settings.flags.get(flag.lstrip("-"))
    if value is None or value is False:
        return ()
    return (flag,) if value is True else (flag, *_values(flag, value))


class VllmFlags:
    load_casts: LoadCasts = LOAD_CASTS
    spellings: Mapping[str, str] = SPELLINGS
    own_flags: Mapping[str, OwnFlag] = OWN_FLAGS
    kv_cache_dtypes: tuple[str, ...] = KV_CACHE_DTYPES
    # how the server takes its model (vllm/engine/arg_utils.py EngineArgs.add_cli_args `--model`: taken by
    # `vllm serve` (beside its optional positional model_tag, entrypoints/cli/serve.py) and by the
    # openai.api_server module alike)
    model_flag: str | None = "--model"
    # span.py, deployment.py, batching.py, hybrid.py, refusals.py and the tower's split read these; every other flag it does not model is
    # refused
    passthrough: frozenset[str] = (SPAN_FLAGS | DEPLOYMENT_FLAGS | SCHEDULER_FLAGS | ALL_REDUCE_FLAGS | REMOTE_CODE_FLAGS
                                   | COMPILATION_FLAGS | ROPE_FLAGS | POOLING_FLAGS | MM_LIMIT_FLAGS | TEXT_ONLY_FLAGS | HYBRID_FLAGS
                                   | SKIP_MM_FLAGS | DP_FLAGS | EXTENSIBLE_FLAGS | {ATTENTION_BACKEND_FLAG, ENCODER_TP_FLAG, PERFORMANCE_MODE_FLAG}
                                   | {REASONING_FLAG} | NEUTRAL_SPELLINGS)  # fmt: skip
    # of those, the ones a rule reads (refusals.py: --attention-backend decides Step1's ALiBi-sqrt refusal, v0.33.0;
    # --mm-encoder-tp-mode makes a data-parallel encoder whole on every rank, tower_spec.TowerSplit.for_launch;
    # --disable-custom-all-reduce the non-torch memory's all-reduce part, calibration_non_torch.py; the compilation
    # config's CUDA-graph fields and the optimization level the graphs charged, compilation.py; --rope-scaling and
    # --hf-overrides the derived max length, rope_override.py; --runner, --convert and --task the pooling runner,
    # pooling.py; --limit-mm-per-prompt the encoder profile, mm_limits.py; --language-model-only the tower left unbuilt,
    # text_only.py; --reasoning-parser V2's runner at v0.22.x, runner_refusals.py; --skip-mm-profiling the encoder's dummy pass left out, skip_mm_profiling.py; --mamba-cache-mode a hybrid's
    # mamba_cache_mode, hybrid.py; --mamba-cache-dtype / --mamba-ssm-cache-dtype its state's dtypes, mamba_dtype.py; --data-parallel-backend and --disable-nccl-for-dp-synchronization the DP launch,
    # dp_flags.py; --performance-mode the default batch and capture sizes, performance_mode.py; the scheduler switches
    # SCHEDULER_FLAGS: prefix caching a hybrid's mamba_cache_mode, chunked prefill the batched tokens, async scheduling
    # the batches in flight — left out, a copied line planned a Qwen3.6 hybrid at v0.25.0 without its prefix caching, 8.6 %
    # more tokens than the launch typed): `--help` lists them
    # apart from "not modelled", and the plan's "engine flags:" line writes them back
    read_by_rules: frozenset[str] = (SPAN_FLAGS | DEPLOYMENT_FLAGS | SCHEDULER_FLAGS | ALL_REDUCE_FLAGS | COMPILATION_FLAGS | ROPE_FLAGS
                                     | POOLING_FLAGS | MM_LIMIT_FLAGS | TEXT_ONLY_FLAGS | HYBRID_FLAGS | DP_FLAGS | EXTENSIBLE_FLAGS | SKIP_MM_FLAGS
                                     | {ATTENTION_BACKEND_FLAG, ENCODER_TP_FLAG, PERFORMANCE_MODE_FLAG, REASONING_FLAG})  # fmt: skip
    # --rope-scaling, --hf-overrides and --limit-mm-per-prompt take a JSON object (json.loads; rope_override.py,
    # mm_limits.py)
    value_placeholders: Mapping[str, str] = {flag: "JSON" for flag in ROPE_FLAGS | MM_LIMIT_FLAGS}
    # `--cuda-graph-sizes 1 2 4 …` (nargs="+", graph_sizes.py); `--api-key k1 k2` from v0.10.1 (FrontendArgs.api_key:
    # Optional[list[str]], v0.10.1 entrypoints/openai/cli_args.py:90, get_kwargs gives a list nargs="+",
    # engine/arg_utils.py:209-218; v0.10.0 cli_args.py:88 Optional[str]: one key; api_keys.py refuses several before)
    list_valued: frozenset[str] = frozenset({SIZES_FLAG, API_KEY_FLAG})
    # the key(s) of FrontendArgs.api_key (api_keys.py; its parser reads `--api_key` as `--api-key`) and the hub
    # token (engine/arg_utils.py:1034, v0.33.0)
    secret_flags: frozenset[str] = frozenset({API_KEY_FLAG, "--api_key", "--hf-token"})
    # of the pass-through flags, those that change nothing kvtop sizes, by kind (flags_neutral.NEUTRAL_GROUPS; read by
    # kvtop.domain.neutral_flags, listed by `--list-neutral-flags vllm`)
    memory_neutral_groups: Mapping[str, NeutralGroup] = NEUTRAL_BY_KIND
    memory_neutral: frozenset[str] = NEUTRAL_SPELLINGS
    # vLLM's flags kvtop does not model (flags_unmodelled.py): refused typed, named as ignored on a --cmd line
    unmodelled: frozenset[str] = UNMODELLED_SPELLINGS
    partly_read: Mapping[str, str] = {}  # no unmodelled flag a rule reads in part
    # leading NAME=VALUE the rules read (mxfp4_backend.py, sampler_path.py; VLLM_USE_V1=0: V0 in v0.8-v0.10, =1: V1 in
    # v0.6.5-v0.7.x, planned as V1, v0.6.4 refused, v1_opt_in.py;
    # VLLM_ATTENTION_BACKEND outside V1's list: V0 in v0.8-v0.10, v0_backends.py; VLLM_PP_LAYER_PARTITION: named not
    # modelled, pp_split.py; VLLM_USE_RAY_V2_EXECUTOR_BACKEND: the `ray` executor's class, batching_async.py;
    # VLLM_ALLOW_LONG_MAX_MODEL_LEN: a --max-model-len above the positions starts, long_context.py;
    # VLLM_WSL2_ENABLE_PIN_MEMORY: V2's pinned memory under WSL2, wsl2_pinned.py; VLLM_USE_V2_MODEL_RUNNER: the model
    # runner over the release's pick from v0.22.0, refused where the release refuses it, runner_eras.py)
    env_read: frozenset[str] = frozenset({MARLIN_ENV, FLASHINFER_BF16_ENV, FLASHINFER_SAMPLER_ENV, USE_V1_ENV,
                                          ATTENTION_BACKEND_ENV, PP_PARTITION_ENV, RAY_V2_ENV,
                                          COMPILE_CACHE_ENV, ALLOW_LONG_ENV, PIN_ENV, RUNNER_ENV})  # fmt: skip
    # the official image (docker/Dockerfile's vllm-openai target) is tagged with the release it builds: v0.11.0
    release_images: frozenset[str] = frozenset({OFFICIAL_IMAGE})
    specials: Mapping[str, tuple[int, str]] = {}
    choices: Mapping[str, tuple[str, ...]] = {}

    def refuse(self, field: str, value: object, flag: str) -> None:
        if field == HF_OVERRIDES_FLAG[2:]:  # keys that change the config kvtop reads (rope_override.py)
            refuse_unmodelled_keys(value)
        refuse_unread_value(field, value, flag)  # a flag neutral only at the values read (flags_valued.py)
        if "--" + field == API_KEY_FLAG:  # the flag with no key (api_keys.py)
            refuse_bare_key(value, flag)
        if field == "context_length" and value == -1:  # docs/engines/vllm.md §4.2
            raise InputError(
                "-1 (vLLM's auto-fit to memory) is not modelled by kvtop: give a length in tokens", field=flag
            )

    def check_parallel(self, settings: LaunchSettings) -> None:
        """vLLM has no expert-parallel size: `--enable-expert-parallel` spreads experts over all tp × dp ranks. The
        final settings' --rope-scaling / --hf-overrides are checked here too where they name the release
        (rope_override.launch_ropes: malformed, a flag the release lacks), --kv-cache-memory-bytes before
        v0.10.2 (human_ints.refuse_missing_kv_bytes) and a KV dtype the release lacks (kv_dtype_releases.py); without one (a
        log's release is resolved after), the plan's rules check them at the release they take."""
        # a `--dtype` outside argparse's six words (arg_choices.py; a log's 'torch.bfloat16' passes); here, not in
        # `refuse`, which every LaunchSettings' validation runs
        refuse_dtype(settings.dtype)
        if settings.engine_version is not None:
            release = stated_release(settings)
            launch_ropes(settings, release)
            refuse_missing(settings.flags, settings.engine_version, RELEASE_SPANS)  # a flag the release lacks
            self.refuse_kv_dtype(settings.kv_cache_dtype, PREFERRED["kv_cache_dtype"], settings.engine_version)
            refuse_several_keys(settings.flags, release)  # api_keys.py
            refuse_pooling_values(settings.flags)  # pooling.py: argparse's choices
            read_limits(settings.flags, release)  # mm_limits.py: the value's form
            performance_mode(settings.flags, release)  # performance_mode.py: the release has it, a choice's value
            refuse_missing_kv_bytes(settings.kv_cache_memory_bytes, settings.engine_version, PREFERRED["kv_cache_memory_bytes"])
            refuse_missing_load_format(settings.flags.get("load-format"), release)
            refuse_quantization(settings.quantization, release,  # arg_choices.py: the release's methods
                                allow_deprecated=settings.flags.get("allow-deprecated-quantization") not in (None, False))
        refuse_unread_backend(settings, stated_release(settings) if settings.engine_version else None)
        check_node_rank(settings)  # a --node-rank past --nnodes (span.py)
        ep, ranks = settings.effective_ep, settings.tp * settings.dp
        if ep not in (1, ranks):
            raise InputError(
                f"vLLM has no expert-parallel size: --enable-expert-parallel spreads experts over all"
                f" tp × dp = {ranks} ranks (got {ep})",
                field="--ep",
            )
        if settings.dcp > 1 and settings.tp % settings.dcp:
            raise InputError(
                f"decode context parallel size {settings.dcp} must divide tp {settings.tp}", field="--dcp"
            )

    def launch_parts(self, settings: LaunchSettings) -> None:
        """None: its command line carries every setting kvtop reads (`to_flags` is the engine's own line)."""
        return None

    def to_flags(self, settings: LaunchSettings) -> list[str]:
        if settings.ep != 1 and not settings.enable_expert_parallel:  # EP over tp × dp: vLLM's only spelling
            settings = settings.model_copy(update={"enable_expert_parallel": True})
        # a switch (--enable-lora) alone, as vLLM's argparse takes it: 'True' after it is an unrecognized argument
        # a list flag (`--cuda-graph-sizes 1 2 4`) one token a value, as argparse's nargs="+" takes it
        # a node's own flags (its rank, the head's address, --headless) are said per node (span.per_node), not
        # written: the line is the one every node's launch shares; `LaunchSettings.to_flags` adds --nnodes
        # an on/off switch in the form the planned release parses, not as typed (`--enable-chunked-prefill False` is
        # `--no-enable-chunked-prefill` from v0.8.5: switch_spelling.py), at its `--x` spelling's place
        version = stated_release(settings)
        read = [token for flag in sorted(self.read_by_rules - NODE_FLAGS) for token in _written(settings, flag, version)]
        return [*written_flags(settings, PREFERRED), *read]

    def read_int(self, field: str, raw: str, flag: str, engine_version: str | None) -> int | None:
        """'32K' = 32,768 on --max-model-len (v0.8.4 on) and --max-num-batched-tokens (v0.9.1 on), '20G' = 20 GiB on
        --kv-cache-memory-bytes (v0.10.2 on): human_ints.py."""
        return read_human_int(field, raw, flag, engine_version)

    def as_parsed(self, spelling: str) -> str:
        return as_parsed(spelling)

    def refuse_kv_dtype(self, dtype: str, flag: str, engine_version: str | None) -> None:
        """A word kvtop does not model, or one it models that the release lacks, said by release
        (kv_dtype_releases.py)."""
        refuse_kv_dtype(dtype, flag, engine_version, KV_CACHE_DTYPES)

    def kv_cache_dtype_words(self, engine_version: str | None) -> Mapping[str, str]:
        """Empty: its KV dtype values are the formats' own names, at every release."""
        return NO_WORDS

    def find_launch(self, argv: Sequence[str]) -> tuple[int, str | None] | None:
        for index, token in enumerate(argv):
            nxt = argv[index + 1] if index + 1 < len(argv) else ""
            if token.startswith("vllm.entrypoints") and ("api_server" in token or "cli" in token):
                if token.endswith("cli.main") and nxt == "serve":
                    return index + 2, positional_model(argv[index + 2 :])
                return index + 1, None
            if token in ("dynamo.vllm", "dynamo.vllm.unified_main"):  # NVIDIA Dynamo's worker: vLLM's EngineArgs
                return index + 1, None
            if token.rsplit("/", 1)[-1] == "vllm" and nxt == "serve":
                return index + 2, positional_model(argv[index + 2 :])
            if official_image(token):  # `docker run … vllm/vllm-openai:TAG MODEL --flags`
                return index + 1, positional_model(argv[index + 1 :])  # the image's entry point is the server
        return None

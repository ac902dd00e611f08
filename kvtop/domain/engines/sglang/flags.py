"""SGLang's command line: `python -m sglang.launch_server` / `sglang serve` and its ServerArgs flags.

Spellings from `python/sglang/srt/server_args.py` (`ServerArgs.add_cli_args`); the KV dtypes are
that file's `--kv-cache-dtype` choices that kvtop models (docs/engines/sglang.md §10).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT
from kvtop.domain.engines.sglang.arg_choices import refuse_dtype
from kvtop.domain.engines.sglang.attention_backends import ATTENTION_BACKEND_FLAG, PHASE_BACKEND_FLAGS
from kvtop.domain.engines.sglang.chunked_prefix import FLAG as CHUNKED_PREFIX_FLAG
from kvtop.domain.engines.sglang.cuda_graph_bs import DECODE_FLAG as GRAPH_BS_DECODE_FLAG
from kvtop.domain.engines.sglang.cuda_graph_bs import FLAG as GRAPH_BS_FLAG
from kvtop.domain.engines.sglang.cuda_graph_bs import MAX_DECODE_FLAG as GRAPH_MAX_BS_DECODE_FLAG
from kvtop.domain.engines.sglang.decode_graphs_off import DECODE
from kvtop.domain.engines.sglang.deployment import FLAGS as DEPLOYMENT_FLAGS
from kvtop.domain.engines.sglang.encoder_disagg import ENCODER_URLS_FLAG
from kvtop.domain.engines.sglang.flags_neutral import NEUTRAL_GROUPS
from kvtop.domain.engines.sglang.flags_table import merged, spellings
from kvtop.domain.engines.sglang.flags_unmodelled import UNMODELLED
from kvtop.domain.engines.sglang.long_context import OVERWRITE_ENV
from kvtop.domain.engines.sglang.mamba_slots import RATIO_FLAG as MAMBA_RATIO_FLAG
from kvtop.domain.engines.sglang.mamba_slots import SIZE_FLAG as MAMBA_SIZE_FLAG
from kvtop.domain.engines.sglang.mamba_strategy import OVERLAP_OFF_FLAG
from kvtop.domain.engines.sglang.model_override import FLAG as OVERRIDE_FLAG
from kvtop.domain.engines.sglang.multimodal import TOWERS
from kvtop.domain.engines.sglang.prefill_graphs_off import PREFILL
from kvtop.domain.engines.sglang.prefill_graphs_optin import ENABLE_FLAG as PCG_ENABLE_FLAG
from kvtop.domain.engines.sglang.span import FLAGS as SPAN_FLAGS
from kvtop.domain.engines.sglang.span import NODE_FLAGS
from kvtop.domain.engines.sglang.ssm_dtype import ENV as SSM_DTYPE_ENV
from kvtop.domain.engines.sglang.ssm_dtype import FLAG as SSM_DTYPE_FLAG
from kvtop.domain.engines.sglang.torch_compile import FLAG as TORCH_COMPILE_FLAG
from kvtop.domain.engines.sglang.vocab_launch import DP_HEAD_FLAG, EMBED_ENV
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import InputError
from kvtop.domain.launch import NO_WORDS, LaunchSettings, OwnFlag, written_flags
from kvtop.domain.launch_tokens import positional_model
from kvtop.domain.launch_vocabulary import NeutralGroup, refuse_unlisted_kv_dtype
from kvtop.domain.load_casts import ONLINE_FP8, LoadCasts

SPELLINGS: Mapping[str, str] = {
    "--model-path": "model", "--host": "host", "--port": "port",
    "--tp-size": "tp", "--tensor-parallel-size": "tp",
    "--pp-size": "pp", "--pipeline-parallel-size": "pp",
    "--dp-size": "dp", "--data-parallel-size": "dp",
    "--ep-size": "ep", "--expert-parallel-size": "ep",
    "--dcp-size": "dcp",
    "--enable-dp-attention": "enable_dp_attention",
    "--mem-fraction-static": "mem_fraction_static",
    "--kv-cache-dtype": "kv_cache_dtype",
    "--page-size": "page_size",
    "--context-length": "context_length",
    "--max-running-requests": "max_running_requests",
    "--max-total-tokens": "max_total_tokens",
    "--chunked-prefill-size": "chunked_prefill_size",
    "--max-prefill-tokens": "max_prefill_tokens",
    "--swa-full-tokens-ratio": "swa_full_tokens_ratio",
    "--disable-hybrid-swa-memory": "disable_hybrid_swa_memory",
    "--disable-radix-cache": "disable_radix_cache",
    "--quantization": "quantization",
    "--dtype": "dtype",
    "--cuda-graph-max-bs": "cuda_graph_max_bs",
}  # fmt: skip
# the spelling `to_flags` writes, in the order an operator reads them: every modelled field of SPELLINGS, so that the
# copied launch plans what the plan did and a finding's fix (`launch_change`, the same writer) names every setting it
# moves (session 72: --dcp-size, --max-prefill-tokens, --swa-full-tokens-ratio, --disable-hybrid-swa-memory,
# --disable-radix-cache, --quantization, --dtype and --cuda-graph-max-bs were read but never written back, so the
# Mamba state finding's `--disable-radix-cache` and the float32 finding's `--dtype bfloat16` came out empty)
PREFERRED: Mapping[str, str] = {
    "tp": "--tp-size", "pp": "--pp-size", "dp": "--dp-size", "ep": "--ep-size", "dcp": "--dcp-size",
    "enable_dp_attention": "--enable-dp-attention", "quantization": "--quantization", "dtype": "--dtype",
    "kv_cache_dtype": "--kv-cache-dtype", "mem_fraction_static": "--mem-fraction-static", "page_size": "--page-size",
    "context_length": "--context-length", "max_running_requests": "--max-running-requests",
    "max_total_tokens": "--max-total-tokens", "chunked_prefill_size": "--chunked-prefill-size",
    "max_prefill_tokens": "--max-prefill-tokens", "swa_full_tokens_ratio": "--swa-full-tokens-ratio",
    "disable_hybrid_swa_memory": "--disable-hybrid-swa-memory", "disable_radix_cache": "--disable-radix-cache",
    "cuda_graph_max_bs": "--cuda-graph-max-bs",
}  # fmt: skip
# Flags with no effect on GPU memory (flags_neutral.py: every flag of the releases read classified, docs/engines/sglang.md
# "Flags"): accepted as typed, named on the plan's line under the engine flags, never written back. The rest kvtop does
# not read are flags_unmodelled.py's: refused by name typed to kvtop, named as ignored on a --cmd line
MEMORY_NEUTRAL = merged(group for _, group in NEUTRAL_GROUPS.values())
NEUTRAL_SPELLINGS = spellings(MEMORY_NEUTRAL)
# each kind of NEUTRAL_GROUPS as `--help` names it
NEUTRAL_KINDS: Mapping[str, str] = {
    "server": "API server", "chat": "chat, tool and reasoning parsers", "log": "logging and metrics",
    "fetch": "checkpoint and tokenizer", "request": "request defaults", "cluster": "rendezvous and timeouts",
    "structured": "structured outputs", "compile": "torch.compile cap", "p2p": "P2P check",
    "runtime": "runtime",
}  # fmt: skip
NEUTRAL_BY_KIND = {NEUTRAL_KINDS[kind]: NeutralGroup(why, spellings(group)) for kind, (why, group) in NEUTRAL_GROUPS.items()}
UNMODELLED_SPELLINGS = spellings(UNMODELLED)
KV_CACHE_DTYPES = ("auto", "bf16", "bfloat16", "fp8_e4m3", "fp8_e5m2", "fp4_e2m1", "nvfp4", "mxfp8")

# `--dtype` (server_args.py choices; ModelConfig._get_and_verify_dtype, "float" is float32) builds the model in
# that dtype; `--quantization fp8` on an unquantized checkpoint quantizes each linear matrix at load
# (srt/layers/quantization/fp8.py Fp8LinearMethod.process_weights_after_loading, per tensor); Llama-4 served
# text-only builds no vision tower without --enable-multimodal (multimodal.py TOWERS, §4.4)
LOAD_CASTS = LoadCasts(
    dtypes=(("auto", None), ("half", 2), ("float16", 2), ("bfloat16", 2), ("float", 4), ("float32", 4)),
    online_quant=(("fp8", ONLINE_FP8),),
    towers=TOWERS,
    releases="every release kvtop models (before srt/layers/quantization/fp8.py, vLLM's Fp8LinearMethod: online alike)",
    source="python/sglang/srt/configs/model_config.py, srt/layers/quantization/fp8.py, srt/models/mllama4.py",
)

# `--mm-enable-dp-encoder` (BooleanOptionalAction): the vision encoder whole on every TP rank, spelled once
# (architectures.TOWER_SPLIT.data_parallel_flag), with its `--no-` form
assert TOWER_SPLIT.data_parallel_flag is not None
ENCODER_DP_FLAGS = (f"--{TOWER_SPLIT.data_parallel_flag[0]}", f"--no-{TOWER_SPLIT.data_parallel_flag[0]}")


# what kvtop reads --language-only / --language-model-only for (partly_read), said beside the flag on a --cmd note
ENCODER_ELSEWHERE_READ = ("read for the automatic fraction's VLM factor and for whether the encoder runs on this "
                          "instance; its other effects on memory are not")


def _values(flag: str, value: object, list_valued: frozenset[str]) -> list[str]:
    """The tokens a flag's value is written as: a list flag's values one a token (`--cuda-graph-bs 1 2 4`), else the
    value."""
    return str(value).split() if flag in list_valued else [str(value)]


class SglangFlags:
    load_casts: LoadCasts = LOAD_CASTS
    spellings: Mapping[str, str] = SPELLINGS
    own_flags: Mapping[str, OwnFlag] = {}  # kvtop takes no flag of its own for this engine
    kv_cache_dtypes: tuple[str, ...] = KV_CACHE_DTYPES
    # how the server takes its model (server_args.py ServerArgs.add_cli_args: `--model-path` (alias
    # `--model`), every release)
    model_flag: str | None = "--model-path"
    # every flag it does not model is refused when typed to kvtop, but --enable-multimodal, which SGLang's
    # rules read from `flags` (docs/engines/sglang.md §4.4: Gemma-3 and Llama-4 are text-only without it)
    # span.py, deployment.py and the tower's split (architectures.TOWER_SPLIT) read these
    # and `--attention-backend`, `--prefill-attention-backend`, `--decode-attention-backend` (attention_backends.py:
    # the release's choices, the page a backend sets)
    # and `--enable-piecewise-cuda-graph` (v0.5.6 … v0.5.9: the automatic fraction's opt-in prefill-graph reserve;
    # refused at a release without it, before v0.5.4 and from v0.5.14: its row in flag_releases.READ)
    # and `--cuda-graph-bs` (cuda_graph_bs.py: its largest size the reserve's decode graphs, v0.5.10 … v0.5.19;
    # `--cuda-graph-bs-decode` from v0.5.14) and `--cuda-graph-max-bs-decode` (from v0.5.14, as `--cuda-graph-max-bs`,
    # which is refused from v0.5.20: flag_releases.READ)
    # and `--enable-torch-compile` (torch_compile.py: the prefill graphs off v0.5.10 … v0.5.14, kept on from v0.5.15;
    # v0.4.0 on, v0.5.23 srt/arg_groups/fields/exec_.py:691)
    # and `--enable-dp-lm-head` (vocab_launch.py: the LM head over attention TP by model code and release; classes not read refused)
    # and `--disable-chunked-prefix-cache` (chunked_prefix.py: what SGLang sets itself without MLA; refused with MLA)
    # and `--disable-overlap-schedule` (eras.mamba_ratio: a hybrid Mamba model's slots per request; nothing else sized)
    # and `--mamba-full-memory-ratio`, `--max-mamba-cache-size` (mamba_slots.py: a hybrid's state share and slots)
    # and `--mamba-ssm-dtype` (ssm_dtype.py: the SSM state's bytes)
    # and `--json-model-override-args` (model_override.py: merged into the config before kvtop reads it)
    # and `--cuda-graph-backend-prefill disabled` / `--disable-prefill-cuda-graph` (prefill_graphs_off.py: no prefill
    # graphs in the reserve; the other backends refused by name)
    # and `--cuda-graph-backend-decode disabled` / `--disable-decode-cuda-graph` (decode_graphs_off.py: from 0.5.15 no
    # decode graphs in the reserve; the other backends refused by name)
    read_by_rules: frozenset[str] = (frozenset({"--enable-multimodal", ATTENTION_BACKEND_FLAG, *PHASE_BACKEND_FLAGS,
                                                *ENCODER_DP_FLAGS, PCG_ENABLE_FLAG, CHUNKED_PREFIX_FLAG,
                                                OVERLAP_OFF_FLAG, OVERRIDE_FLAG, *PREFILL.flags,
                                                TORCH_COMPILE_FLAG, GRAPH_BS_FLAG, GRAPH_BS_DECODE_FLAG,
                                                GRAPH_MAX_BS_DECODE_FLAG, *DECODE.flags, DP_HEAD_FLAG,
                                                MAMBA_RATIO_FLAG, MAMBA_SIZE_FLAG, SSM_DTYPE_FLAG})
                                     | SPAN_FLAGS | DEPLOYMENT_FLAGS)  # fmt: skip
    # and `--trust-remote-code` (server_args.py, store_true): it lets the config's own code load, no memory of its own
    passthrough: frozenset[str] = read_by_rules | {"--trust-remote-code"} | NEUTRAL_SPELLINGS
    # vocab_launch.py: the embedding whole on every rank; long_context.py: a --context-length above the positions starts;
    # ssm_dtype.py: the SSM state's dtype (from 0.5.9)
    env_read: frozenset[str] = frozenset({EMBED_ENV, OVERWRITE_ENV, SSM_DTYPE_ENV})
    release_images: frozenset[str] = frozenset()  # no container image whose tag kvtop reads as the release
    # of the pass-through flags, those that change nothing kvtop sizes, by kind (flags_neutral.NEUTRAL_GROUPS; read by
    # kvtop.domain.neutral_flags, listed by `--list-neutral-flags sglang`)
    memory_neutral_groups: Mapping[str, NeutralGroup] = NEUTRAL_BY_KIND
    memory_neutral: frozenset[str] = NEUTRAL_SPELLINGS
    # SGLang's flags kvtop does not model (flags_unmodelled.py): refused typed, named as ignored on a --cmd line
    unmodelled: frozenset[str] = UNMODELLED_SPELLINGS
    # read off a launch line for the automatic fraction's VLM factor (vlm_fraction_skip.py) and for whether SGLang's
    # encoder-under-attention-DP check fires (vision_tp_reduce.py); what else they do to memory is not modelled
    partly_read: Mapping[str, str] = dict.fromkeys(("--language-only", "--language-model-only"), ENCODER_ELSEWHERE_READ)
    value_placeholders: Mapping[str, str] = {OVERRIDE_FLAG: "JSON"}  # model_override.py: a JSON object
    # `type=int, nargs="+"` (cuda_graph_bs.py); --encoder-urls `nargs="+"` (encoder_disagg.py)
    list_valued: frozenset[str] = frozenset({GRAPH_BS_FLAG, GRAPH_BS_DECODE_FLAG, ENCODER_URLS_FLAG})
    # one key each: srt/arg_groups/fields/serving.py:160 `api_key`, :164 `admin_api_key` (v0.5.23; flags_neutral.py)
    secret_flags: frozenset[str] = frozenset({"--api-key", "--admin-api-key"})  # refuse(): each takes a key
    # docs/engines/sglang.md §5: "chunked_prefill_size > 0 … else max_prefill_tokens"
    specials: Mapping[str, tuple[int, str]] = {"chunked_prefill_size": (-1, "turns chunked prefill off")}
    choices: Mapping[str, tuple[str, ...]] = {}

    def refuse(self, field: str, value: object, flag: str) -> None:
        """`--api-key` / `--admin-api-key` with no key after it (kvtop reads the bare flag as a switch): ServerArgs
        types both `Optional[str]` (srt/arg_groups/fields/serving.py:160, :164 at v0.5.23; server_args.py's
        `type=str` before), so argparse refuses the flag alone ("expected one argument")."""
        if "--" + field in self.secret_flags and value is True:
            raise InputError("takes a key after it: SGLang's argparse refuses the flag alone ('expected one argument')",
                             field=flag)  # fmt: skip

    def check_parallel(self, settings: LaunchSettings) -> None:
        """SGLang's expert-parallel group lives inside the TP group (tp % ep == 0); DCP splits the TP group."""
        # a `--dtype` its argparse refuses (arg_choices.py), at the stated release (else the latest)
        refuse_dtype(settings.dtype, ResolvedVersion(text=settings.engine_version))
        if settings.ep > 1 and settings.tp % settings.ep:
            raise InputError(
                f"expert parallel size {settings.ep} must divide tp {settings.tp} "
                "(SGLang's EP group lives inside the TP group)",
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
        """The modelled settings, then the pass-through flags a rule reads (`read_by_rules`: `--enable-multimodal`
        sets Gemma-3's VLM factor and reserve, a backend or graph flag the reserve, `--disaggregation-mode` the VLM
        factor at 0.5.17+ …), as typed: a line without them plans another launch (Gemma-3-27B at TP 2 on H100s,
        134,450 tokens with `--enable-multimodal`, 157,700 from the line that dropped it). A node's own flags are
        said per node (span.per_node), the deployment flags `LaunchSettings.to_flags` keeps in their order. A flag of
        `partly_read` from an engine's line comes back too: the figure read it (`--language-only` at 0.5.12 drops the
        VLM factor: Qwen3-VL-235B-A22B-FP8 at TP 4 on H200s with `--kv-cache-dtype fp8_e4m3`, 3,058,294 tokens with
        it, 2,640,897 without), and `--encoder-urls` as given beside it: SGLang refuses `--language-only` without
        them (encoder_disagg.py), so a line that dropped them would not start."""
        extra = sorted((self.read_by_rules | self.partly_read.keys() | {ENCODER_URLS_FLAG}) - DEPLOYMENT_FLAGS - NODE_FLAGS)
        read = [token for flag in extra if (value := settings.flags.get(flag[2:])) is not None and value is not False
                for token in ((flag,) if value is True else (flag, *_values(flag, value, self.list_valued)))]  # fmt: skip
        return [*written_flags(settings, PREFERRED), *read]

    def read_int(self, field: str, raw: str, flag: str, engine_version: str | None) -> int | None:
        return None  # no suffixed counts read: every count is a plain whole number (int())

    def as_parsed(self, spelling: str) -> str:
        return spelling  # argparse matches option names as typed (server_args.py: dashes only)

    def refuse_kv_dtype(self, dtype: str, flag: str, engine_version: str | None) -> None:
        """One outside `kv_cache_dtypes` is refused, at any release: the choices grew (v0.4.0 server_args.py:293-296 lists
        auto and fp8_e5m2 only) but kvtop does not read them by release, so a word a release lacks plans there."""
        refuse_unlisted_kv_dtype("SGLang", dtype, self.kv_cache_dtypes, flag)

    def kv_cache_dtype_words(self, engine_version: str | None) -> Mapping[str, str]:
        """Empty: its KV dtype values are the formats' own names, at every release."""
        return NO_WORDS

    def find_launch(self, argv: Sequence[str]) -> tuple[int, str | None] | None:
        for index, token in enumerate(argv):
            if token in ("sglang.launch_server", "sglang.srt.server", "dynamo.sglang"):  # Dynamo: SGLang's ServerArgs
                return index + 1, None
            nxt = argv[index + 1] if index + 1 < len(argv) else ""
            if token.rsplit("/", 1)[-1] == "sglang" and nxt == "serve":
                return index + 2, positional_model(argv[index + 2 :])
        return None

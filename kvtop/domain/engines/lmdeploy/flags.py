"""LMDeploy's command line: `lmdeploy serve api_server MODEL` (and `serve gradio`), and the fields of
`TurbomindEngineConfig` / `PytorchEngineConfig` a log prints, as flags.

Spellings from `lmdeploy/cli/utils.py` (`ArgumentHelper`) and `lmdeploy/messages.py` (the engine
configs; a printed field `cache_block_seq_len=64` reads as `--cache-block-seq-len 64`). The KV cache
is quantised by `--quant-policy` (0/4/8/16/17 or its names, `QuantPolicy`), kvtop's KV dtype
(docs/engines/lmdeploy.md §2.1, §4.1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kvtop.domain.engines.lmdeploy.deployment import FLAGS as DEPLOYMENT_FLAGS
from kvtop.domain.engines.lmdeploy.eras import (
    NUM_GPU_BLOCKS_FLAG_SINCE,
    TURBOMIND_ONLINE_KV_QUANT_SINCE,
    since,
)
from kvtop.domain.engines.lmdeploy.span import FLAGS as SPAN_FLAGS
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings, OwnFlag, written_flags
from kvtop.domain.launch_tokens import positional_model
from kvtop.domain.launch_vocabulary import NeutralGroup, refuse_unlisted_kv_dtype
from kvtop.domain.load_casts import LoadCasts

SPELLINGS: Mapping[str, str] = {
    "--server-name": "host", "--server-port": "port",
    "--tp": "tp", "--dp": "dp", "--ep": "ep", "--cp": "dcp",
    "--backend": "backend",
    "--cache-max-entry-count": "cache_max_entry_count",
    "--session-len": "context_length",
    "--max-batch-size": "max_running_requests",
    "--quant-policy": "kv_cache_dtype",
    "--cache-block-seq-len": "page_size", "--block-size": "page_size",
    "--max-prefill-token-num": "max_prefill_tokens",
    "--num-gpu-blocks": "num_gpu_blocks_override",
    "--cache-chunk-size": "cache_chunk_size",
    "--prefix-cache-state-budget": "prefix_cache_state_budget",
    "--dtype": "dtype",
}  # fmt: skip
# kvtop's own, not LMDeploy's (its argparse rejects them): `--turbomind-workspace` says the model path is a
# workspace `lmdeploy convert` wrote, which LMDeploy reads off the path itself (`get_model_source`, v0.1.0 – v0.9.x:
# a directory holding `triton_models/`); its weights are read by TurboMind, not staged through torch
# (docs/engines/lmdeploy.md §15.1). Never written back by `to_flags`; refused inside `--cmd`. A Windows host is no
# flag of LMDeploy's: a desktop sharing the card is every engine's `--desktop` (a measured input; §15.5).
OWN_FLAGS: Mapping[str, OwnFlag] = {
    "--turbomind-workspace": OwnFlag(field="turbomind_workspace", says="the model path is a TurboMind workspace"),
}
# the modelled fields the CLI takes (session 72: --cp and --prefix-cache-state-budget, lmdeploy/cli/utils.py:200 and
# :593 at v0.16.0, were read but not written back; `launch_change` writes a fix with this writer). Not written:
# `cache_chunk_size`, a TurbomindEngineConfig field read off a printed config that no release's CLI declares
# (cli/utils.py at v0.4.2, v0.10.0, v0.16.0), and `dtype`, an option only from v0.7.0 (none at v0.6.0) whose choices
# (auto, float16, bfloat16) all keep the 16-bit book: a line without it plans the same
NOT_WRITTEN: Mapping[str, str] = {
    "cache_chunk_size": "a TurbomindEngineConfig field (printed config, Python API); no release's CLI declares it",
    "dtype": "--dtype only from v0.7.0; its values keep the 16-bit book (LOAD_CASTS)",
}
PREFERRED: Mapping[str, str] = {
    "backend": "--backend", "tp": "--tp", "dp": "--dp", "ep": "--ep", "dcp": "--cp",
    "cache_max_entry_count": "--cache-max-entry-count", "context_length": "--session-len",
    "max_running_requests": "--max-batch-size", "page_size": "--cache-block-seq-len",
    "max_prefill_tokens": "--max-prefill-token-num", "num_gpu_blocks_override": "--num-gpu-blocks",
    "prefix_cache_state_budget": "--prefix-cache-state-budget",
}  # fmt: skip
# `--quant-policy` values (QuantPolicy: NONE 0, INT4 4, INT8 8, FP8 16, FP8_E5M2 17) and their names
QUANT_POLICIES: Mapping[str, str] = {
    "0": "auto", "none": "auto", "4": "int4", "int4": "int4", "8": "int8", "int8": "int8",
    "16": "fp8_e4m3", "fp8": "fp8_e4m3", "fp8_e4m3": "fp8_e4m3", "17": "fp8_e5m2", "fp8_e5m2": "fp8_e5m2",
}  # fmt: skip
POLICY_OF_FORMAT: Mapping[str, int] = {"int4": 4, "int8": 8, "fp8_e4m3": 16, "fp8": 16, "fp8_e5m2": 17}
KV_CACHE_DTYPES = ("auto", *QUANT_POLICIES)
# before v0.4.0 (eras.TURBOMIND_ONLINE_KV_QUANT_SINCE) TurboMind had one KV quantisation: `--quant-policy 4` was offline
# int8 with calibrated per-layer scales (kCacheKVInt8); 8, 16 and 17 came later and are refused there
OFFLINE_QUANT_POLICIES: Mapping[str, str] = {"0": "auto", "none": "auto", "4": "int8"}
NOT_IN_RELEASE = "not yet"  # the word of a policy number the release does not have
# `serve api_server --trust-remote-code` from v0.13.0 (eras.TRUST_REMOTE_CODE_SINCE): lets the model's own code load,
# no memory of its own; an earlier release's argparse rejects it (budget.py refuses it there)
REMOTE_CODE_FLAG = "--trust-remote-code"
BACKENDS = ("turbomind", "pytorch")
_NOT_MODELLED_POLICIES = ("42", "turbo_quant")


def quant_policies_at(engine_version: str | None) -> Mapping[str, str]:
    """`--quant-policy` values and names -> the KV format kvtop solves at that release (None: the latest)."""
    online = since(TURBOMIND_ONLINE_KV_QUANT_SINCE, ResolvedVersion(text=engine_version))
    return QUANT_POLICIES if online else OFFLINE_QUANT_POLICIES


def policy_words(engine_version: str | None) -> Mapping[str, str]:
    """Each `--quant-policy` number with the KV format it asks for at that release, as the plan's header names that
    format ('8 · int8'; before v0.4.0 '4 · int8', offline), 13 cells at most (the planner's KV dtype list): 0 reads
    'none' (no quantisation: the model's dtype), a number the release lacks 'not yet'. Names say themselves."""
    formats = quant_policies_at(engine_version)
    words: dict[str, str] = {}
    for value in KV_CACHE_DTYPES:
        if value.isdigit():
            fmt = formats.get(value, NOT_IN_RELEASE)
            words[value] = f"{value} · {'none' if fmt == 'auto' else fmt}"
    return words


def quant_policy(kv_cache_dtype: str) -> int:
    """The `--quant-policy` number of a KV dtype as kvtop or LMDeploy names it (0: none)."""
    name = QUANT_POLICIES.get(kv_cache_dtype.strip().lower(), kv_cache_dtype)
    return POLICY_OF_FORMAT.get(name, 0)

# `--dtype` (cli/utils.py ArgumentHelper.dtype: auto, float16, bfloat16): both 16-bit, so the book's bytes
# stand; LMDeploy has no flag that quantizes weights at load (lmdeploy lite quantizes offline)
LOAD_CASTS = LoadCasts(
    dtypes=(("auto", None), ("float16", 2), ("bfloat16", 2)),
    releases="every release kvtop models",
    source="lmdeploy/cli/utils.py (ArgumentHelper.dtype)",
)


# the server's API keys, a secret a launch line often carries, accepted by name (never 'an unknown flag') and read by
# no rule: `ArgumentHelper.api_keys` (nargs='*', lmdeploy/cli/utils.py, v0.2.2 to v0.16.0 (utils.py:371)), which
# cli/serve.py `add_parser_api_server` adds in every release since; the keys are masked (`secret_flags`), never shown
SERVER_FLAGS: frozenset[str] = frozenset({"--api-keys"})


class LmdeployFlags:
    load_casts: LoadCasts = LOAD_CASTS
    spellings: Mapping[str, str] = SPELLINGS
    own_flags: Mapping[str, OwnFlag] = OWN_FLAGS
    kv_cache_dtypes: tuple[str, ...] = KV_CACHE_DTYPES
    # how the server takes its model (every release, lmdeploy/cli/serve.py add_parser_api_server:
    # `parser.add_argument('model_path', type=str)`, `lmdeploy serve api_server MODEL [options]`; it has no
    # model option)
    model_flag: str | None = None
    # PytorchEngineConfig.num_gpu_blocks = 0: size the pool from free memory (its default)
    specials: Mapping[str, tuple[int, str]] = {"num_gpu_blocks_override": (0, "sizes the pool from free memory")}
    choices: Mapping[str, tuple[str, ...]] = {"backend": BACKENDS}
    # span.py and deployment.py read these, and budget.py `--trust-remote-code`'s release (`REMOTE_CODE_FLAG`); every
    # other flag it does not model is refused
    read_by_rules: frozenset[str] = SPAN_FLAGS | DEPLOYMENT_FLAGS | {REMOTE_CODE_FLAG}
    passthrough: frozenset[str] = read_by_rules | SERVER_FLAGS  # and the API keys, accepted as typed
    env_read: frozenset[str] = frozenset()  # no rule reads an environment variable of the launch line
    release_images: frozenset[str] = frozenset()  # no container image whose tag kvtop reads as the release
    # `lmdeploy serve api_server`'s flags (lmdeploy/cli/serve.py, cli/utils.py ArgumentHelper) are not
    # classified yet: no list of those with no effect on memory, none of those kvtop does not model; a flag outside
    # SPELLINGS and `passthrough` (SERVER_FLAGS: the API keys) is refused as unknown
    memory_neutral_groups: Mapping[str, NeutralGroup] = {}
    memory_neutral: frozenset[str] = frozenset()
    unmodelled: frozenset[str] = frozenset()
    partly_read: Mapping[str, str] = {}  # no unmodelled flag a rule reads in part
    value_placeholders: Mapping[str, str] = {}  # no pass-through flag listed with a placeholder
    # `--api-keys k1 k2` (ArgumentHelper.api_keys: nargs='*', lmdeploy/cli/utils.py:235, from v0.2.2; still at
    # v0.16.0, utils.py:371): not a flag kvtop models, but a launch line's second key is its value, not a positional
    list_valued: frozenset[str] = frozenset({"--api-keys"})
    # the keys above, several; and `lmdeploy serve api_client`'s one `--api-key` (cli/serve.py, v0.2.2:163 to
    # v0.9.2.post1:213, gone at v0.10.0; InternLM/lmdeploy@4a28f127, @ca83b507). No other flag of lmdeploy's CLI takes a
    # secret up to v0.16.0 (cli/serve.py, cli/utils.py, cli/cli.py, cli/chat.py, cli/lite.py; @1208bf00): the Hugging
    # Face token is read from HF_TOKEN, never a flag (`--hf-token` is masked as vLLM's and llama.cpp's)
    secret_flags: frozenset[str] = frozenset({"--api-keys", "--api-key"})

    def refuse(self, field: str, value: object, flag: str) -> None:
        if field == "cache_max_entry_count" and isinstance(value, float) and not value > 0:  # NaN fails too
            raise InputError(f"must be above 0 (got {value:g})", field=flag)
        if field == "kv_cache_dtype" and str(value).strip().lower() in _NOT_MODELLED_POLICIES:
            raise InputError("TurboQuant KV (quant_policy 42: 4-bit K, 2-bit V) is not modelled by kvtop", field=flag)
        if field == "prefix_cache_state_budget" and isinstance(value, int) and value < 0:
            raise InputError(f"must be 0 or more (got {value})", field=flag)

    def check_parallel(self, settings: LaunchSettings) -> None:
        """`--dp` and `--ep` as the launch's backend and release take them (ep_sizes.py): neither before v0.8.0; the
        PyTorch engine spreads experts over every tp × dp rank or none (tp 1, ep == dp before v0.11.0) and runs --dp
        without --ep as one DP world (refused); TurboMind reads --dp from v0.11.0 and --ep from 0.15.0, an ep its
        parallel_config.py lays out (one dividing tp: mlp_tp = tp ÷ ep). Without --backend (TurboMind where it
        supports the model, which this check cannot see) a size is refused where both backends refuse it; the
        layout refuses it for the backend the model resolves to (`LmdeployRules.mlp_split`)."""
        from kvtop.domain.engines.lmdeploy.ep_sizes import backend_dp_refusal, dp_refusal, ep_refusal

        version = ResolvedVersion(text=settings.engine_version)
        backends = (settings.backend,) if settings.backend in BACKENDS else BACKENDS
        dp_refusals = [backend_dp_refusal(backend, settings, version) for backend in backends]
        no_dp = dp_refusal(settings, version) or (dp_refusals[0] if all(dp_refusals) else None)
        if no_dp:
            raise InputError(no_dp, field="--dp")
        refusals = [ep_refusal(backend, settings, version) for backend in backends]
        if all(refusals) and refusals[0]:
            raise InputError(refusals[0], field="--ep")

    def launch_parts(self, settings: LaunchSettings) -> None:
        """None: its command line carries every setting kvtop reads (`to_flags` is the engine's own line)."""
        return None

    def to_flags(self, settings: LaunchSettings) -> list[str]:
        # --num-gpu-blocks only where the release's CLI declares it (eras.NUM_GPU_BLOCKS_FLAG_SINCE); before, argparse
        # refuses it, and the cap is named not written (`token_caps_of` leaves it out)
        declared = since(NUM_GPU_BLOCKS_FLAG_SINCE, ResolvedVersion(text=settings.engine_version))
        out = written_flags(settings, PREFERRED if declared else {
            field: flag for field, flag in PREFERRED.items() if field != "num_gpu_blocks_override"})  # fmt: skip
        policy = quant_policy(settings.kv_cache_dtype)
        return [*out, "--quant-policy", str(policy)] if policy else out

    def read_int(self, field: str, raw: str, flag: str, engine_version: str | None) -> int | None:
        return None  # no suffixed counts read: every count is a plain whole number (int())

    def as_parsed(self, spelling: str) -> str:
        return spelling  # lmdeploy's CLI is argparse: option names match as typed

    def refuse_kv_dtype(self, dtype: str, flag: str, engine_version: str | None) -> None:
        """A --quant-policy outside those kvtop models (`refuse` names TurboQuant's 42 first) is refused."""
        refuse_unlisted_kv_dtype("LMDeploy", dtype, self.kv_cache_dtypes, flag)

    def kv_cache_dtype_words(self, engine_version: str | None) -> Mapping[str, str]:
        """The `--quant-policy` numbers' meanings at that release (`policy_words`): TurboMind's, whatever the backend.
        Before v0.6.2 the PyTorch engine has no KV quantisation (0.6.1's `PytorchEngineConfig`, lmdeploy/messages.py:222,
        has no `quant_policy`; 0.6.2 adds it, messages.py:280, and quantises in pytorch/engine/cache_engine.py:46), and
        a plan there refuses 4 and 8 (`budget_pytorch`). The words cannot say so: this method knows only the release,
        and the backend is `--backend` or, when not given, whether TurboMind supports the model's architecture
        (`memory.resolve_backend`), neither of which the planner's KV list is built from."""
        return policy_words(engine_version)

    def find_launch(self, argv: Sequence[str]) -> tuple[int, str | None] | None:
        """`lmdeploy serve api_server MODEL …` (or `serve gradio`, or `python -m lmdeploy serve …`)."""
        for index, token in enumerate(argv):
            if token.rsplit("/", 1)[-1] != "lmdeploy" or index + 2 >= len(argv):
                continue
            if argv[index + 1] == "serve" and argv[index + 2] in ("api_server", "gradio"):
                return index + 3, positional_model(argv[index + 3 :])
        return None

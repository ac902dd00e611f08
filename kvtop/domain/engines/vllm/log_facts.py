"""vLLM's whole-log lines (the launch's arguments, its engine config and version, the hybrid manager turned
off) and the rank a line's process names (`(EngineCore_DP0 pid=1) (Worker_TP1 pid=2)`): what its dialect
reads once per log, beside the per-rank handlers of `log_lines` (docs/engines/vllm.md §1, §5)."""

from __future__ import annotations

import ast
import json
import re
from functools import lru_cache

from kvtop.domain.engines.vllm.mxfp4_backend import MEASURED_KEY
from kvtop.domain.log_args import ArgValue, parse_call_args, parse_dict_args
from kvtop.domain.log_dialect import LogFacts, RankTuple, rank_from_tags, version_line

_VERSION = re.compile(r"(?:LLM engine \(v|vLLM (?:API )?server version )(\d[\w.+-]{0,40})")


#: config objects vLLM prints as their dataclass repr in its args (`'kv_transfer_config': KVTransferConfig(
#: kv_connector='P2pNcclConnector', …)`, vllm/config/kv_transfer.py), where the flag takes a JSON object
_CONFIG_REPRS = {"kv_transfer_config": "KVTransferConfig("}


def _config_json(args: dict[str, ArgValue]) -> dict[str, ArgValue]:
    """`args` with each config repr of `_CONFIG_REPRS` as the JSON object its flag takes: its fields that read
    (scalars, and a dict of scalars such as `kv_connector_extra_config`); other fields are left out."""
    for key, head in _CONFIG_REPRS.items():
        text = args.get(key)
        if not isinstance(text, str) or not text.startswith(head):
            continue
        fields: dict[str, object] = {}
        for name, value in parse_call_args(text, len(head)).items():
            if isinstance(value, str) and value.startswith("{"):
                fields[name] = parse_dict_args(value)
            elif not (isinstance(value, str) and (value.startswith("[") or "(" in value)):  # no list, no repr
                fields[name] = value
        args = {**args, key: json.dumps(fields)}
    return args


#: arguments whose flag takes a JSON object that `non-default args` prints as a Python dict (`'speculative_config':
#: {'method': 'mtp', 'num_speculative_tokens': 1}`: vLLM logs the parsed namespace's dict, api_utils.py)
_PRINTED_DICTS = ("speculative_config",)


def _printed_json(args: dict[str, ArgValue]) -> dict[str, ArgValue]:
    """`args` with each `_PRINTED_DICTS` value a Python dict literal as the JSON object its flag takes
    (ast.literal_eval: literals only, bounded); a value that is no such literal is left as printed."""
    for key in _PRINTED_DICTS:
        text = args.get(key)
        if not isinstance(text, str) or not text.startswith("{") or len(text) > 16 * 1024:
            continue
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict):
            try:
                args = {**args, key: json.dumps(value)}
            except (TypeError, ValueError):  # a value JSON has no form for (a set, bytes): left as printed
                continue
    return args


def non_default_args(line: str, facts: LogFacts) -> bool:
    args = _printed_json(_config_json(parse_dict_args(line, line.find("non-default args:"))))
    facts.server_args = {**args, **facts.server_args}
    return bool(args)


def namespace_args(line: str, facts: LogFacts) -> bool:
    args = _config_json(parse_call_args(line, line.find("Namespace(") + len("Namespace(")))
    facts.server_args = {**args, **facts.server_args}
    return bool(args)


version = version_line(_VERSION)


def hybrid_off(line: str, facts: LogFacts) -> bool:
    """`Turning off hybrid kv cache manager because …` (a KV connector, a feature it lacks): every layer is
    sized as full attention (§3.4), as `--disable-hybrid-kv-cache-manager` would."""
    facts.decided("disable_hybrid_kv_cache_manager=True")
    return True


# mxfp4.py `get_mxfp4_backend` (v0.10.1 … v0.13.0): 'Using Marlin backend' / 'Using Triton backend' (`info_once`; with
# LoRA '[get_mxfp4_backend_with_lora] Using … backend', at v0.20.2 fused_moe/oracle/mxfp4.py:267-271 '… backend for
# mxfp4 lora'); fp8.py's '… backend for FP8 MoE' and XPU's 'Using Triton backend.' end otherwise.
_MXFP4_BACKEND = re.compile(r"\bUsing (Marlin|Triton) backend(?: for mxfp4 lora)?\s*$")
# fused_moe/oracle/mxfp4.py's enum value (`Mxfp4MoeBackend`): `_make_log_backend` "Using '{backend.value}' Mxfp4 MoE
# backend." at v0.20.2 (:281) … v0.33.0 (:539); v0.34.0 oracle/base.py:153-166 `make_log_backend` drops the quotes and
# may add "LoRA " and " out of potential backends: […]". A third-party note quotes v0.19.1's line the same way
# (search-index file 66510551578: "[mxfp4.py:352] Using 'MARLIN' Mxfp4 MoE backend."); the 'Mxfp4 MoE' words keep
# the FP8 / NVFP4 oracles' "Using '…' Fp8 MoE backend." out.
_MXFP4_MOE_BACKEND = re.compile(r"\bUsing '?([A-Z][A-Z0-9_]{1,60})'? Mxfp4 MoE (?:LoRA )?backend\b")


def mxfp4_backend(line: str, facts: LogFacts) -> bool:
    """The MXFP4 MoE backend vLLM chose, whose layout sizes the experts (§20.1): 'marlin' / 'triton' from the older
    line, the oracle's enum value in lower case ('marlin', 'batched_marlin', 'flashinfer_trtllm_mxfp4_bf16', …) from
    the newer; mxfp4_backend.py reads which layout each is."""
    match = _MXFP4_BACKEND.search(line) or _MXFP4_MOE_BACKEND.search(line)
    if match:
        facts.decided(f"{MEASURED_KEY}={match.group(1).lower()}")
    return match is not None


# The line each worker logs where it builds the V2 runner (`logger.info_once("Using V2 Model Runner")`, the same
# words at every release read: v1/worker/gpu_worker.py:292 at v0.21.0, :289 at v0.22.0, :360 at v0.25.0, :429 at
# v0.29.0, :441 at v0.30.0, :513 at v0.33.0; none at v0.34.0, V2 its only runner), and the fallback warning
# (config/vllm.py use_v2_model_runner: 'Model runner v2 does not yet support %s; using the v1 model runner instead.'
# at v0.22.0 :507-512, 'Model Runner V2 … using the V1 model runner instead.' from v0.23.0 :535-539). explain sets
# what the log says as the measured `LaunchSettings.logged_runner` (`LOGGED_RUNNER=v2|v1`, a decision no flag sets)
LOGGED_RUNNER = "logged_runner"  # one of launch.LOG_ONLY_FIELDS
V2_LINE = "Using V2 Model Runner"
V1_FALLBACK_LINES = ("using the V1 model runner instead", "using the v1 model runner instead")


def model_runner(line: str, facts: LogFacts) -> bool:
    """The runner the log says ran (runner_refusals.py): the worker's 'Using V2 Model Runner', which it logs where it
    builds V2, over the V1 fallback warning (`use_v2_model_runner` is a property, evaluated again as the config
    settles); the warning where no worker line says V2."""
    said = "v2" if V2_LINE in line else "v1" if any(words in line for words in V1_FALLBACK_LINES) else None
    if said is None:
        return False
    if f"{LOGGED_RUNNER}=v2" not in facts.decisions:
        facts.decisions[:] = [d for d in facts.decisions if not d.startswith(f"{LOGGED_RUNNER}=")]
        facts.decided(f"{LOGGED_RUNNER}={said}")
    return True


# the admission check's refusals name max_model_len (`vllm_config.model_config.max_model_len`): V1 "To serve at least
# one request with the model's max seq len (L), …" (v0.13.0 v1/core/kv_cache_utils.py, v0.33.0
# v1/core/kv_cache_planning.py _check_enough_kv_cache_memory), V0 "The model's max seq len (L) is larger than …"
# (worker.py raise_if_cache_size_invalid); §4.2
_REFUSED_LENGTH = re.compile(r"(?:one request with the models?'s? max seq len|The model's max seq len) \((\d{1,20})\)")


def refused_length(line: str, facts: LogFacts) -> bool:
    """The max_model_len a refused start names, read as the launch's where no printed argument gave one."""
    match = _REFUSED_LENGTH.search(line)
    if match is not None:
        facts.decided(f"max_model_len={match.group(1)}")
    return match is not None


def engine_config(line: str, facts: LogFacts) -> bool:
    """`Initializing a V1 LLM engine (v0.24.0) with config: model='…', …`."""
    found_version = version(line, facts)
    if "with config:" not in line:
        return found_version
    args = parse_call_args(line, line.find("with config:") + len("with config:"))
    if "speculative_config" in facts.server_args:  # its repr (SpeculativeConfig.__repr__: method, model,
        args.pop("speculative_config", None)  # num_spec_tokens) says less than the printed argument
    facts.engine_config = {**args, **facts.engine_config}
    return bool(args) or found_version


_PROCESS = re.compile(r"\(([A-Za-z][\w-]{0,60}?)(?:\s+rank=(\d{1,6}))?(?:\s+engine_index=\d{1,6})?\s+pid=\d{1,10}\)")
_PROCESSES = re.compile(
    r"\([A-Za-z][\w-]{0,60}?(?:\s+rank=\d{1,6})?(?:\s+engine_index=\d{1,6})?\s+pid=\d{1,10}\)"
    r"(?:\s*\([A-Za-z][\w-]{0,60}?(?:\s+rank=\d{1,6})?(?:\s+engine_index=\d{1,6})?\s+pid=\d{1,10}\)){0,3}"
)


def rank_of_processes(head: str) -> tuple[int, RankTuple] | None:
    """`(EngineCore_DP0 pid=1) (Worker_TP1 pid=2)`: the rank the process names state, one or more."""
    match = _PROCESSES.search(head)
    return (match.start(), _rank_from_processes(match.group())) if match else None


@lru_cache(maxsize=1024)
def _rank_from_processes(processes: str) -> RankTuple:
    names = _PROCESS.findall(processes)
    worker = next((rank for _, rank in names if rank), None)
    return rank_from_tags(" ".join(name for name, _ in names), worker)

"""vLLM's memory messages of several sentences, one handler per sentence (docs/engines/vllm.md §2, §6, §9).

The V1 startup ledger (`Free memory on device … on startup`, the desired utilization, `Actual usage is …`,
the suggested `--kv-cache-memory`) and its shortfall, the DEBUG `Requested memory: u (util), R GiB`, the
admission error (`… GiB KV cache is needed …`) with its estimated length, the token shortfall,
`kv_cache_memory_bytes`' reservation, and V0's memory profile: each sentence completes the latest record of its
process (`log_figures.merge`), so a message reflowed over several lines is read whole. `MEMORY_HANDLERS` is
their part of the dialect's table (`log_lines.HANDLERS`).
"""

from __future__ import annotations

import re
from typing import Any

from kvtop.domain.engine_log import Measured
from kvtop.domain.engines.vllm.log_figures import (
    GIB_FIGURE,
    NUM,
    found_gib,
    gib,
    gib_before,
    merge,
    number_before,
    rounded_text,
)
from kvtop.domain.engines.vllm.log_records import KvMemoryReserved, KvTokenShortfall, RequestedMemory
from kvtop.domain.log_dialect import Fields, RankHandler

_FREE = re.compile(rf"Free memory on device\s*(?:\S{{1,40}}\s+)?\(({NUM})/{GIB_FIGURE}\) on startup")
_DESIRED = re.compile(
    rf"(?:esired GPU memory utilization is|esired GPU memory utilization) \(({NUM}), {GIB_FIGURE}\)"
)
_USAGE_PART = re.compile(
    r"GiB for (weight|consumed memory|peak activation|non-torch memory|CUDAGraph memory)"
)
_USAGE_FIELDS = {
    "weight": "weights",
    "consumed memory": "consumed",
    "peak activation": "peak_activation",
    "non-torch memory": "non_torch",
    "CUDAGraph memory": "cuda_graph",
}
_FIT = re.compile(rf"--kv-cache-memory=(\d{{1,20}})`?\s*\({GIB_FIGURE}\) to fit")
_FULL = re.compile(rf"--kv-cache-memory=(\d{{1,20}})`?\s*\({GIB_FIGURE}\) to fully")
_IN_USE = re.compile(rf"Current kv cache memory in use is {GIB_FIGURE}")
_MAX_SEQ_LEN = re.compile(r"max seq len \((\d{1,20})\)")
_NEEDED = re.compile(r"GiB KV cache is needed")
_ADMISSION_AVAILABLE = re.compile(rf"available KV cache memory \({GIB_FIGURE}\)")
_ESTIMATED_LEN = re.compile(r"estimated maximum model length is (\d{1,20})")
_TOKEN_SHORTFALL = re.compile(
    r"max seq len \((\d{1,20})\) is larger than the maximum number of tokens that can be stored in KV cache \((\d{1,20})\)"
)
_RESERVED = re.compile(rf"Initial free memory {GIB_FIGURE}, reserved {GIB_FIGURE} memory for KV Cache")
_REQUESTED = re.compile(rf"Initial free memory: {GIB_FIGURE}; Requested memory: ({NUM}) \(util\), {GIB_FIGURE}")
_PROFILE_PAIR = re.compile(rf"(\w{{1,40}})=({NUM})\s*GiB")
_PROFILE_UTIL = re.compile(rf"gpu_memory_utilization[ =(]{{1,2}}({NUM})")
_PROFILE_TOTAL = re.compile(rf"total_gpu_memory \({GIB_FIGURE}\) x gpu_memory_utilization \(({NUM})\) = {GIB_FIGURE}")
_PROFILE_SENTENCE = re.compile(
    rf"(model weights take|non_torch_memory takes|PyTorch activation peak memory takes|"
    rf"the rest of the memory reserved for KV Cache is) {GIB_FIGURE}"
)
_PROFILE_KEYS = {
    "model weights take": "weights",
    "non_torch_memory takes": "non_torch_memory",
    "PyTorch activation peak memory takes": "peak_activation",
    "the rest of the memory reserved for KV Cache is": "kv_cache_size",
}


def _free_on_startup(text: str, fields: Fields) -> bool:
    free = _FREE.search(text)
    values: dict[str, Any] = {
        "free": gib(free.group(1)) if free else None,
        "total": gib(free.group(2)) if free else None,
    }
    if "is less than desired" in text:
        desired = _DESIRED.search(text)
        values["util"] = rounded_text(desired.group(1)) if desired else None
        values["requested"] = gib(desired.group(2)) if desired else None
        return merge(fields["startup_shortfalls"], values, new=True)
    return merge(fields["startup_ledgers"], values, new=True)


def _desired(text: str, fields: Fields) -> bool:
    desired = _DESIRED.search(text)
    if desired is None or "is less than desired" in text:
        return False
    values = {"util": rounded_text(desired.group(1)), "requested": gib(desired.group(2))}
    return merge(fields["startup_ledgers"], values)


def _actual_usage(text: str, fields: Fields) -> bool:
    values = {
        _USAGE_FIELDS[match.group(1)]: number_before(text, match.start())
        for match in _USAGE_PART.finditer(text)
    }
    return merge(fields["startup_ledgers"], values)


def _suggested_kv(text: str, fields: Fields) -> bool:
    fit, full = _FIT.search(text), _FULL.search(text)
    values = {
        "fit_kv_bytes": int(fit.group(1)) if fit else None,
        "fit_kv": gib(fit.group(2)) if fit else None,
        "full_kv_bytes": int(full.group(1)) if full else None,
        "full_kv": gib(full.group(2)) if full else None,
    }
    return merge(fields["startup_ledgers"], values)


def _in_use(text: str, fields: Fields) -> bool:
    return merge(fields["startup_ledgers"], {"kv_in_use": found_gib(_IN_USE, text)})


def _admission(text: str, fields: Fields) -> bool:
    seq_len = _MAX_SEQ_LEN.search(text)
    estimated = _ESTIMATED_LEN.search(text)
    values = {
        "max_seq_len": int(seq_len.group(1)) if seq_len else None,
        "needed": gib_before(_NEEDED, text),
        "available": found_gib(_ADMISSION_AVAILABLE, text),
        "estimated_max_model_len": int(estimated.group(1)) if estimated else None,
    }
    if values["available"] is not None and not fields["available_kv_cache_memory"] and not fields["blocks_overrides"]:
        # The log's KV memory where an excerpt kept only the error (docs/engines/vllm.md §4.2). The check quotes
        # the worker's `determine_available_memory()`, the figure `Available KV cache memory: X GiB` prints
        # (engine/core.py `_initialize_kv_caches` → get_kv_cache_configs → check_enough_kv_cache_memory): read in
        # a v0.8.3.dev172 log (case vllm-15871) and the v0.13.0 wheel (kv_cache_utils.py). Not where an
        # `Overriding num_gpu_blocks` line came first: from v0.20.1 (PR #41069, v0.33.0 kv_cache_planning.py
        # get_kv_cache_configs) the check quotes override × bytes per block. From v0.29.0 (PR #47272, merge
        # 76fb6d210a57, 2026-08-20, absent from v0.28.0; present in the v0.33.0 wheel) it quotes that less one
        # block (the null block): read as is, one block below the log's KV memory (no block size here; the budget
        # counts it from v0.29.0, eras.ADMISSION_RESERVED_BLOCKS_ERAS).
        fields["available_kv_cache_memory"].append(values["available"])
    return merge(fields["admission_errors"], values, new=True)


def _estimated_len(text: str, fields: Fields) -> bool:
    if "KV cache is needed" in text:
        return False  # the admission handler took it with the rest of the message
    estimated = _ESTIMATED_LEN.search(text)
    values = {"estimated_max_model_len": int(estimated.group(1)) if estimated else None}
    return merge(fields["admission_errors"], values)


def _token_shortfall(text: str, fields: Fields) -> bool:
    match = _TOKEN_SHORTFALL.search(text)
    if match is None:
        return False
    shortfall = KvTokenShortfall(max_seq_len=int(match.group(1)), kv_tokens=int(match.group(2)))
    fields["token_shortfalls"].append(shortfall)
    return True


def _reserved(text: str, fields: Fields) -> bool:
    match = _RESERVED.search(text)
    if match is None:
        return False
    reserved = KvMemoryReserved(initial_free=gib(match.group(1)), reserved=gib(match.group(2)))
    fields["kv_memory_reserved"].append(reserved)
    return True


def _requested(text: str, fields: Fields) -> bool:
    match = _REQUESTED.search(text)
    if match is None:
        return False
    requested = RequestedMemory(
        initial_free=gib(match.group(1)), util=rounded_text(match.group(2)), requested=gib(match.group(3))
    )
    fields["requested_memories"].append(requested)
    return True


def _add_profile(fields: Fields, figures: dict[str, Measured], util: float | None, *, new: bool) -> bool:
    profiles = fields["v0_profiles"]
    if not figures and util is None:
        return False
    last = profiles[-1] if profiles else None
    if not new and last is not None and not set(figures) & set(last["figures"]):
        last["figures"].update(figures)
        last["gpu_memory_utilization"] = last["gpu_memory_utilization"] if util is None else util
    else:
        profiles.append({"figures": dict(figures), "gpu_memory_utilization": util})
    return True


def _profile_results(text: str, fields: Fields) -> bool:
    figures = {match.group(1): gib(match.group(2)) for match in _PROFILE_PAIR.finditer(text)}
    util = _PROFILE_UTIL.search(text)
    return _add_profile(fields, figures, float(util.group(1)) if util else None, new=True)


def _profile_total(text: str, fields: Fields) -> bool:
    match = _PROFILE_TOTAL.search(text)
    if match is None:
        return False
    figures = {"total_gpu_memory": gib(match.group(1)), "requested": gib(match.group(3))}
    return _add_profile(fields, figures, float(match.group(2)), new=True)


def _profile_sentences(text: str, fields: Fields) -> bool:
    figures = {_PROFILE_KEYS[m.group(1)]: gib(m.group(2)) for m in _PROFILE_SENTENCE.finditer(text)}
    return _add_profile(fields, figures, None, new=False)


MEMORY_HANDLERS: tuple[tuple[str, RankHandler], ...] = (
    ("Free memory on device", _free_on_startup),
    ("esired GPU memory utilization is (", _desired),
    ("Actual usage is", _actual_usage),
    ("--kv-cache-memory=", _suggested_kv),
    ("Current kv cache memory in use", _in_use),
    ("KV cache is needed", _admission),
    ("estimated maximum model length is", _estimated_len),
    ("stored in KV cache (", _token_shortfall),
    ("as specified by kv_cache_memory_bytes", _reserved),
    ("Requested memory: ", _requested),
    ("Memory profiling results", _profile_results),
    ("x gpu_memory_utilization (", _profile_total),
    (" take", _profile_sentences),
)
"""(trigger substring, handler) of the memory messages, in the order the dialect runs them."""

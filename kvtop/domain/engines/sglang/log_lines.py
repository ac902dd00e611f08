"""SGLang startup-log lines (docs/engines/sglang.md §2, §11, §14), one handler per kind of line.

Each handler gets a line that contains its trigger substring and the per-rank field lists it
appends to; it returns whether it took a value. Fields are pulled one by one with small regexes,
so a line that gained or lost a field between SGLang versions still yields what it states.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from functools import lru_cache
from typing import Any

from kvtop.domain.engine_log import Measured, RankKey, Rounded
from kvtop.domain.engines.sglang.log_records import (
    GraphCapture,
    KvAllocation,
    KvBudgetError,
    MambaAllocation,
    PostCaptureResize,
    ProfiledTokenOverride,
    SchedulerSummary,
    SglangRankLog,
    SlidingWindowSplit,
    SwaPoolUsage,
    WeightLoad,
)
from kvtop.domain.log_args import parse_call_args
from kvtop.domain.log_dialect import Fields, LogDialect, LogFacts, RankHandler, RankTuple, rank_from_tags

Handler = RankHandler

_NUM = r"-?\d{1,15}(?:\.\d{1,12})?"
_INT = r"-?\d{1,20}"
_GB = rf"({_NUM})\s*GB"

_AVAIL = re.compile(rf"avail mem=\s*{_GB}")
_USAGE = re.compile(rf"mem usage=\s*{_GB}")
_ELAPSED = re.compile(rf"(?:elapsed=|Time elapsed:\s*)({_NUM})\s*s")
_TYPE = re.compile(r"type=([\w.]{1,200})")
_DTYPE_EQ = re.compile(r"dtype=([\w.]{1,60})")
_QUANT = re.compile(r"quant=([\w.-]{1,60})")
_KV_DTYPE = re.compile(r"dtype: ([\w.]{1,60})")
_KV_TOKENS = re.compile(r"#tokens: (\d[\d,]{0,29})")
_K_SIZE = re.compile(rf"K size: {_GB}")
_V_SIZE = re.compile(rf"[^K]V size: {_GB}")
_KV_SIZE = re.compile(rf"KV size: {_GB}")
_SWA = re.compile(rf"SWAKVPool mem usage: {_GB}")
_SWA_SIZE = re.compile(r"swa size: (\d[\d,]{0,29})")
_FULL_SIZE = re.compile(r"full size: (\d[\d,]{0,29})")
_FULL_LAYER = re.compile(r"full_layer_tokens=(\d[\d,]{0,29})")
_SWA_LAYER = re.compile(r"swa_layer_tokens=(\d[\d,]{0,29})")
_MAMBA_SIZE = re.compile(r"max_mamba_cache_size: (\d{1,20})")
_CONV = re.compile(rf"conv_state size: {_GB}")
_SSM = re.compile(rf"ssm_state size: {_GB}")
_CAPTURE = re.compile(r"Capture\s+([\w -]{0,40}?)\s*cuda graph (begin|end)", re.IGNORECASE)
_SUMMARY = {
    key: re.compile(rf"{key}=({_INT})")
    for key in (
        "max_total_num_tokens", "chunked_prefill_size", "max_prefill_tokens",
        "max_running_requests", "context_len",
    )
}  # fmt: skip
_AVAILABLE_GPU_MEM = re.compile(rf"available_gpu_mem={_GB}")
_PROFILED = re.compile(rf"max_total_tokens=({_INT}) is larger than the profiled value ({_INT})")
_POST_CAPTURE = re.compile(rf"max_total_num_tokens=({_INT}), free memory={_GB}")
_MM_RESERVE = re.compile(rf"Reserving {_GB} of the KV budget")
_USING_DTYPE = re.compile(r"Using KV cache dtype: ([\w.]{1,60})")
_MFS = re.compile(rf"(?:--mem-fraction-static=|mem_fraction_static=)({_NUM})")
_MIN_VIABLE = re.compile(rf"minimum viable = [^=]{{0,40}}= ({_NUM})")
_ALLOWED = re.compile(r"maximum allowed length \((\d{1,20}) tokens\)")
_STAMP = re.compile(r"\[(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d(?:[.,]\d{1,6})?)")


@lru_cache(maxsize=4096)
def _measured(number: str) -> Measured:
    """SGLang's "X GB" (GiB) as printed; cached, as a log repeats the same figures."""
    return Measured.from_text(number, unit="GB")


def _gib(pattern: re.Pattern[str], text: str) -> Measured | None:
    match = pattern.search(text)
    return _measured(match.group(1)) if match else None


def _int(pattern: re.Pattern[str], text: str, group: int = 1) -> int | None:
    match = pattern.search(text)
    return int(match.group(group).replace(",", "")) if match else None


def _str(pattern: re.Pattern[str], text: str) -> str | None:
    match = pattern.search(text)
    return match.group(1) if match else None


def _seconds(text: str) -> float | None:
    match = _ELAPSED.search(text)
    return float(match.group(1)) if match else None


def _stamp(text: str) -> datetime | None:
    """The date and time SGLang's prefix carries (`[2025-10-07 23:17:19 DP0 TP0]`; a fraction of a second after
    `.` or `,`), or None, also where the digits are no date (a mangled line: `2025-12-62`)."""
    match = _STAMP.search(text[:200])
    if match is None:
        return None
    clock = match.group(2).replace(",", ".")
    try:
        return datetime.strptime(f"{match.group(1)} {clock}", "%Y-%m-%d %H:%M:%S.%f" if "." in clock else "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return None


def _append(fields: Fields, name: str, **values: object) -> bool:
    """Append the stated `values` as one record (made a model in `freeze`), unless there are none."""
    stated = {key: value for key, value in values.items() if value is not None}
    if not stated:
        return False
    fields[name].append(stated)
    return True


def _append_stamped(text: str, fields: Fields, name: str, **values: object) -> bool:
    """`_append` for a line that states a capacity: the record keeps the time of its line (`_stamp`)."""
    took = _append(fields, name, **values)
    if took and (at := _stamp(text)) is not None:
        fields[name][-1]["at"] = at
    return took


def _init_dist(text: str, fields: Fields) -> bool:
    usage = _gib(_USAGE, text)
    if usage is not None:
        fields["init_dist_mem_usage"].append(usage)
    return usage is not None


def _pool_line(handler: Handler) -> Handler:
    """`handler` of a line a start prints after its weights (KV allocated, SWA and Mamba pools, memory pool end, the
    scheduler's summary: `HANDLERS`): a line it takes marks the rank's last load as followed by its pool
    (`WeightLoad.pool_after`), so the next load opens the next start."""

    def handle(text: str, fields: Fields) -> bool:
        took = handler(text, fields)
        loads = fields["weight_loads"]
        if took and loads:
            loads[-1]["pool_after"] = True
        return took

    return handle


def _new_load(text: str, fields: Fields, **values: object) -> bool:
    """A weight load's record, with its line's time and its start (`WeightLoad.start`): a `Load weight begin` (or
    an end line with no begin open) opens the next start where the previous load was followed by a pool line
    (`pool_after`), else it is that load's start (target and draft share one start)."""
    loads = fields["weight_loads"]
    start = 0 if not loads else loads[-1]["start"] + (1 if loads[-1].get("pool_after") else 0)
    if not _append_stamped(text, fields, "weight_loads", **values):
        return False
    loads[-1]["start"] = start
    return True


def _load_begin(text: str, fields: Fields) -> bool:
    return _new_load(text, fields, avail_before=_gib(_AVAIL, text))


def _load_end(text: str, fields: Fields) -> bool:
    end = {
        "avail_after": _gib(_AVAIL, text),
        "mem_usage": _gib(_USAGE, text),
        "elapsed_s": _seconds(text),
        "model_class": _str(_TYPE, text),
        "dtype": _str(_DTYPE_EQ, text),
        "quant": _str(_QUANT, text),
    }
    stated = {key: value for key, value in end.items() if value is not None}
    if not stated:
        return False
    loads = fields["weight_loads"]
    if loads and loads[-1].get("avail_after") is None and loads[-1].get("mem_usage") is None:
        loads[-1].update(stated)
        return True
    return _new_load(text, fields, **stated)


def _kv_allocated(text: str, fields: Fields) -> bool:
    return _append_stamped(
        text,
        fields,
        "kv_allocations",
        dtype=_str(_KV_DTYPE, text),
        tokens=_int(_KV_TOKENS, text),
        k_size=_gib(_K_SIZE, text),
        v_size=_gib(_V_SIZE, text),
        kv_size=_gib(_KV_SIZE, text),
    )


def _swa_pool(text: str, fields: Fields) -> bool:
    return _append_stamped(
        text,
        fields,
        "swa_pools",
        mem_usage=_gib(_SWA, text),
        swa_tokens=_int(_SWA_SIZE, text),
        full_tokens=_int(_FULL_SIZE, text),
    )


def _sliding_window(text: str, fields: Fields) -> bool:
    return _append_stamped(
        text,
        fields,
        "sliding_window_splits",
        full_layer_tokens=_int(_FULL_LAYER, text),
        swa_layer_tokens=_int(_SWA_LAYER, text),
    )


def _mamba(text: str, fields: Fields) -> bool:
    return _append(
        fields,
        "mamba_allocations",
        max_mamba_cache_size=_int(_MAMBA_SIZE, text),
        conv_state=_gib(_CONV, text),
        ssm_state=_gib(_SSM, text),
    )


def _pool_end(text: str, fields: Fields) -> bool:
    avail = _gib(_AVAIL, text)
    if avail is not None:
        fields["memory_pool_end_avail"].append(avail)
    return avail is not None


def _capture(text: str, fields: Fields) -> bool:
    match = _CAPTURE.search(text)
    if match is None:
        return False
    phase = " ".join(match.group(1).lower().split())
    captures = fields["graph_captures"]
    if match.group(2).lower() == "begin":
        captures.append({"phase": phase, "avail_before": _gib(_AVAIL, text)})
        return True
    end = {"mem_usage": _gib(_USAGE, text), "avail_after": _gib(_AVAIL, text), "elapsed_s": _seconds(text)}
    stated = {key: value for key, value in end.items() if value is not None}
    open_capture = captures[-1] if captures else None
    if open_capture is not None and open_capture["phase"] == phase and open_capture.get("mem_usage") is None:
        open_capture.update(stated)
    else:
        captures.append({"phase": phase, **stated})
    return True


def _summary(text: str, fields: Fields) -> bool:
    if "Post-capture KV sizing" in text:
        return False
    values = {key: _int(pattern, text) for key, pattern in _SUMMARY.items()}
    available = _gib(_AVAILABLE_GPU_MEM, text)
    return _append_stamped(text, fields, "scheduler_summaries", available_gpu_mem=available, **values)


def _profiled(text: str, fields: Fields) -> bool:
    match = _PROFILED.search(text)
    if match is None:
        return False
    override = ProfiledTokenOverride(
        max_total_tokens=int(match.group(1)), profiled_tokens=int(match.group(2))
    )
    fields["profiled_token_overrides"].append(override)
    return True


def _post_capture(text: str, fields: Fields) -> bool:
    match = _POST_CAPTURE.search(text)
    if match is None:
        return False
    resize = PostCaptureResize(
        max_total_num_tokens=int(match.group(1)), free_memory=_measured(match.group(2)), at=_stamp(text)
    )
    fields["post_capture_resizes"].append(resize)
    return True


def _mm_reserve(text: str, fields: Fields) -> bool:
    reserve = _gib(_MM_RESERVE, text)
    if reserve is not None:
        fields["mm_reserves"].append(reserve)
    return reserve is not None


def _kv_dtype(text: str, fields: Fields) -> bool:
    dtype = _str(_USING_DTYPE, text)
    if dtype is not None:
        fields["kv_cache_dtype"].append(dtype)
    return dtype is not None


def _budget_error(text: str, fields: Fields) -> bool:
    no_kv = "leave no GPU memory for the KV cache" in text
    mfs = _MFS.search(text)
    minimum = _MIN_VIABLE.search(text)
    trigger = "Loaded weights" if no_kv else "Not enough memory"
    error = KvBudgetError(
        kind="no_memory_for_kv" if no_kv else "not_enough_memory",
        mem_fraction_static=float(mfs.group(1)) if mfs else None,
        minimum_viable=Rounded.from_text(minimum.group(1)) if minimum else None,
        message=text[max(text.find(trigger), 0) :].strip(),
    )
    fields["budget_errors"].append(error)
    return True


def _allowed_length(text: str, fields: Fields) -> bool:
    length = _int(_ALLOWED, text)
    if length is not None:
        fields["max_allowed_input_lengths"].append(length)
    return length is not None


HANDLERS: tuple[tuple[str, Handler], ...] = (
    ("Init torch distributed ends", _init_dist),
    ("Load weight begin", _load_begin),
    ("Load weight end", _load_end),
    ("KV Cache is allocated", _pool_line(_kv_allocated)),
    ("SWAKVPool mem usage", _pool_line(_swa_pool)),
    ("Use sliding window memory pool", _sliding_window),
    ("Mamba Cache is allocated", _pool_line(_mamba)),
    ("Memory pool end", _pool_line(_pool_end)),
    ("Capture ", _capture),
    ("max_total_num_tokens=", _pool_line(_summary)),
    ("is larger than the profiled value", _profiled),
    ("Post-capture KV sizing", _post_capture),
    ("of the KV budget for post-sizing", _mm_reserve),
    ("Using KV cache dtype", _kv_dtype),
    ("leave no GPU memory for the KV cache", _budget_error),
    ("Not enough memory. Please try to increase --mem-fraction-static", _budget_error),
    ("maximum allowed length (", _allowed_length),
)
"""(trigger substring, handler): a handler runs only on lines that contain its trigger."""


_RECORDS: dict[str, Callable[..., Any]] = {
    "weight_loads": WeightLoad,
    "kv_allocations": KvAllocation,
    "swa_pools": SwaPoolUsage,
    "sliding_window_splits": SlidingWindowSplit,
    "mamba_allocations": MambaAllocation,
    "graph_captures": GraphCapture,
    "scheduler_summaries": SchedulerSummary,
}


def freeze(rank: RankKey, fields: Fields) -> SglangRankLog:
    """The frozen record of one rank from the lists the handlers filled (records are dicts)."""
    values: dict[str, Any] = {
        name: tuple(_RECORDS[name](**item) if isinstance(item, dict) else item for item in items)
        for name, items in fields.items()
        if items
    }
    dtypes = values.pop("kv_cache_dtype", ())
    return SglangRankLog(rank=rank, kv_cache_dtype=dtypes[0] if dtypes else None, **values)


# --- whole-log lines ----------------------------------------------------------------------------

_PAGE_CHANGE = re.compile(r"changing page_size from \w{1,10} to (\d{1,6})")


def _server_args(line: str, facts: LogFacts) -> bool:
    args = parse_call_args(line, line.find("ServerArgs(") + len("ServerArgs("))
    facts.server_args = {**args, **facts.server_args}
    return bool(args)


def _page_change(line: str, facts: LogFacts) -> bool:
    """§6.6: a backend forces the page size (`… changing page_size from None to 64.`)."""
    match = _PAGE_CHANGE.search(line)
    if match is None:
        return False
    facts.decided(f"page_size={match.group(1)}")
    return True


def _swa_off(line: str, facts: LogFacts) -> bool:
    """§8.4: the engine turned the hybrid SWA pool off (Gemma 2/3, or a flag): one full pool."""
    facts.decided("disable_hybrid_swa_memory=True")
    return True


_RANK_BRACKETS = re.compile(
    r"\[(?:\d{4}-\d\d-\d\d[ T])?\d\d:\d\d:\d\d(?:[.,]\d{1,6})?((?:\s+[A-Z]{2,4}\d{1,5}){0,8})\s*\]"
)


def _rank_in_brackets(head: str) -> tuple[int, RankTuple] | None:
    """`[2025-01-23 10:00:00 DP1 TP3 EP3]`: the rank tags after the time in SGLang's prefix."""
    match = _RANK_BRACKETS.search(head)
    return (match.start(), rank_from_tags(match.group(1), None)) if match else None


DIALECT = LogDialect(
    engine="sglang",
    rank_handlers=HANDLERS,
    log_handlers=(
        ("ServerArgs(", _server_args),
        ("changing page_size from", _page_change),
        ("isable hybrid SWA memory", _swa_off),
        ("isabling hybrid SWA memory", _swa_off),
    ),
    launch=re.compile(r"(?:python[\d.]*\s+-m\s+)?(?:sglang\.launch_server|sglang serve)\b.*"),
    own_failures=None,
    freeze=freeze,
    refusals=("Not enough memory. Please try to increase --mem-fraction-static",),
    ready=("The server is fired up and ready to roll",),
    launch_words=("launch_server", "serve"),
    positional_model=re.compile(r"sglang serve ([^\s'\"-][^\s'\"]{0,500})"),
    rank_reader=_rank_in_brackets,
    rank_hint="[",
    line_shape=re.compile(r"\[(?:\d{4}-\d\d-\d\d[ T])?\d\d:\d\d:\d\d[^\]]{0,60}\]"),
)

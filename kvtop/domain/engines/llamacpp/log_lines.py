"""llama.cpp's startup-log lines (docs/engines/llamacpp.md §3), one handler per kind of line.

llama-server is one process: its lines carry no rank. The KV summary is printed by the function that
built the cache (`llama_kv_cache:`, `llama_kv_cache_unified:`, or the older `KV self size` line of
`llama_new_context_with_model:`); Ollama's own line (`msg="starting llama-server" cmd="…"`) holds the
launch command it ran, read as the log's launch (`-c` is Ollama's num_ctx × its parallel slots, `-np` them).
"""

from __future__ import annotations

import re

from kvtop.domain.engine_log import RankKey
from kvtop.domain.engines.llamacpp.eras import stated_build
from kvtop.domain.engines.llamacpp.log_records import (
    DeviceMemory,
    KvBuffer,
    KvCacheSummary,
    LlamacppRankLog,
    mib_figure,
    whole_mib,
)
from kvtop.domain.log_dialect import Fields, LogDialect, RankHandler

_NUM = r"\d{1,9}\.\d{2}"
_TYPE = r"[a-z0-9_]{2,10}"
_SUMMARY = re.compile(
    rf"size = +({_NUM}) MiB \( *(\d{{1,10}}) cells, +(\d{{1,5}}) layers, +(\d{{1,5}})(?:/(\d{{1,5}}))? seqs\), "
    rf"K \(({_TYPE})\): +({_NUM}) MiB, V \(({_TYPE})\): +({_NUM}) MiB"
)
_KV_SELF = re.compile(rf"KV self size += +({_NUM}) MiB, K \(({_TYPE})\): +({_NUM}) MiB, V \(({_TYPE})\): +({_NUM}) MiB")
_CONTEXT = re.compile(r"(?:llama_context|llama_new_context_with_model): (n_ctx|n_ctx_seq|n_ctx_per_seq|n_seq_max|"
                      r"n_ubatch|kv_unified) += (\w{1,12})\s*$")  # fmt: skip
# the comparison with the training context, printed whether or not `n_ctx_seq = N` is (llama-context.cpp: INFO
# `n_ctx_seq (N) < n_ctx_train (M) -- the full capacity …`, WARN `… > n_ctx_train (M) -- possible training context
# overflow`; `n_ctx_per_seq (N)` before the 2025 rename): N is cparams.n_ctx_seq, the cells one slot can use
_CTX_VS_TRAIN = re.compile(r"(?:llama_context|llama_new_context_with_model): n_ctx(?:_per)?_seq \((\d{1,12})\) [<>] "
                           r"n_ctx_train \(\d{1,12}\)")  # fmt: skip
# one line per device buffer of a cache, before its summary (src/llama-kv-cache.cpp: `%s: %10s KV buffer size = %8.2f
# MiB`, `__func__` llama_kv_cache / llama_kv_cache_unified / the older llama_kv_cache_init)
_KV_BUFFER = re.compile(rf"llama_kv_cache\w{{0,12}}: +([\w.-]{{1,40}}) KV buffer size = +({_NUM}) MiB")
# `device_info:`'s lines (common/common.cpp `common_params_print_info`, ggml-org/llama.cpp 00758e06: `  - %-8s: %s
# (%zu MiB, %zu MiB free)`, total and free from `ggml_backend_dev_memory`, each / 1024 / 1024)
_DEVICE = re.compile(r"(?:^|\s)- ([\w.-]{1,40}) *: (.{1,200}?) \((\d{1,9}) MiB, (\d{1,9}) MiB free\)\s*$")
_REPEATING = re.compile(r"offloading (\d{1,5}) repeating layers to GPU")
_OFFLOADED = re.compile(r"offloaded (\d{1,5})/(\d{1,5}) layers to GPU")
_SLOTS = re.compile(r"initializing slots, n_slots = (\d{1,5})")
# each slot's context as the server set it (slot.n_ctx, `SLT_INF(slot, …)` in llama_server_context / server_context::
# load_model): `new slot n_ctx_slot = %d` in examples/server/server.cpp, `new slot, n_ctx = %d` in tools/server/
# (ggml-org/llama.cpp; forks that demote it to SLT_TRC print nothing)
_SLOT_CTX = re.compile(r"new slot,? n_ctx(?:_slot)? = (\d{1,9})")
_N_SWA = re.compile(r"print_info: n_swa += (\d{1,9})\s*$")
_CONTEXT_FIELDS = {"n_ctx": "n_ctx", "n_ctx_seq": "n_ctx_seq", "n_ctx_per_seq": "n_ctx_seq",
                   "n_seq_max": "n_seq_max", "n_ubatch": "n_ubatch"}  # fmt: skip


def _summary(text: str, fields: Fields) -> bool:
    match = _SUMMARY.search(text)
    if match is not None:
        size, cells, layers, seqs, streams, k_type, k_mib, v_type, v_mib = match.groups()
        fields["kv_caches"].append(KvCacheSummary(
            size=mib_figure(size), cells=int(cells), layers=int(layers), seqs=int(seqs),
            streams=int(streams) if streams else None, k_type=k_type, k_size=mib_figure(k_mib), v_type=v_type,
            v_size=mib_figure(v_mib), sliding=bool(fields["next_is_swa"]),
        ))  # fmt: skip
        fields["next_is_swa"].clear()
        return True
    old = _KV_SELF.search(text)
    if old is None:
        return False
    size, k_type, k_mib, v_type, v_mib = old.groups()
    fields["kv_caches"].append(KvCacheSummary(size=mib_figure(size), k_type=k_type, k_size=mib_figure(k_mib),
                                              v_type=v_type, v_size=mib_figure(v_mib)))  # fmt: skip
    return True


def _swa_next(text: str, fields: Fields) -> bool:
    """`llama_kv_cache_iswa: creating     SWA KV cache`: the next summary is the sliding-window cache's."""
    if "creating     SWA KV cache" in text or "creating SWA KV cache" in text:
        fields["next_is_swa"].append(True)
        return True
    return "creating non-SWA KV cache" in text


def _context(text: str, fields: Fields) -> bool:
    match = _CONTEXT.search(text)
    if match is None:
        versus = _CTX_VS_TRAIN.search(text)
        if versus is not None:
            fields["n_ctx_seq"].append(int(versus.group(1)))
        return versus is not None
    name, value = match.groups()
    if name == "kv_unified":
        fields["kv_unified"].append(value == "true")
        return True
    if not value.isdigit():
        return False
    fields[_CONTEXT_FIELDS[name]].append(int(value))
    return True


def _kv_buffer(text: str, fields: Fields) -> bool:
    match = _KV_BUFFER.search(text)
    if match is None:
        return False
    device, mib = match.groups()
    fields["kv_buffers"].append(KvBuffer(device=device, size=mib_figure(mib), sliding=bool(fields["next_is_swa"])))
    return True


def _device(text: str, fields: Fields) -> bool:
    match = _DEVICE.search(text)
    if match is None:
        return False
    device, description, total, free = match.groups()
    fields["devices"].append(DeviceMemory(device=device, description=description.strip(), total=whole_mib(total),
                                          free=whole_mib(free)))  # fmt: skip
    return True


def _offloaded(text: str, fields: Fields) -> bool:
    match = _OFFLOADED.search(text)
    if match is None:
        return False
    fields["offloaded_layers"].append((int(match.group(1)), int(match.group(2))))
    return True


def _int(name: str, pattern: re.Pattern[str]) -> RankHandler:
    def handle(text: str, fields: Fields) -> bool:
        match = pattern.search(text)
        if match is None:
            return False
        fields[name].append(int(match.group(1)))
        return True

    return handle


def _build(text: str, fields: Fields) -> bool:
    """`build: N (hash)`: kept as the record's build, not as the log's release (a build number is not a
    release kvtop's --engine-version reads; `build 1 (hash)` is a distribution's own build and names none)."""
    build = stated_build(text)
    if build is not None and build > 1:
        fields["builds"].append(build)
    return build is not None


HANDLERS: tuple[tuple[str, RankHandler], ...] = (
    ("size = ", _summary),
    ("KV self size", _summary),
    ("KV cache", _swa_next),
    ("llama_context: ", _context),
    ("llama_new_context_with_model: ", _context),
    ("MiB free)", _device),
    ("layers to GPU", _offloaded),
    ("KV buffer size", _kv_buffer),
    ("repeating layers to GPU", _int("repeating_on_gpu", _REPEATING)),
    ("n_slots = ", _int("slots", _SLOTS)),
    ("new slot", _int("slot_ctx", _SLOT_CTX)),
    ("print_info: n_swa", _int("n_swa", _N_SWA)),
    ("build", _build),
    ("version: ", _build),
)


def freeze(rank: RankKey, fields: Fields) -> LlamacppRankLog:
    values = {name: tuple(items) for name, items in fields.items() if items and name != "next_is_swa"}
    return LlamacppRankLog(rank=rank, **values)


DIALECT = LogDialect(
    engine="llamacpp",
    rank_handlers=HANDLERS,
    log_handlers=(),
    # `llama-server -m … -c …`, also inside Ollama's `msg="starting llama-server" cmd="…"` (up to the quote)
    # the path starts where a word does (the lookbehind): a run of path characters is scanned once, not once
    # per position (a megabyte line of them took minutes)
    launch=re.compile(r"(?<![\w./\\-])[\w./\\-]*llama-server(?:\.exe)?(?:\s+-[^\"\n]*)"),
    launch_words=("llama-server",),
    own_failures=re.compile(r"failed to allocate buffer for kv cache|failed to initialize the context"),
    freeze=freeze,
    refusals=("failed to allocate buffer for kv cache",),
    ready=("server is listening on",),
)

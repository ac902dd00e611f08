"""The probe's child process: the only importer of torch in kvtop.

Run as `python -m kvtop.sources.probe_worker`. It reads one `ProbeRequest` as JSON on stdin,
allocates the engine's buffers chunk by chunk without ever crossing the reserve, frees them,
and writes one `ProbeResult` JSON line on stdout. Whatever else torch or the driver prints goes
to stderr. The CUDA context and every byte go away when this process exits, which is why the
probe lives here and not in the parent.

Test hooks (environment variables, read only here):
- `KVTOP_PROBE_TEST_SLEEP_S=<seconds>`: sleep after reading a valid request and before importing
  torch, so a parent's timeout kill can be exercised for real.
- `KVTOP_PROBE_TEST_HOLD_S=<seconds>`: hold the allocation at its peak that long before freeing
  it, so a kill in mid-probe (benchmarks/gpu_probe_check.sh) finds the memory held.

On Linux the worker asks the kernel to kill it when its parent dies (PR_SET_PDEATHSIG), so a
`kill -9` of kvtop itself cannot leave a probe holding GPU memory.
"""

from __future__ import annotations

import ctypes
import gc
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from kvtop.domain.probe import (
    RELEASE_TOLERANCE_BYTES,
    MeasuredPerToken,
    ProbeBuffer,
    ProbeOutcome,
    ProbeRequest,
    ProbeResult,
    bytes_for_tokens,
    chunk_end,
    chunk_shapes,
    tensor_sizes,
    verdict,
)
from kvtop.domain.rounding import round_down, round_up
from kvtop.domain.wording import counted, gib, mib

TEST_SLEEP_ENV = "KVTOP_PROBE_TEST_SLEEP_S"
TEST_HOLD_ENV = "KVTOP_PROBE_TEST_HOLD_S"
#: Set by the parent to its pid, so the worker can tell that its parent is already gone.
PARENT_PID_ENV = "KVTOP_PROBE_PARENT_PID"
_PR_SET_PDEATHSIG = 1

#: A cpu probe leaves at least this much of the host's available memory alone.
HOST_KEEP_FREE_BYTES = 512 * 2**20

#: The CUDA caching allocator rounds large blocks to 2 MiB and small ones to 512 B, and may open a
#: fresh segment of up to 20 MiB; estimates add both so that no chunk is started that would cross.
_CUDA_LARGE_BLOCK = 2 * 2**20
_CUDA_SEGMENT_SLACK = 20 * 2**20
_CUDA_SMALL_LIMIT = 2**20
_CUDA_SMALL_BLOCK = 512

_OOM_WORDS = ("out of memory", "can't allocate", "cannot allocate", "not enough memory")


class _CpuMeter:
    """Host memory counted byte by byte against `memory_limit_bytes` (the OS is not relied on)."""

    def __init__(self, limit_bytes: int) -> None:
        self.limit_bytes = limit_bytes
        self.held_bytes = 0

    def free(self) -> int:
        return self.limit_bytes - self.held_bytes

    def estimate(self, tensor_bytes: Sequence[int]) -> int:
        return sum(tensor_bytes)

    def on_alloc(self, nbytes: int) -> None:
        self.held_bytes += nbytes

    def on_release(self, nbytes: int) -> None:
        self.held_bytes -= nbytes

    def settle(self) -> None:
        """Nothing to wait for on the host."""


class _CudaMeter:
    """The driver's view of free memory on one GPU (`torch.cuda.mem_get_info`)."""

    def __init__(self, torch: Any, index: int) -> None:
        self.torch = torch
        self.index = index

    def free(self) -> int:
        return int(self.torch.cuda.mem_get_info(self.index)[0])

    def estimate(self, tensor_bytes: Sequence[int]) -> int:
        rounded = sum(
            round_up(n, _CUDA_LARGE_BLOCK if n > _CUDA_SMALL_LIMIT else _CUDA_SMALL_BLOCK)
            for n in tensor_bytes
        )
        return rounded + _CUDA_SEGMENT_SLACK

    def on_alloc(self, nbytes: int) -> None:
        """The driver keeps the count."""

    def on_release(self, nbytes: int) -> None:
        """The driver keeps the count."""

    def settle(self) -> None:
        self.torch.cuda.synchronize(self.index)


Meter = _CpuMeter | _CudaMeter


@dataclass
class _Pool:
    """The tensors held so far, chunk by chunk, with their exact byte count."""

    chunks: list[list[Any]] = field(default_factory=list)
    bytes_held: int = 0


class _AllocationFailed(Exception):
    """torch refused an allocation; `out_of_memory` says whether it was memory that ran out."""

    def __init__(self, message: str, *, out_of_memory: bool) -> None:
        super().__init__(message)
        self.out_of_memory = out_of_memory


def _storage_dtype(torch: Any, dtype_name: str) -> Any:
    """fp8 is stored as uint8, as SGLang does: the same bytes, and zero_() works on every build."""
    if dtype_name.startswith("float8"):
        return torch.uint8
    return getattr(torch, dtype_name)


def _allocate_chunk(
    torch: Any, device: str, shapes: Sequence[tuple[ProbeBuffer, int]], touch: bool, meter: Meter
) -> tuple[list[Any], int]:
    """Allocate (and touch) one chunk; on failure free what this chunk got and raise."""
    tensors: list[Any] = []
    nbytes = 0
    try:
        for buffer, rows in shapes:
            dtype = _storage_dtype(torch, buffer.dtype)
            for _ in range(buffer.tensors):
                tensor = torch.empty((rows, *buffer.row_shape), dtype=dtype, device=device)
                if touch:
                    tensor.zero_()
                tensors.append(tensor)
                size = tensor.numel() * tensor.element_size()
                nbytes += size
                meter.on_alloc(size)
        meter.settle()
    except RuntimeError as error:  # torch.cuda.OutOfMemoryError derives from RuntimeError
        meter.on_release(nbytes)
        tensors.clear()
        text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        is_oom = type(error).__name__ == "OutOfMemoryError" or any(w in text.lower() for w in _OOM_WORDS)
        raise _AllocationFailed(text, out_of_memory=is_oom) from None
    return tensors, nbytes


def _release(pool: _Pool, meter: Meter, torch: Any, on_cuda: bool) -> None:
    """Drop every tensor and hand the memory back to the driver (or the OS)."""
    meter.on_release(pool.bytes_held)
    pool.chunks.clear()
    pool.bytes_held = 0
    gc.collect()
    if on_cuda:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()


def _host_available_bytes() -> int | None:
    """MemAvailable from /proc/meminfo (Linux), else free physical pages; None when unknown."""
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return None


def _grow(torch: Any, request: ProbeRequest, meter: Meter, pool: _Pool) -> tuple[int, int, str | None, bool]:
    """Grow the pool chunk by chunk; return (tokens, lowest free seen, failure text, was OOM).

    A chunk is started only if the free memory minus its estimated cost stays at or above the
    reserve; on CUDA the reading after the chunk is checked too and the chunk is given back if
    it crossed. When a chunk does not fit, the step halves down to one page.
    """
    page = request.page_size
    goal = request.target_tokens
    step = request.chunk_tokens
    tokens = 0
    lowest_free = meter.free()
    while goal is None or tokens < goal:
        next_tokens = chunk_end(tokens, step, page, goal)
        shapes = chunk_shapes(request.buffers, tokens, next_tokens, page)
        fits = meter.free() - meter.estimate(tensor_sizes(shapes)) >= request.reserve_bytes
        if fits:
            try:
                tensors, nbytes = _allocate_chunk(torch, request.device, shapes, request.touch, meter)
            except _AllocationFailed as failure:
                return tokens, lowest_free, str(failure), failure.out_of_memory
            free_now = meter.free()
            if free_now < request.reserve_bytes:  # the driver rounded more than estimated
                meter.on_release(nbytes)
                tensors.clear()
                if isinstance(meter, _CudaMeter):
                    torch.cuda.empty_cache()
            else:
                pool.chunks.append(tensors)
                pool.bytes_held += nbytes
                lowest_free = min(lowest_free, free_now)
                tokens = next_tokens
                continue
        if step <= page:
            break
        step = max(page, round_down(step // 2, page))
    return tokens, lowest_free, None, False


def _open_device(torch: Any, request: ProbeRequest) -> tuple[Meter, str, int | None] | ProbeResult:
    """The meter, device name and context cost, or the named reason the device cannot be used."""
    if request.device == "cpu":
        assert request.memory_limit_bytes is not None  # the request validator guarantees it
        torch.set_num_threads(1)  # touching is memory-bound; more threads only spin on a busy host
        return _CpuMeter(request.memory_limit_bytes), "host memory", None
    if not torch.cuda.is_available():
        return ProbeResult.unmeasured(
            request,
            ProbeOutcome.NO_CUDA,
            f"torch {torch.__version__} sees no CUDA device (a CPU-only build, or no driver); "
            "install a CUDA build of torch or use --device cpu",
        )
    index = int(request.device.split(":", 1)[1])
    count = torch.cuda.device_count()
    if index >= count:
        return ProbeResult.unmeasured(
            request, ProbeOutcome.NO_SUCH_GPU, f"no GPU {index}: torch sees {counted(count, 'CUDA device')}"
        )
    torch.cuda.set_device(index)
    torch.cuda.init()
    free_after_init = int(torch.cuda.mem_get_info(index)[0])
    context = None
    if request.driver_free_before_bytes is not None:
        context = request.driver_free_before_bytes - free_after_init
    return _CudaMeter(torch, index), str(torch.cuda.get_device_name(index)), context


def _host_refusal(request: ProbeRequest) -> ProbeResult | None:
    """Refuse a cpu probe that would take more than this host can spare."""
    assert request.memory_limit_bytes is not None
    wanted = request.memory_limit_bytes - request.reserve_bytes
    if request.target_tokens is not None:
        wanted = min(wanted, bytes_for_tokens(request.buffers, request.target_tokens, request.page_size))
    available = _host_available_bytes()
    if available is None or wanted <= available - HOST_KEEP_FREE_BYTES:
        return None
    return ProbeResult.unmeasured(
        request,
        ProbeOutcome.REFUSED,
        f"the cpu probe would take {gib(wanted)} but this host has {gib(available)} available, of which "
        f"{mib(HOST_KEEP_FREE_BYTES)} stays free; lower --memory-limit or --tokens",
    )


def probe(
    torch: Any,
    request: ProbeRequest,
    *,
    started: float | None = None,
    hold_s: float = 0.0,
    clock: Callable[[], float] = time.monotonic,
) -> ProbeResult:
    """Run one request with an imported torch; always gives every byte back before returning.

    `started` is the clock reading before torch was imported, so `init_seconds` counts the
    import and the CUDA context. `hold_s` keeps the allocation at its peak that long (test hook).
    """
    started = clock() if started is None else started
    if request.device == "cpu":
        refusal = _host_refusal(request)
        if refusal is not None:
            return refusal
    opened = _open_device(torch, request)
    if isinstance(opened, ProbeResult):
        return opened
    meter, device_name, context_bytes = opened
    on_cuda = isinstance(meter, _CudaMeter)
    free_before = meter.free()
    init_seconds = clock() - started
    pool = _Pool()
    grow_started = clock()
    try:
        tokens, lowest_free, failure, was_oom = _grow(torch, request, meter, pool)
        grow_seconds = clock() - grow_started
        bytes_allocated = pool.bytes_held
        chunks = len(pool.chunks)
        if hold_s > 0:
            time.sleep(hold_s)
    finally:
        _release(pool, meter, torch, on_cuda)
    free_after = meter.free()
    consumed = (free_before - lowest_free) if on_cuda else bytes_allocated
    outcome, message = verdict(request, tokens, failure, was_oom)
    return ProbeResult(
        outcome=outcome,
        message=message,
        device=request.device,
        device_name=device_name,
        mode=request.mode,
        target_tokens=request.target_tokens,
        page_size=request.page_size,
        tokens_allocated=tokens,
        padding_rows=request.page_size if tokens else 0,
        bytes_allocated=bytes_allocated,
        bytes_per_token_predicted=request.bytes_per_token_predicted,
        measured=MeasuredPerToken(total_bytes=consumed, tokens=tokens) if tokens else None,
        reserve_bytes=request.reserve_bytes,
        budget_bytes=free_before - request.reserve_bytes,
        context_bytes=context_bytes,
        driver_free_before_bytes=request.driver_free_before_bytes,
        free_before_bytes=free_before,
        free_at_peak_bytes=lowest_free,
        free_after_bytes=free_after,
        chunks=chunks,
        touched=request.touch and bytes_allocated > 0,
        seconds=grow_seconds,
        init_seconds=init_seconds,
        released=free_after >= free_before - RELEASE_TOLERANCE_BYTES,
        release_check="worker: free memory after release vs before allocating",
        worker_pid=os.getpid(),
    )


def _claim_stdout() -> TextIO:
    """Keep the real stdout for the one result line and send everything else printed to stderr."""
    result_stream = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return result_stream


def _bad_request(message: str) -> ProbeResult:
    return ProbeResult(outcome=ProbeOutcome.BAD_REQUEST, message=message, device="unknown")


def _first_error(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "request"
    return f"{where}: {first['msg']}"


def _die_with_parent() -> None:
    """Linux: be killed by the kernel if the parent dies, and leave at once if it already has."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return  # no libc handle: the parent's own kill on timeout still applies
    libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    expected = os.environ.get(PARENT_PID_ENV)
    if expected and os.getppid() != int(expected):
        os._exit(3)


def main() -> int:
    """Read the request, probe, write one result line. Exit 0 whenever a result was written."""
    _die_with_parent()
    result_stream = _claim_stdout()
    raw = sys.stdin.read()
    try:
        request = ProbeRequest.model_validate_json(raw)
    except ValidationError as error:
        result = _bad_request(f"bad probe request: {_first_error(error)}")
    else:
        result = _run(request)
    result_stream.write(result.model_dump_json() + "\n")
    result_stream.flush()
    return 0


def _run(request: ProbeRequest) -> ProbeResult:
    sleep_s = os.environ.get(TEST_SLEEP_ENV)
    if sleep_s:
        time.sleep(float(sleep_s))
    import_started = time.monotonic()
    try:
        import torch
    except ImportError as error:
        return ProbeResult.unmeasured(
            request,
            ProbeOutcome.TORCH_MISSING,
            f"torch cannot be imported by {sys.executable} ({error}); "
            "install it with: pip install 'kvtop-ledger[probe]'",
        )
    hold_s = float(os.environ.get(TEST_HOLD_ENV) or 0.0)
    return probe(torch, request, started=import_started, hold_s=hold_s)


if __name__ == "__main__":
    raise SystemExit(main())

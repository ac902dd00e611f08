"""The probe as values: which engine buffers to allocate, the request, and what came of it.

The probe proves headroom by allocating the buffers the engine itself would allocate (per layer
K and V rows for MHA/GQA, one latent row for MLA, the DSA index, an SWA pool) in a child
process. This module holds only the pure part: shapes, byte arithmetic and the result contract.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator, model_validator

from kvtop.domain.model_layers import MlaSpec
from kvtop.domain.rounding import round_down
from kvtop.domain.wording import GIB, percent

#: Bytes per element for the torch dtype names a probe may allocate (fp8 is stored as uint8 by
#: SGLang, the same bytes either way).
DTYPE_ITEMSIZE: dict[str, int] = {
    "float64": 8,
    "float32": 4,
    "bfloat16": 2,
    "float16": 2,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
    "float8_e4m3fnuz": 1,
    "float8_e5m2fnuz": 1,
    "uint8": 1,
    "int8": 1,
    "int32": 4,
    "int64": 8,
}

#: Free memory may come back this much short after the child exits and still count as released
#: (other processes move by this much; the driver returns a context lazily).
RELEASE_TOLERANCE_BYTES = 256 * 2**20

#: Version of the `--json` contract; bumped only when a field changes meaning or goes away.
PROBE_JSON_SCHEMA = "kvtop.probe/2"  # 2: `measured` (whole bytes per token, its total and tokens) replaced
# the float `bytes_per_token_measured` and the bare `measured_bytes`; the contract's flat `bytes_per_token_measured`
# stays, written from `measured.bytes_per_token` (the same integer: one figure, two keys for scripts of /1)

_DEVICE = re.compile(r"^(cpu|cuda:\d+)$")


class ProbeOutcome(str, Enum):
    """Every way a probe can end; each is a named state with a one-line message, never a traceback."""

    OK = "ok"
    TARGET_NOT_MET = "target_not_met"
    TORCH_MISSING = "torch_missing"
    NO_CUDA = "no_cuda"
    NO_SUCH_GPU = "no_such_gpu"
    OUT_OF_MEMORY = "out_of_memory"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    BAD_REQUEST = "bad_request"
    WORKER_CRASHED = "worker_crashed"
    REFUSED = "refused"


class ProbeBuffer(BaseModel):
    """One engine buffer family, e.g. "k" of MHA, "kv" of MLA, "dsa_index", "swa_k".

    `tensors` is how many such tensors the rank holds (its layers); each has one row of
    `row_shape` per token slot. `token_ratio` is the share of the full pool's tokens this family
    holds (SGLang's `--swa-full-tokens-ratio` for an SWA pool; 1 for everything else).
    """

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1)
    tensors: int = Field(ge=1)
    row_shape: tuple[int, ...] = Field(min_length=1)
    dtype: str
    token_ratio: float = Field(default=1.0, gt=0.0, le=1.0)

    @field_validator("row_shape")
    @classmethod
    def _positive_dims(cls, row_shape: tuple[int, ...]) -> tuple[int, ...]:
        if any(dim < 1 for dim in row_shape):
            raise ValueError(f"every row dimension must be >= 1 (got {row_shape})")
        return row_shape

    @field_validator("dtype")
    @classmethod
    def _known_dtype(cls, dtype: str) -> str:
        if dtype not in DTYPE_ITEMSIZE:
            raise ValueError(f"unknown dtype {dtype!r}; one of {', '.join(sorted(DTYPE_ITEMSIZE))}")
        return dtype

    @property
    def itemsize(self) -> int:
        """Bytes per element of `dtype`."""
        return DTYPE_ITEMSIZE[self.dtype]

    @property
    def bytes_per_row(self) -> int:
        """Bytes one token slot costs across all `tensors` of this family."""
        return self.tensors * math.prod(self.row_shape) * self.itemsize

    @property
    def bytes_per_token(self) -> int:
        """Bytes per token of the full pool (rounded to the byte when `token_ratio` < 1)."""
        return round(self.bytes_per_row * self.token_ratio)

    def rows_for(self, tokens: int, page_size: int) -> int:
        """Rows one tensor of this family holds for a pool of `tokens`: the engine's `size + page`.

        A ratio pool (SWA) holds `int(tokens * ratio)` floored to the page, plus the page.
        """
        if tokens <= 0:
            return 0
        if self.token_ratio == 1.0:
            return tokens + page_size
        own_tokens = round_down(int(tokens * self.token_ratio), page_size)
        return own_tokens + page_size


def predicted_bytes_per_token(buffers: Sequence[ProbeBuffer]) -> int:
    """Bytes per token of the whole rank, summed over every buffer family."""
    return sum(buffer.bytes_per_token for buffer in buffers)


def bytes_for_tokens(buffers: Sequence[ProbeBuffer], tokens: int, page_size: int) -> int:
    """Exact bytes of every buffer for a pool of `tokens`, the padding page included."""
    return sum(buffer.rows_for(tokens, page_size) * buffer.bytes_per_row for buffer in buffers)


#: The CUDA caching allocator hands an allocation of 10 MiB or more exactly its size rounded up to 2 MiB, and
#: packs smaller ones into 20 MiB segments. A probe whose tensors are whole 2 MiB granules of at least that size
#: loses nothing to rounding, as the engine's own per-layer pools do not. Measured on one H200
#: (benchmarks/gpu_device_run.sh, 2026-12-04): chunks of ~1 GiB of KV (tensors of 6.4 MiB for Llama-3-70B at
#: TP 8, 16.8 MiB for DeepSeek-V3) lost 4.4 % and 7.7 % of the memory they took to that rounding, so a fill
#: proved that much less headroom than there was, and 131 GiB took 3.4 s in 22,400 allocations.
ALLOCATOR_GRANULE_BYTES = 2 * 2**20
CHUNK_TENSOR_BYTES = 64 * 2**20


def default_chunk_tokens(
    buffers: Sequence[ProbeBuffer], page_size: int, tensor_bytes: int = CHUNK_TENSOR_BYTES
) -> int:
    """Tokens per allocation chunk: whole pages, the largest tensor about `tensor_bytes`, and every tensor of
    a full-pool family a whole number of 2 MiB granules where that keeps the chunk near that size (the
    widest rows are aligned first; a ratio pool's rows are floored to the page and cannot be aligned)."""
    rows = sorted(
        ((buffer.bytes_per_row // buffer.tensors, buffer.token_ratio == 1.0) for buffer in buffers), reverse=True
    )
    if not rows or rows[0][0] <= 0:
        return page_size
    widest = rows[0][0]
    unit = page_size
    for row_bytes, full_pool in rows:
        aligned = math.lcm(unit, ALLOCATOR_GRANULE_BYTES // math.gcd(ALLOCATOR_GRANULE_BYTES, row_bytes))
        if full_pool and aligned * widest <= tensor_bytes:
            unit = aligned
    return max(unit, round_down(tensor_bytes // widest, unit))


def mha_buffers(
    layers: int, kv_heads_per_rank: int, head_dim: int, dtype: str, *, v_head_dim: int | None = None
) -> tuple[ProbeBuffer, ProbeBuffer]:
    """K and V of an MHA/GQA pool: per layer `(rows, kv_heads_per_rank, head_dim)` each."""
    return (
        ProbeBuffer(name="k", tensors=layers, row_shape=(kv_heads_per_rank, head_dim), dtype=dtype),
        ProbeBuffer(
            name="v", tensors=layers, row_shape=(kv_heads_per_rank, v_head_dim or head_dim), dtype=dtype
        ),
    )


def mla_buffer(layers: int, mla: MlaSpec, dtype: str) -> ProbeBuffer:
    """The MLA latent: per layer one `(rows, 1, kv_lora_rank + qk_rope_head_dim)` tensor, the architecture's
    `MlaSpec.latent_width`."""
    return ProbeBuffer(name="kv", tensors=layers, row_shape=(1, mla.latent_width), dtype=dtype)


def dsa_index_buffer(layers: int, index_head_dim: int) -> ProbeBuffer:
    """The DSA indexer key: per layer `index_head_dim` fp8 bytes plus a 4-byte scale per 128, uint8."""
    return ProbeBuffer(
        name="dsa_index",
        tensors=layers,
        row_shape=(index_head_dim + index_head_dim // 128 * 4,),
        dtype="uint8",
    )


class ProbeRequest(BaseModel):
    """What the child is asked to allocate, and under which limits.

    Exactly one of `target_tokens` (prove that many fit) and `fill` (find the most that fit
    while keeping `reserve_bytes` free). `memory_limit_bytes` stands in for the GPU's free
    memory on `cpu`. `driver_free_before_bytes` is the parent's NVML reading taken before the
    child starts, so the worker can state the CUDA context's own cost.
    """

    model_config = ConfigDict(frozen=True)

    device: str
    buffers: tuple[ProbeBuffer, ...] = Field(min_length=1)
    page_size: int = Field(default=1, ge=1)
    target_tokens: int | None = Field(default=None, ge=1)
    fill: bool = False
    reserve_bytes: int = Field(default=0, ge=0)
    memory_limit_bytes: int | None = Field(default=None, ge=0)
    chunk_tokens: int = Field(ge=1)
    timeout_s: float = Field(default=120.0, gt=0)
    touch: bool = True
    driver_free_before_bytes: int | None = Field(default=None, ge=0)

    @field_validator("device")
    @classmethod
    def _known_device(cls, device: str) -> str:
        if not _DEVICE.match(device):
            raise ValueError(f"device must be 'cpu' or 'cuda:N' (got {device!r})")
        return device

    @model_validator(mode="after")
    def _consistent(self) -> ProbeRequest:
        if self.fill == (self.target_tokens is not None):
            raise ValueError("give exactly one of target_tokens and fill")
        if self.chunk_tokens % self.page_size:
            raise ValueError(
                f"chunk_tokens {self.chunk_tokens} is not a multiple of page_size {self.page_size}"
            )
        if self.device == "cpu" and self.memory_limit_bytes is None:
            raise ValueError("a cpu probe needs memory_limit_bytes (the stand-in for the GPU's free memory)")
        return self

    @property
    def mode(self) -> Literal["tokens", "fill"]:
        """'fill' or 'tokens'."""
        return "fill" if self.fill else "tokens"

    @property
    def bytes_per_token_predicted(self) -> int:
        """What the plan says one token costs on this rank."""
        return predicted_bytes_per_token(self.buffers)


class MeasuredPerToken(BaseModel):
    """What one token was measured to cost: `total_bytes` ÷ `tokens`, to the whole byte (halves up).

    `total_bytes` is CUDA's free-memory drop to the peak, else (on cpu) the bytes allocated; it may be
    negative when another process freed memory meanwhile, and is then shown as measured, not hidden.
    """

    model_config = ConfigDict(frozen=True)

    total_bytes: int
    tokens: int = Field(ge=1)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def bytes_per_token(self) -> int:
        """The one figure every view shows: bytes are integers, so the ratio is rounded, halves up."""
        return (2 * self.total_bytes + self.tokens) // (2 * self.tokens)

    def describe(self) -> str:
        """'40,962 B (1,073,725,440 B ÷ 26,213 tokens)': the figure and what it came from."""
        return f"{self.bytes_per_token:,} B ({self.total_bytes:,} B ÷ {self.tokens:,} tokens)"


class ProbeResult(BaseModel):
    """What the probe measured. Bytes are ints; `None` means not measured (never a guess).

    Free memory is the driver's view (`torch.cuda.mem_get_info`) on CUDA and the counted stand-in
    (`memory_limit_bytes` minus what is held) on cpu. `free_after_exit_bytes` is the parent's own
    reading after the child has gone; `released` is the parent's final verdict.
    """

    model_config = ConfigDict(frozen=True)

    outcome: ProbeOutcome
    message: str
    device: str
    device_name: str | None = None
    mode: Literal["tokens", "fill"] = "tokens"
    target_tokens: int | None = None
    page_size: int = 1
    tokens_allocated: int = 0
    padding_rows: int = 0
    bytes_allocated: int = 0
    bytes_per_token_predicted: int = 0
    measured: MeasuredPerToken | None = None  # None when no token was allocated
    reserve_bytes: int = 0
    budget_bytes: int | None = None
    context_bytes: int | None = None
    driver_free_before_bytes: int | None = None
    free_before_bytes: int | None = None
    free_at_peak_bytes: int | None = None
    free_after_bytes: int | None = None
    free_after_exit_bytes: int | None = None
    chunks: int = 0
    touched: bool = False
    seconds: float = 0.0
    init_seconds: float | None = None
    wall_seconds: float | None = None
    released: bool = False
    release_check: str = ""
    worker_pid: int | None = None

    @classmethod
    def unmeasured(cls, request: ProbeRequest, outcome: ProbeOutcome, message: str) -> ProbeResult:
        """A result for a probe that allocated nothing (refused, timed out, no torch, …)."""
        return cls(
            outcome=outcome,
            message=message,
            device=request.device,
            mode=request.mode,
            target_tokens=request.target_tokens,
            page_size=request.page_size,
            bytes_per_token_predicted=request.bytes_per_token_predicted,
            reserve_bytes=request.reserve_bytes,
            driver_free_before_bytes=request.driver_free_before_bytes,
        )

    @property
    def target_met(self) -> bool:
        """True when the target fitted (tokens mode) or a fill found room (fill mode), and nothing failed."""
        return self.outcome is ProbeOutcome.OK

    @property
    def budget_tokens(self) -> int | None:
        """The most tokens the probe's budget holds at the predicted bytes per token (a budget spent below zero
        holds none); None without a budget or a prediction."""
        if self.budget_bytes is None or self.bytes_per_token_predicted <= 0:
            return None
        return max(0, self.budget_bytes) // self.bytes_per_token_predicted

    @property
    def seconds_per_gib(self) -> float | None:
        """Time to allocate and touch one GiB; None when nothing was allocated."""
        if self.bytes_allocated <= 0:
            return None
        return self.seconds / (self.bytes_allocated / GIB)

    @property
    def gib_per_second(self) -> float | None:
        """GiB allocated and touched a second; None when nothing was allocated or no time was measured."""
        return 1 / self.seconds_per_gib if self.seconds_per_gib else None

    @model_validator(mode="after")
    def _measured_over_the_tokens_allocated(self) -> ProbeResult:
        if self.measured is not None and self.measured.tokens != self.tokens_allocated:
            raise ValueError(
                f"measured over {self.measured.tokens:,} tokens, but {self.tokens_allocated:,} were allocated"
            )
        return self

    def describe_measured(self) -> str:
        """The measured figure with its total and tokens (`MeasuredPerToken.describe`); '—' when none."""
        return "—" if self.measured is None else self.measured.describe()

    @property
    def measured_vs_predicted(self) -> float | None:
        """The whole measured bytes per token ÷ predicted − 1 (0.0 is an exact match); None when either is missing."""
        if self.measured is None or self.bytes_per_token_predicted <= 0:
            return None
        return self.measured.bytes_per_token / self.bytes_per_token_predicted - 1.0

    @property
    def measured_vs_predicted_said(self) -> str | None:
        """'−0.37%', '+1.25%': `measured_vs_predicted` as `kvtop probe`, its screen and the rank ledger print it (two
        decimals, its sign always shown); None where it is None."""
        delta = self.measured_vs_predicted
        return None if delta is None else percent(delta, 2, sign=True)

    def to_json_dict(self) -> dict[str, Any]:
        """The stable `--json` contract: every field, plus `schema`, `target_met`, `seconds_per_gib` and the flat
    `bytes_per_token_measured` that scripts of kvtop.probe/1 read (ops tooling and the project's contract check)."""
        data: dict[str, Any] = {"schema": PROBE_JSON_SCHEMA}
        data.update(self.model_dump(mode="json"))
        data["bytes_per_token_measured"] = None if self.measured is None else self.measured.bytes_per_token
        data["target_met"] = self.target_met
        data["seconds_per_gib"] = self.seconds_per_gib
        return data


def chunk_end(tokens: int, step: int, page_size: int, goal: int | None) -> int:
    """The pool's tokens after the next chunk of `step`, never past `goal`.

    The first chunk also holds the engine's padding page (`rows_for`), so it stops one page short: every
    chunk's tensors then hold whole steps of rows, the 2 MiB granules `default_chunk_tokens` chose."""
    grow = step - page_size if tokens == 0 and step > page_size else step
    return tokens + grow if goal is None else min(tokens + grow, goal)


def chunk_shapes(
    buffers: Sequence[ProbeBuffer], tokens_before: int, tokens_after: int, page_size: int
) -> list[tuple[ProbeBuffer, int]]:
    """Rows each family grows by when the pool goes from `tokens_before` to `tokens_after`.

    The first chunk (from 0 tokens) includes the engine's padding page.
    """
    grown: list[tuple[ProbeBuffer, int]] = []
    for buffer in buffers:
        rows = buffer.rows_for(tokens_after, page_size) - buffer.rows_for(tokens_before, page_size)
        if rows > 0:
            grown.append((buffer, rows))
    return grown


def tensor_sizes(shapes: Sequence[tuple[ProbeBuffer, int]]) -> list[int]:
    """Bytes of every tensor one chunk allocates (each family has `tensors` tensors of its rows)."""
    sizes: list[int] = []
    for buffer, rows in shapes:
        one = rows * (buffer.bytes_per_row // buffer.tensors)
        sizes.extend([one] * buffer.tensors)
    return sizes


def verdict(
    request: ProbeRequest, tokens: int, failure: str | None, was_oom: bool
) -> tuple[ProbeOutcome, str]:
    """The outcome and its one-line message for a probe that got `tokens` (and maybe failed)."""
    if failure is not None:
        outcome = ProbeOutcome.OUT_OF_MEMORY if was_oom else ProbeOutcome.WORKER_CRASHED
        return outcome, f"allocation failed after {tokens:,} tokens: {failure}"
    if request.target_tokens is not None:
        if tokens >= request.target_tokens:
            return ProbeOutcome.OK, f"{tokens:,} tokens fit with the reserve kept free"
        return (
            ProbeOutcome.TARGET_NOT_MET,
            f"only {tokens:,} of {request.target_tokens:,} tokens fit above the reserve",
        )
    if tokens > 0:
        return ProbeOutcome.OK, f"filled {tokens:,} tokens, keeping the reserve free"
    return ProbeOutcome.TARGET_NOT_MET, "not even one page fits above the reserve"

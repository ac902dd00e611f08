"""The ledger as a value: what each rank is predicted to hold, the whole layout's (`Ledger`), and what
re-solves one with a change (`WhatIf`).

Solving one is `kvtop.domain.ledger.predict`'s (it looks the engine's rules up, and re-exports these
names); the values sit below the engines' protocols, which name them, so that no annotation points up.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import NamedTuple, Protocol

from pydantic import BaseModel, ConfigDict

from kvtop.domain.calibration.terms import TermSource
from kvtop.domain.deployment import (
    BudgetTerm,
    Charge,
    DeploymentSetup,
    HostTier,
    gpu_bytes_beside,
    resident_bytes,
)
from kvtop.domain.engines.base import EngineResult, KvCell, MeasuredInputs
from kvtop.domain.engines.versions import NOT_STATED, ResolvedVersion
from kvtop.domain.gpu_total_origin import GpuTotalOrigin, smi_total_note
from kvtop.domain.kv import KvBook, KvFormat
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.request_capacity import RequestCapacity, request_capacity
from kvtop.domain.tower_parts import unbuilt_note
from kvtop.domain.weights import WeightsBook
from kvtop.domain.wording import GB, GIB


def tokens_per(unit_bytes: int, bytes_per_token: float) -> float:
    """An exchange rate: how many tokens `unit_bytes` of KV hold at `bytes_per_token` (0.0 without a rate)."""
    return unit_bytes / bytes_per_token if bytes_per_token else 0.0


class BesideState(str, Enum):
    """How 'beside the model' reads: nothing beside it; priced whole; at least the priced terms (one kvtop cannot
    price beside them); or no priced term beside the one it cannot price (`plan`'s named state, never a 0)."""

    NONE = "none"
    PRICED = "priced"
    AT_LEAST = "at_least"
    NOT_MODELLED = "not_modelled"


class BesideModel(NamedTuple):
    """What the deployment holds on the GPU beside the model (`Ledger.beside_model`): its bytes and how they read."""

    bytes: int
    state: BesideState


class RankLedger(BaseModel):
    """What one GPU rank is predicted to hold."""

    model_config = ConfigDict(frozen=True)

    rank: int
    gpu_index: int
    dp_rank: int
    pp_rank: int
    tp_rank: int
    layers: tuple[int, int]  # [first, last) layer held by this rank's stage
    weights: WeightsBook
    kv: KvBook
    # the cell in whole bytes: the book's per-token sum, or the engine's own `kv_cell` rounded up (an int figure to
    # print); the capacity divides by `kv_bytes_per_token_exact`, which is `kv_cell` unrounded where there is one
    kv_bytes_per_token: int
    kv_cell: KvCell | None = None  # the engine's own cell where it is not the book's per-token sum
    page_size: int = 1  # the tokens of one block/page the engine hands out whole (`EngineResult.page_size`)
    kv_pool_bytes: int
    # the bytes this rank's stage's budget hands to KV (its own, where the pool is capped to the stages' shared
    # capacity: vLLM logs each stage's and pools the least of their blocks); 0 where not solved
    kv_budget_bytes: int = 0
    state_pool_bytes: int
    req_to_token_bytes: int
    reserve_bytes: int  # runtime reserve outside weights and KV (activations, graphs, req_to_token…)
    context_bytes: int  # CUDA context, NCCL and anything resident before weights (`MeasuredInputs.context_before_load`)
    token_capacity: int
    # where `context_bytes` comes from and how far it may be off (`MeasuredInputs.context_before_load`)
    context_source: TermSource = "assumed"
    context_error_bytes: int = 0
    # nvidia-smi's total less CUDA's where the plan split it from the context (`MeasuredInputs.driver_reserved_bytes`):
    # the driver's, not the worker's (NVML counts it apart); 0 where the context holds whatever the total less a
    # measured free memory leaves
    driver_reserved_bytes: int = 0
    terms: tuple[BudgetTerm, ...] = ()  # the deployment beside the model: draft, experts, LoRA (deployment.py)

    @property
    def weights_bytes(self) -> int:
        return self.weights.total_bytes

    @property
    def token_pool_bytes(self) -> int:
        """The KV pool's bytes that hold tokens: the pool without its per-request state pools (Mamba/SSM slots)."""
        return self.kv_pool_bytes - self.state_pool_bytes

    @property
    def resident_terms_bytes(self) -> int:
        """What the deployment's resident terms hold on this rank beside the weights (draft, LoRA slots…)."""
        return resident_bytes(self.terms)

    @property
    def kv_bytes_per_token_exact(self) -> float:
        """This rank's bytes per token as its capacity divides by them (the engine's cell unrounded)."""
        return self.kv_cell.bytes_per_token if self.kv_cell is not None else float(self.kv_bytes_per_token)

    @property
    def tokens_per_gib(self) -> float:
        """This rank's exchange rate: how many tokens one GiB (2**30 B) of its KV holds."""
        return tokens_per(GIB, self.kv_bytes_per_token_exact)

    @property
    def tokens_per_gb(self) -> float:
        """The same rate per GB (10**9 B), for a reader who holds a GB figure beside it."""
        return tokens_per(GB, self.kv_bytes_per_token_exact)

    def tokens_in(self, num_bytes: int) -> int | None:
        """`num_bytes` read as tokens of KV as the engine counts them: whole pages of `page_size` tokens at the cell
        the capacity is solved with (`kv_bytes_per_token_exact`), truncated toward zero (a negative gap reads as no
        more tokens than it holds); None without a rate. The one rule every bytes-to-tokens figure reads."""
        cell = self.kv_bytes_per_token_exact
        if not cell:
            return None
        page = max(1, self.page_size)
        whole = int(abs(num_bytes) // (cell * page)) * page
        return whole if num_bytes >= 0 else -whole


class Ledger(BaseModel):
    """The predicted ledger of a whole serving layout."""

    model_config = ConfigDict(frozen=True)

    model: ModelSpec
    settings: LaunchSettings
    layout: ParallelLayout
    gpu_total_bytes: int
    gpu_name: str | None
    kv_format: KvFormat
    context_length: int
    engine: EngineResult
    ranks: tuple[RankLedger, ...]
    measured: MeasuredInputs = MeasuredInputs()  # the measured inputs it was solved with
    load_mtp: bool = False
    version: ResolvedVersion = NOT_STATED  # whose rules solved it, and how kvtop knows
    draft: ModelSpec | None = None  # a speculative draft's architecture, when kvtop was given its config
    setup: DeploymentSetup = DeploymentSetup()  # what the launch turns on beside the model
    host_tier: HostTier | None = None  # KV kept in host memory, per rank

    @property
    def gpu_total_origin(self) -> GpuTotalOrigin | None:
        """Where `gpu_total_bytes` came from (--gpu's table, --gpu-memory), as its chooser said it (`plan` does);
        None where it did not (a snapshot's ledger); what views say of the total is `shown_total_origin`."""
        return self.measured.gpu_total_origin

    @property
    def shown_total_origin(self) -> GpuTotalOrigin | None:
        """The origin every view says for `gpu_total_bytes`, the budget's first line's decision
        (`MeasuredInputs.shown_total_origin`): said or inferred; None only for a measured total no chooser described."""
        return self.measured.shown_total_origin(self.gpu_name, self.gpu_total_bytes)

    @property
    def notes(self) -> tuple[str, ...]:
        """What every view notes under the budget: the engine's notes, and why nvidia-smi's total of the card is
        assumed where a --gpu-memory is a part of it (`gpu_total_origin.smi_total`)."""
        origin = self.measured.total_origin(self.gpu_name, self.gpu_total_bytes)
        smi = smi_total_note(self.gpu_name, self.gpu_total_bytes, origin)
        tower = unbuilt_note(self.model.tower)  # a part of the served model's tower left unbuilt (tower_parts)
        return (*self.engine.notes, *([smi] if smi else []), *([tower] if tower else []))

    @property
    def engine_total_bytes(self) -> int:
        """The total the engines size from (CUDA's): measured on a live GPU (NVML v2's total less its reserved) or
        given (--gpu-memory), else the per-model fit the ledger was calibrated with, else `gpu_total_bytes`."""
        return self.measured.engine_total(self.gpu_total_bytes)

    @property
    def engine_total_source(self) -> TermSource | None:
        """Where `engine_total_bytes` comes from (None: nothing estimated it, it is `gpu_total_bytes` itself)."""
        return self.measured.engine_total_source()

    @property
    def terms(self) -> tuple[BudgetTerm, ...]:
        """The deployment's terms of the rank that holds the most beside its weights (the tightest)."""
        return max(self.ranks, key=lambda r: (r.resident_terms_bytes, len(r.terms))).terms if self.ranks else ()

    @property
    def kv_cell_unpriced(self) -> bool:
        """A term of the KV cell kvtop cannot price (an EAGLE-3 draft named by no config: its layers unknown): the
        cell then reads '≥' its priced bytes."""
        return any(t.charge is Charge.KV_CELL and not t.modelled for t in self.terms)

    @property
    def beside_model(self) -> BesideModel:
        """What the deployment holds on the GPU beside the model, on the rank that holds the most, however the engine
        charges it (`deployment.gpu_bytes_beside`), with its state: a resident term kvtop cannot price (an EAGLE-3
        draft named by no config) makes it 'at least' the priced ones, or 'not modelled' where none is priced; never a
        silent 0."""
        held = max((gpu_bytes_beside(rank.terms) for rank in self.ranks), default=0)
        if any(t.charge is Charge.RESIDENT and not t.modelled for t in self.terms):
            return BesideModel(held, BesideState.AT_LEAST if held else BesideState.NOT_MODELLED)
        return BesideModel(held, BesideState.PRICED if held else BesideState.NONE)

    @property
    def not_modelled(self) -> tuple[str, ...]:
        """What kvtop leaves out of this ledger, said aloud: the model's parts (`ModelSpec.not_modelled`), then the
        engine's rules' on this launch (`EngineResult.not_modelled`: vLLM's MXFP4 path). The one list `plan`,
        `explain` and their JSON print, each once."""
        return tuple(dict.fromkeys((*self.model.not_modelled, *self.engine.not_modelled)))

    @property
    def token_capacity(self) -> int:
        return self.engine.token_capacity

    @property
    def _tightest_kv_rank(self) -> RankLedger:
        """The rank whose KV costs the most bytes per token: the one whose cell and rate the ledger's are."""
        return max(self.ranks, key=lambda r: r.kv_bytes_per_token)

    @property
    def kv_bytes_per_token(self) -> int:
        return self._tightest_kv_rank.kv_bytes_per_token

    @property
    def request_capacity(self) -> RequestCapacity | None:
        """An attention-free model's capacity in requests on the tightest rank (None: it plans KV tokens)."""
        if not self.model.attention_free or not self.ranks:
            return None
        return request_capacity(max(self.ranks, key=lambda r: r.kv.state_bytes_per_request).kv, self.engine)

    def token_change_from(self, before: Ledger) -> int | None:
        """Tokens per rank this plan holds over `before` (an edit against the live settings; negative: fewer); None
        where this plan counts requests (an attention-free model's capacity is requests, not tokens)."""
        return None if self.request_capacity is not None else self.token_capacity - before.token_capacity

    @property
    def weights_bytes(self) -> int:
        return max(rank.weights_bytes for rank in self.ranks)

    @property
    def kv_cell(self) -> KvCell | None:
        """The engine's own cell of the tightest rank, where it has one (`RankLedger.kv_cell`)."""
        return self._tightest_kv_rank.kv_cell if self.ranks else None

    @property
    def kv_bytes_per_token_exact(self) -> float:
        """The tightest rank's bytes per token as the capacity divides by them (the engine's cell unrounded)."""
        return self._tightest_kv_rank.kv_bytes_per_token_exact

    @property
    def requests_at_context_length(self) -> float | None:
        """How many requests of the full context length the pool holds at once (None: no context length)."""
        return self.engine.token_capacity / self.context_length if self.context_length else None

    @property
    def tokens_per_gib(self) -> float:
        """The exchange rate: how many tokens one GiB of KV budget buys on the tightest rank (its own rate)."""
        return self._tightest_kv_rank.tokens_per_gib

    def tokens_in(self, num_bytes: int) -> int | None:
        """`num_bytes` read as tokens on the tightest rank (`RankLedger.tokens_in`: whole pages of its cell)."""
        return self._tightest_kv_rank.tokens_in(num_bytes) if self.ranks else None


class WhatIf(Protocol):
    """A ledger re-solved with one thing changed (`kvtop.domain.whatif.Replay`), as the finding rules and each
    engine's diagnosis take it: typed here, below the engines' protocols, because solving looks rules up."""

    ledger: Ledger
    measured: MeasuredInputs
    load_mtp: bool

    @property
    def free_before_load_bytes(self) -> int: ...

    @property
    def weights_bytes(self) -> int: ...

    def solve(
        self,
        settings: LaunchSettings | None = None,
        *,
        free_shift: int = 0,
        weights_shift: int = 0,
        available_kv_bytes: int | None = None,
        new_layout: bool = False,
    ) -> Ledger | None: ...

    def capacity(
        self,
        settings: LaunchSettings | None = None,
        *,
        free_shift: int = 0,
        weights_shift: int = 0,
        available_kv_bytes: int | None = None,
    ) -> int: ...

    def capacity_at_least_free(self, free: Mapping[int, int]) -> int: ...

    def at_least_free(self, free: Mapping[int, int], settings: LaunchSettings | None = None) -> Ledger | None: ...

"""The values every engine's budget rules exchange: what was measured, the inputs of one rank set, and what
the engine would allocate and log (the protocols that take them are `protocols.py`)."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, computed_field

from kvtop.domain.calibration.terms import CalibratedFigures, TermSource
from kvtop.domain.deployment import Basis, BudgetTerm, Charge, resident_bytes
from kvtop.domain.engines.budget_step import BudgetStep, StepRole
from kvtop.domain.engines.measured_reads import MeasuredField, MeasuredNotRead
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.gpu_total_origin import GpuTotalOrigin, total_origin, total_said
from kvtop.domain.host_desktop import HostDesktop
from kvtop.domain.kv import KvBook
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.start_cache import StartCacheCharge
from kvtop.domain.wording import GIB, a_gib, gib

# Memory the CUDA context and NCCL take before weights load, when nothing measured it
# (SGLang logs it as `Init torch distributed ends. mem usage=…`: ≈ 0.6–1.2 GiB on H100 nodes).
DEFAULT_CONTEXT_BYTES = 1 * GIB
# The range kvtop assumes around it where an estimate needs one (explain with --gpu): from a lone GPU
# that loads lazily to a TP8 node's NCCL buffers and custom all-reduce (assumed, not calibrated).
CONTEXT_BYTES_RANGE = (GIB // 4, 2 * GIB)


# what a measured CUDA total on a live GPU is (`MeasuredInputs.cuda_total_bytes`), as a plan's term says it
CUDA_TOTAL_FROM_NVML = "NVML v2's total less the driver's reserved"


#: torch.compile's cache as the operator says it (`plan --compile-cache`, the planner's field) or a log shows it:
#: "cold" a first start, "warm" where an earlier start of the launch on this node left its compiled graphs
CompileCacheState = Literal["cold", "warm"]


class MeasuredInputs(BaseModel):
    """Measured values that replace kvtop's predictions (from NVML, a log, or the operator).

    `explain` also solves with figures nothing printed (an input the log lacks, estimated and solved at each end of
    its range; the GPU table's total for --gpu): `estimated` names those with their source, so that no budget step
    shows them as measured."""

    model_config = ConfigDict(frozen=True)

    gpu_total_bytes: int | None = None
    free_before_load_bytes: int | None = None  # min over ranks, after CUDA/NCCL init
    free_after_load_bytes: int | None = None  # min over ranks, once every weight is resident
    weights_bytes: int | None = None  # resident weights per rank (largest rank)
    # the pipeline stage whose load `weights_bytes` measured where it is one stage's (a log whose first rank alone
    # prints its load: `EngineRules.logged_weights_stage`); None: every stage's (the largest rank's). The ledger gives
    # each other stage that figure plus its book's difference from that stage's (`stage_weights.stage_measured_weights`)
    weights_stage: int | None = None
    non_kv_bytes: int | None = None  # vLLM: activation peak + non-torch + CUDA graphs (weights excluded)
    available_kv_bytes: int | None = None  # vLLM: `Available KV cache memory`, when logged
    # vLLM under PP: each stage's own `Available KV cache memory` (least over its TP ranks), in stage
    # order; every worker sizes its blocks from its own memory and its own layers, then the least wins
    available_kv_bytes_by_stage: tuple[int, ...] | None = None
    # the pre-load estimate's figures (docs/calibration.md), read where nothing above measured them
    calibrated: CalibratedFigures | None = None
    draft_weights_bytes: int | None = None  # a speculative draft's resident weights per rank (its own load)
    desktop: bool = False  # the operator says a desktop (Windows, WSL2) shares the GPU (`--desktop`): said, not modelled
    # where the node itself showed that desktop (a WSL2 kernel: `domain.host_desktop`), measured; `desktop` is then
    # True. None: said by the operator or a log line, or not shown
    desktop_seen: HostDesktop | None = None
    # figures set above that no log, NVML or operator printed, with where they came from (calibrated or assumed)
    estimated: tuple[tuple[MeasuredField, TermSource], ...] = ()
    # where the GPU total solved with came from, said where it was chosen (`plan`: --gpu's table or --gpu-memory; a
    # live node's prediction: NVML)
    gpu_total_origin: GpuTotalOrigin | None = None
    # the total the engines size from (CUDA's), measured on a live GPU: NVML v2's total less its reserved
    # (`gpu_total_origin.engine_visible_total`); None where not measured (NVML v1, a plan away from the GPU): the fit stands in
    cuda_total_bytes: int | None = None
    # torch.compile's cache as the operator says it (`plan --compile-cache`): "warm" where an earlier start of the launch
    # on this node left its compiled graphs, "cold" a first start; None: not said (vLLM: a cold start is charged)
    compile_cache: CompileCacheState | None = None

    def engine_total_given(self) -> tuple[int, str] | None:
        """CUDA's total where something measured or gave it, and what: the operator's --gpu-memory (the GPU's total
        and the engines' alike), else NVML v2's total less its reserved; None: the calibrated fit stands in."""
        if self.gpu_total_bytes is not None:
            return self.gpu_total_bytes, "--gpu-memory"
        if self.cuda_total_bytes is not None:
            return self.cuda_total_bytes, CUDA_TOTAL_FROM_NVML
        return None

    def with_total_origin(self, origin: GpuTotalOrigin) -> MeasuredInputs:
        """These inputs with their GPU total's origin said (`gpu_total_origin.given_total_origin` for --gpu-memory): a larger
        memory variant's total is nvidia-smi's, not the engine's, so it leaves `gpu_total_bytes` (which the engine
        would size from as measured) and the calibration estimates CUDA's total from it, as from the table's; so does
        a WSL2 card's (`gpu_total_origin.wsl2_total_origin`), CUDA's total there the whole card."""
        nvidia_smis = origin in (GpuTotalOrigin.VARIANT, GpuTotalOrigin.WSL2)  # a card's own figure, not --gpu-memory's
        dropped = {"gpu_total_bytes": None} if nvidia_smis else {}
        return self.model_copy(update={"gpu_total_origin": origin, **dropped})

    @property
    def wsl2(self) -> bool:
        """Whether the GPU is reached through WSL2 (its total's origin, `GpuTotalOrigin.WSL2`: `plan --wsl2`, a node
        that shows WSL2): CUDA's total is then the card's whole memory (`calibration.gpu_totals.cuda_total_estimate`)."""
        return self.gpu_total_origin is GpuTotalOrigin.WSL2

    def total_origin(self, gpu_name: str | None, gpu_total_bytes: int) -> GpuTotalOrigin:
        """Where the GPU total came from: as its chooser said, else inferred for a caller that did not say
        (`gpu_total_origin.total_origin`)."""
        return total_origin(gpu_name, gpu_total_bytes, self.gpu_total_origin)

    def shown_total_origin(self, gpu_name: str | None, gpu_total_bytes: int) -> GpuTotalOrigin | None:
        """THE origin every view says for the GPU total (the budget's first line, `plan`'s and a snapshot's header,
        the JSON's `gpu.total_is`): its chooser's; else, for a total nothing measured, the one `gpu_total_origin.total_origin`
        reads from its bytes; None for a measured total no chooser described (a log's: said as measured)."""
        if self.gpu_total_origin is None and self.is_measured("gpu_total_bytes"):
            return None
        return self.total_origin(gpu_name, gpu_total_bytes)

    def estimate_source(self, field: MeasuredField) -> TermSource | None:
        """Where a figure set here came from when it was estimated, not measured (None: measured, or not set)."""
        found = next((source for name, source in self.estimated if name == field), None)
        return None if found == "measured" else found

    def is_measured(self, field: MeasuredField) -> bool:
        """Whether `field` holds a figure a log, NVML or the operator printed (not an estimate)."""
        return getattr(self, field) is not None and self.estimate_source(field) is None

    def input_step(
        self, label: str, field: MeasuredField, value: int, note: str = "", role: StepRole | None = None
    ) -> BudgetStep:
        """The budget line of an input figure set here: measured, else named by its estimate's source."""
        return BudgetStep(label=label, bytes=value, note=note, measured=self.is_measured(field),
                          source=self.estimate_source(field), role=role)  # fmt: skip

    def with_estimated(self, field: MeasuredField, source: TermSource) -> MeasuredInputs:
        """These inputs with `field`'s figure named as an estimate from `source` (a measured source keeps it measured)."""
        kept = tuple(pair for pair in self.estimated if pair[0] != field)
        return self.model_copy(update={"estimated": kept if source == "measured" else (*kept, (field, source))})

    def free_before_load(self, gpu_total_bytes: int) -> int:
        """The memory free before the weights load (min over ranks): measured, else calibrated (CUDA's
        total less the context the corpus fits), else the GPU's total less `DEFAULT_CONTEXT_BYTES`
        (said by `FREE_BEFORE_LOAD_ESTIMATED`)."""
        if self.free_before_load_bytes is not None:
            return self.free_before_load_bytes
        if self.calibrated is not None and self.calibrated.free_before_load_bytes is not None:
            return self.calibrated.free_before_load_bytes
        return gpu_total_bytes - DEFAULT_CONTEXT_BYTES

    def context_before_load(self, gpu_total_bytes: int) -> int:
        """THE context a rank holds before its weights (CUDA context, NCCL), one figure for the budget, the ledger's
        ranks, a restart's arithmetic, the demo's workers and every view: measured, what the free memory before load
        leaves of the total; calibrated, the context term itself (the plan's `terms.context`: CUDA's total less the
        calibrated free memory, never the driver's share nor a unified host's, `driver_reserved_bytes` and
        `CalibratedFigures.host_held_bytes`; on a unified host whose share holds it, `context_in_host`, the term's
        figure); else the engine's context fit where its budget reads no free memory (vLLM's worker); else
        `DEFAULT_CONTEXT_BYTES`."""
        if self._context_is_the_fit() and self.calibrated is not None and self.calibrated.context_bytes is not None:
            return self.calibrated.context_bytes
        calibrated = self._calibrated_free()
        if calibrated is not None and calibrated.context_in_host and calibrated.context_bytes is not None:
            return calibrated.context_bytes  # within the host's share, which the free memory before load is less
        if calibrated is not None and calibrated.cuda_total_bytes:
            return calibrated.cuda_total_bytes - self.free_before_load(gpu_total_bytes) - calibrated.host_held_bytes
        return gpu_total_bytes - self.free_before_load(gpu_total_bytes)

    def context_in_host(self) -> bool:
        """The free memory before load is the calibrated one, CUDA's total less a unified host's assumed share that
        holds the context (`CalibratedFigures.context_in_host`): the context is within that share, not beside it."""
        calibrated = self._calibrated_free()
        return calibrated is not None and calibrated.context_in_host

    def driver_reserved_bytes(self, gpu_total_bytes: int) -> int:
        """What the driver keeps of `gpu_total_bytes` from CUDA (nvidia-smi's total less CUDA's) where the free memory
        before load is the calibrated one (CUDA's total less the context) or the context is the engine's fit (vLLM):
        not the context, a row of its own. 0 where the free memory was measured or assumed (the context is then the
        total less that free memory, all of it)."""
        calibrated = self._calibrated_free() or (self.calibrated if self._context_is_the_fit() else None)
        if calibrated is None or not calibrated.cuda_total_bytes:
            return 0
        return max(gpu_total_bytes - calibrated.cuda_total_bytes, 0)

    def context_source(self) -> TermSource:
        """Where `context_before_load` comes from."""
        if self._context_is_the_fit() and self.calibrated is not None:
            return self.calibrated.context_source
        calibrated = self._calibrated_free()
        if calibrated is not None and calibrated.context_bytes is not None and self.free_before_load_bytes is None:
            return calibrated.context_source
        return self.free_before_load_source()  # measured, or explain's estimate of it, as it names its source

    def context_error_bytes(self) -> int:
        """How far `context_before_load` may be off: 0 measured, the context term's error where it was calibrated or
        assumed by the calibration (the plan's `terms.context` error), else `CONTEXT_BYTES_RANGE`'s wider side."""
        if self.context_source() == "measured":
            return 0
        calibrated = self.calibrated
        if calibrated is not None and calibrated.context_bytes is not None and (
            self._context_is_the_fit() or self._calibrated_free() is not None
        ):
            return calibrated.context_error_bytes
        return max(CONTEXT_BYTES_RANGE[1] - DEFAULT_CONTEXT_BYTES, DEFAULT_CONTEXT_BYTES - CONTEXT_BYTES_RANGE[0])

    def _calibrated_free(self) -> CalibratedFigures | None:
        """The calibrated figures where the free memory before load is estimated from their CUDA total (plan's: that
        less the context term; explain's estimate of it, `estimated`), not measured; None where it was measured."""
        calibrated = self.calibrated
        if calibrated is None or not calibrated.cuda_total_bytes:
            return None
        if self.free_before_load_bytes is None:
            return calibrated if calibrated.free_before_load_bytes is not None else None
        return calibrated if self.estimate_source("free_before_load_bytes") is not None else None

    def _context_is_the_fit(self) -> bool:
        """Nothing measured the free memory before load and the budget read none, but a context was fitted."""
        calibrated = self.calibrated
        return (
            self.free_before_load_bytes is None and calibrated is not None
            and calibrated.free_before_load_bytes is None and calibrated.context_bytes is not None
        )  # fmt: skip

    def free_before_load_source(self) -> TermSource:
        if self.free_before_load_bytes is not None:
            return self.estimate_source("free_before_load_bytes") or "measured"
        if self.calibrated is not None and self.calibrated.free_before_load_bytes is not None:
            return self.calibrated.free_before_load_source
        return "assumed"

    def free_before_load_note(self) -> str | None:
        """The note a plan carries for the free memory it assumed (None: measured)."""
        if self.free_before_load_bytes is not None:
            return None
        if self.calibrated is not None and self.calibrated.free_before_load_bytes is not None:
            if self.calibrated.free_before_load_source == "measured":  # every term this node's store (a unified share: 0)
                return FREE_BEFORE_LOAD_NODE
            if self.calibrated.host_held_bytes:  # a unified-memory host: its share is the widest part of the estimate
                return FREE_BEFORE_LOAD_UNIFIED.format(held=gib(self.calibrated.host_held_bytes, digits=1))
            return FREE_BEFORE_LOAD_CALIBRATED
        return FREE_BEFORE_LOAD_ESTIMATED

    def non_kv(self, assumed_bytes: int) -> int:
        """The runtime memory a profiling engine charges besides the weights (vLLM's activation peak,
        non-torch memory and CUDA graphs; TensorRT-LLM's profiled reserve): measured, else calibrated,
        else the engine's stated assumption."""
        if self.non_kv_bytes is not None:
            return self.non_kv_bytes
        if self.calibrated is not None and self.calibrated.non_kv_bytes is not None:
            return self.calibrated.non_kv_bytes
        return assumed_bytes

    def non_kv_source(self) -> TermSource:
        if self.non_kv_bytes is not None:
            return self.estimate_source("non_kv_bytes") or "measured"
        if self.calibrated is not None and self.calibrated.non_kv_bytes is not None:
            return self.calibrated.non_kv_source
        return "assumed"

    def engine_total(self, gpu_total_bytes: int) -> int:
        """The total an engine multiplies its share by (vLLM): the GPU memory given, else CUDA's total measured on
        the live GPU (NVML v2), else as calibrated per GPU model (below nvidia-smi's), else the GPU's total."""
        if self.gpu_total_bytes is None and self.cuda_total_bytes is not None:
            return self.cuda_total_bytes
        if self.gpu_total_bytes is None and self.calibrated is not None and self.calibrated.cuda_total_bytes:
            return self.calibrated.cuda_total_bytes
        return gpu_total_bytes

    def engine_total_is_cuda(self) -> bool:
        """Whether `engine_total` gives CUDA's own total in place of the GPU total passed (NVML v2's or the calibrated
        one; the step's role says so, `cuda_total`, whatever its bytes)."""
        calibrated = self.calibrated is not None and bool(self.calibrated.cuda_total_bytes)
        return self.gpu_total_bytes is None and (self.cuda_total_bytes is not None or calibrated)

    def engine_total_source(self) -> TermSource | None:
        if self.gpu_total_bytes is not None:
            return self.estimate_source("gpu_total_bytes") or "measured"
        if self.cuda_total_bytes is not None:
            return "measured"
        if self.calibrated is not None and self.calibrated.cuda_total_bytes:
            return self.calibrated.cuda_total_source
        return None

    @property
    def weights_extra_bytes(self) -> int:
        """Bytes added to the predicted weights of every rank (a node's measure or an interval's end)."""
        return self.calibrated.weights_extra_bytes if self.calibrated is not None else 0


FREE_BEFORE_LOAD_ESTIMATED = "free memory before load is estimated (GPU total − 1 GiB of CUDA context and NCCL)"
# how a calibrated plan estimates the free memory before load (LMDeploy's note after the weights says it too)
CALIBRATED_FREE_BEFORE_LOAD = "CUDA's total less the CUDA context and NCCL by TP, each calibrated"
FREE_BEFORE_LOAD_CALIBRATED = f"free memory before load is estimated: {CALIBRATED_FREE_BEFORE_LOAD} (docs/calibration.md)"
FREE_BEFORE_LOAD_NODE = ("free memory before load is this node's: CUDA's total less the context (and on unified memory "
                         "the host's share) an earlier start of this launch measured (its calibration store)")
# what a unified host's share is, where it holds the context (`CalibratedFigures.context_in_host`): LMDeploy's note says it
UNIFIED_SHARE = "what the host holds of its unified memory (assumed), the CUDA context and NCCL within it"
FREE_BEFORE_LOAD_UNIFIED = (
    "free memory before load is estimated: CUDA's total less what the host holds of its unified memory ({held}, "
    "assumed, the engine's CUDA context within it: --free-memory gives the engine's own figure)"
)


class KvCell(BaseModel):
    """The bytes per token an engine solves its capacity with where that is not the KV book's per-token sum
    (SGLang's DeepSeek-V4 pool: bytes per full token, its SWA share and compressed rows folded in), and what its
    pool fixes per request slot beside them. Every view reads this one figure, labelled with `unit`."""

    model_config = ConfigDict(frozen=True)

    bytes_per_token: float
    unit: str  # what one "token" of `bytes_per_token` is, e.g. "per full token"
    counts: str  # what the bytes hold
    fixed_bytes: int = 0  # bytes the pool takes before any token (per-request state rings)
    fixed_what: str = ""
    # where the engine counts tokens per request (vLLM: tokens = pages ÷ request_pages × request_tokens), the
    # request in whole figures: `bytes_per_token` is then request_bytes ÷ request_tokens, a quotient no pool holds
    request_pages: int = 0
    page_bytes: int = 0
    request_tokens: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def request_bytes(self) -> int:
        """What one request of `request_tokens` holds: its pages × a page's bytes (0 where no request is counted)."""
        return self.request_pages * self.page_bytes

    @property
    def whole_bytes(self) -> int:
        """The cell rounded up to whole bytes (what an int per-token figure carries)."""
        return math.ceil(self.bytes_per_token)


class EngineInputs(BaseModel):
    """Everything an engine's rules need for one rank set (the tightest rank decides)."""

    model_config = ConfigDict(frozen=True)

    model: ModelSpec
    layout: ParallelLayout
    settings: LaunchSettings
    gpu_total_bytes: int
    gpu_name: str | None = None  # e.g. "A100-80GB": some engine defaults follow the GPU model
    weights_bytes: int  # the largest rank's resident weights (predicted or measured)
    kv: KvBook  # the KV book of the rank with the most KV per token
    context_length: int
    measured: MeasuredInputs = MeasuredInputs()
    pp_rank: int = 0  # the pipeline stage these books belong to
    version: ResolvedVersion = ResolvedVersion()  # which era of the engine's rules applies
    # the deployment's terms beside the target model (draft, experts, LoRA…: kvtop.domain.deployment)
    terms: tuple[BudgetTerm, ...] = ()

    def gpu_total_label(self) -> str:
        """The budget's first line, saying what its total is: 'GPU memory (nvidia-smi's total)' for the table's
        figure, else '(--gpu-memory)' (`gpu_total_origin.total_said` of the origin its chooser said, as `plan`'s header); a
        measured total (the operator's --gpu-memory, NVML) is plain 'GPU memory', its step marked measured (explain
        names a log's as logged)."""
        origin = self.measured.shown_total_origin(self.gpu_name, self.gpu_total_bytes)
        if self.measured.is_measured("gpu_total_bytes") or origin is None:
            return "GPU memory"
        return f"GPU memory ({total_said(self.gpu_name, origin)})"

    @property
    def resident_bytes(self) -> int:
        """Everything resident before the KV pool is sized: the weights and the resident terms."""
        return self.weights_bytes + resident_bytes(self.terms)

    @property
    def weights_source(self) -> TermSource | None:
        """Where the weights figure comes from: measured (`--weights-memory`), else the calibration's estimate of it
        (calibrated or assumed); None: the book's count with no calibration."""
        if self.measured.weights_bytes is not None:
            return self.measured.estimate_source("weights_bytes") or "measured"
        calibrated = self.measured.calibrated
        if calibrated is None:
            return None
        # a node's stored load of another stage: this stage's is derived from it
        return "calibrated" if self.loaded_stage is not None else calibrated.weights_source

    @property
    def loaded_stage(self) -> int | None:
        """The other pipeline stage whose load this stage's weights are derived from (stage_weights.py): the measured
        load's (`MeasuredInputs.weights_stage`, a log's) where weights are measured, else the calibration store's;
        None where the figure is this stage's own or every stage's."""
        if self.measured.weights_bytes is not None:
            stage = self.measured.weights_stage
        else:
            calibrated = self.measured.calibrated
            stage = calibrated.weights_stage if calibrated is not None else None
        return stage if stage != self.pp_rank else None

    def weights_step(self, label: str = "− weights") -> BudgetStep:
        """The budget line that charges the weights, labelled by `weights_source` (as the pre-start block's term)."""
        measured = self.weights_source == "measured"
        stage = self.loaded_stage
        which = "logged" if self.measured.weights_bytes is not None else "stored (this node's calibration store)"
        derived = f"derived from stage {stage}'s {which} load + this stage's book beyond stage {stage}'s"
        note = derived if stage is not None else ""
        return BudgetStep(label=label, bytes=-self.weights_bytes, measured=measured, note=note,
                          source=None if measured else self.weights_source)  # fmt: skip

    def weight_steps(self, label: str = "− weights") -> list[BudgetStep]:
        """The budget lines that charge the weights, then each resident term by name."""
        steps = [self.weights_step(label)]
        for term in self.terms:
            if term.charge is Charge.RESIDENT and term.modelled and term.bytes:
                steps.append(
                    BudgetStep(label=f"− {term.label}", bytes=-term.bytes, note=term.setting,
                               measured=term.basis is Basis.MEASURED)
                )  # fmt: skip
        return steps

    def fixed_pool_overflow(self, pool_bytes: int, flag: str, notes: list[str]) -> int:
        """Bytes by which a pool sized by a flag rather than by memory (`flag`) exceeds the memory free
        once the weights are resident (0: it fits), said in `notes`. The engine does not check it
        against memory: it allocates the pool and fails at start with CUDA out of memory."""
        room = self.measured.free_before_load(self.gpu_total_bytes) - self.resident_bytes
        over = pool_bytes - room
        if over > 0:
            notes.append(
                f"{flag} asks for {a_gib(pool_bytes)} pool where {gib(max(room, 0))} is free after the weights: "
                "the engine would run out of memory allocating it at start"
            )
        return max(over, 0)


class EngineResult(BaseModel):
    """What the engine would allocate and log."""

    model_config = ConfigDict(frozen=True)

    engine: str
    token_capacity: int  # the number the engine logs (0 when it does not fit)
    swa_token_capacity: int | None = None
    page_size: int
    num_blocks: int | None = None  # vLLM
    block_bytes: int | None = None  # vLLM: the bytes one block takes over the worker's groups (page × group size)
    # vLLM: the longest max_model_len its admission check admits, (blocks − the ones it holds back) × block tokens,
    # where one request's blocks are its length's (one full-attention group); None where they are not, or no vLLM
    estimated_max_model_len: int | None = None
    # it does not start for the context: one request at it needs more KV than the budget holds (vLLM's admission check)
    short_of_context: bool = False
    kv_budget_bytes: int  # bytes the engine hands to the KV pools
    kv_pool_bytes: int  # bytes the pools really take (padding rows, state, index included)
    state_pool_bytes: int = 0
    state_slots: int = 0  # requests' states the state pool holds (its padding slot not counted); 0: no pool sized
    state_slots_per_request: int = 1  # the slots one running request takes (SGLang's mamba ratio: mamba_ratio)
    max_running_requests: int
    max_concurrency: float | None  # vLLM's expression; None where the engine has none
    req_to_token_bytes: int = 0
    reserve_bytes: int  # runtime reserve kept outside weights and KV
    # the reserve the engine's own rules would keep (SGLang: its automatic fraction's), where a given
    # setting can leave less; None where the budget measures what it needs (a profiling run)
    reserve_needed_bytes: int | None = None
    # memory the launch's own share hands to neither the KV pool nor the runtime: a fixed KV size below
    # what the share allows (vLLM's --kv-cache-memory-bytes leaves the rest of its utilization unused)
    unused_bytes: int = 0
    memory_fraction: float  # mem_fraction_static or gpu_memory_utilization actually used
    memory_fraction_source: str
    fits: bool
    shortfall_bytes: int = 0
    steps: tuple[BudgetStep, ...]
    notes: tuple[str, ...] = ()
    # parts of this launch whose bytes the engine's rules leave unmodelled (vLLM's MXFP4 experts in a layout kvtop
    # does not build), said aloud as the model's own `not_modelled` are: `plan` prints 'note: not modelled: …'
    not_modelled: tuple[str, ...] = ()
    # what a cold start may charge beyond this budget, by a cache not known before it (vLLM's torch.compile cache): a
    # plan says it beside its terms, in its tokens (`CapacityPlan.start_notes`); None where the budget rests on no
    # profile estimate it moves (a measured KV memory or non-KV figure, a fixed pool) or no such cache is used
    start_cache: StartCacheCharge | None = None
    # measured figures given that the engine's rule does not read (`measured_reads`), each also said in `notes`
    inputs_not_read: tuple[MeasuredNotRead, ...] = ()
    cell: KvCell | None = None  # the cell the capacity was solved with, where it is not the book's sum
    # the flag that sizes the cache, not a share of memory (llama.cpp's -c, vLLM's --num-gpu-blocks-override): memory
    # then decides only whether it fits, and a plan's interval says so rather than a width of ± 0 (None: memory sizes it)
    capacity_fixed_by: str | None = None
    # that knob and its value in the engine's words, where no memory share sizes the cache (llama.cpp's
    # `-c 0 (training context 131,072)`): views show it in place of `memory_fraction_flag memory_fraction`
    capacity_setting: str | None = None
    request_blocks: int | None = None  # vLLM: the blocks one max-length request needs, where a fixed count refuses

    @property
    def unused_budget_bytes(self) -> int:
        """Budget no pool and no reserve takes: `unused_bytes`, plus KV budget a token or block cap (or the
        page rounding) leaves outside the pool. Never called runtime reserve: nothing claims it."""
        return self.unused_bytes + max(0, self.kv_budget_bytes - self.kv_pool_bytes)

    @property
    def count_refusal(self) -> str | None:
        """The flag's block count's refusal in words, where memory holds the blocks (a shortfall ≤ 0); else None."""
        if self.fits or self.capacity_fixed_by is None or self.shortfall_bytes > 0:
            return None
        need = f"{self.request_blocks:,} blocks for one request against " if self.request_blocks else ""
        return f"the block count's refusal, not memory's: {need}{self.num_blocks or 0:,} given by {self.capacity_fixed_by}"

    @property
    def reserve_short_bytes(self) -> int:
        """How far the reserve falls below what the engine's own rules keep (0: none, or not known).

        A pool that fits can still run out of memory capturing CUDA graphs or under load then."""
        return max(0, self.reserve_needed_bytes - self.reserve_bytes) if self.reserve_needed_bytes else 0

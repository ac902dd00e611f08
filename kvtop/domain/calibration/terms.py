"""The memory terms a plan must know before the engine starts, each with where its figure comes from.

A plan made before the engine runs needs figures only the engine's start measures: the memory CUDA
reports (below nvidia-smi's), what the CUDA context and NCCL take before the weights load, the
profiled activation peak, non-torch memory and CUDA graphs. Each is a `TermEstimate`: its bytes, the
half-width of the interval its held-out error gives, and its source — `measured` (a log, NVML, the
operator, this node's store), `calibrated` (a model fitted on the corpus, docs/calibration.md) or
`assumed` (a stated default where no fit reaches). `CalibratedFigures` is what the engines' budgets
read from them; `MeasuredInputs` carries it beside the measured values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from enum import Enum
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, computed_field, model_validator

from kvtop.domain.calibration.coverage import IntervalScale
from kvtop.domain.calibration.extrapolation import ExtrapolationWidening
from kvtop.domain.calibration.host_estimate import DesktopHost, UnifiedHost
from kvtop.domain.wording import gib, gib_figure

TermSource = Literal["measured", "calibrated", "assumed"]
# where a term's figure was put: the engine's calibration (a fit or an assumption), this node's store of an earlier
# start, or a measured input of this plan (a flag, a log, NVML)
TermOrigin = Literal["estimate", "node", "input"]


class Term(str, Enum):
    """A memory term of the budget, as every engine's calibration names it."""

    CUDA_TOTAL = "cuda_total"  # the GPU's memory as CUDA reports it (the engines' 'total')
    CONTEXT = "context"  # CUDA context, NCCL and the driver's share, taken before the weights load
    WEIGHTS = "weights"  # resident weights per rank
    ACTIVATION = "activation"  # the profiled activation peak (torch)
    NON_TORCH = "non_torch"  # memory outside torch that grows while profiling (NCCL buffers, workspaces)
    CUDA_GRAPHS = "cuda_graphs"  # CUDA-graph memory charged to the budget before KV is sized
    HOST = "host"  # what a unified-memory host holds of the GPU's memory before the engine (host_memory.py)
    # the widening of a plan outside what its engine's corpus covers (extrapolation.py): no budget figure of its own,
    # the plan's ends take it (`CapacityPlan.extrapolation_term`)
    EXTRAPOLATION = "extrapolation"
    # what a desktop sharing the card may take that the plan does not model (host_memory.py): no budget figure of its
    # own, only the low end takes it (`PreloadEstimate.desktop_term`)
    DESKTOP = "desktop"


# The `within` of a context term that a unified host's assumed share holds (`host_memory.context_within_share`): its
# error 0 and not taken off CUDA's total again (`PreloadEstimate.context_in_host`)
CONTEXT_WITHIN_HOST = "what the host holds (unified memory): the share's readings were taken after the engine's context was made"

# Terms whose bytes the engines charge as runtime memory besides the weights (vLLM's non-KV memory,
# TensorRT-LLM's profiled reserve): their sum is `CalibratedFigures.non_kv_bytes`.
RUNTIME_TERMS = (Term.ACTIVATION, Term.NON_TORCH, Term.CUDA_GRAPHS)


_Term = TypeVar("_Term", bound="TermEstimate")
ERROR_FIELDS = frozenset({"error_bytes", "raise_only_bytes", "lower_only_bytes", "error_below_bytes"})  # changed by `with_error` alone


class TermEstimate(BaseModel):
    """One term's figure before the engine starts, and how far it may be off."""

    model_config = ConfigDict(frozen=True)

    term: Term
    label: str  # the engine's own name for it, e.g. "vLLM's profiled activation peak"
    bytes: int
    # half-width of its interval: the held-out error the corpus measured (0: exact); the side above the figure where a
    # part only raises the term (`raise_only_bytes`)
    error_bytes: int
    source: TermSource
    basis: str  # the fit, the measurement or the assumption, in words
    more_is_more_kv: bool = False  # CUDA's total: more of it is more KV; every other term takes from KV
    fit_key: str | None = None  # the fit it was calibrated from (`LinearTerm.key`), None where not fitted
    beyond: str | None = None  # why its error was widened: the plan is outside its fit's records ("no record … on the L4")
    values: tuple[float, ...] = ()  # the fit's feature values it was predicted on (GiB; () where not fitted)
    assumed_because: str | None = None  # why an assumed term takes no fit, in words (every view reads this one)
    # an error the engine's rules add beside the fitted one (LMDeploy's staging leftover), already in `error_bytes` as
    # independent errors add (the root of squares): kept where a plan re-reads the fitted one (`with_fitted_error`)
    beside_error_bytes: int = 0
    # the measured input that holds this term, whose own figure stays an estimate: the budget reads the measured one,
    # so the term's error moves nothing (`--free-after-load` holds the predicted weights), or a unified host's assumed
    # share that holds the context (`CONTEXT_WITHIN_HOST`); None: the budget reads it
    within: str | None = None
    origin: TermOrigin = "estimate"
    # the part of `error_bytes` only the side above the figure carries: what a mechanism that can only raise the term
    # adds (vLLM's pinned copy segment, pinned_copy.py; a hybrid's first FULL capture, hybrid_graph_sample.py; V1's
    # unsaid cold compile and V2's figure said warm, compile_benchmark.py / v2_graphs.py; FlashInfer's sampler copies
    # taken off, calibration_activation.py), so the end of the interval with less KV takes it and the other does not;
    # 0: symmetric (`error_below_bytes`)
    raise_only_bytes: int = 0
    # its mirror, the error below the figure only, not in `error_bytes`: what a term charged at its centre may lack in
    # a start (vLLM's pinned copy segment on sm_120, charged at the centre: a start that does not pin it holds that
    # much more KV; pinned_copy.py `pinned_at_centre`, session 71 fixer H4; vLLM's sampler path unknown before the
    # start, the centre's native copies that FlashInfer's path does not hold, calibration_activation.py
    # `_sampler_path_error`; V2's unsaid compile state, charged cold, which a warm start does not pay,
    # v2_graphs.py `unsaid_warm`: session 72), so the capacity's high end takes it (the low end for CUDA's total) and
    # the other does not
    lower_only_bytes: int = 0
    # why the error differs above and below the figure, in words, where that is not a part that only raises or only
    # lowers the term (a class's held-out misses spread unevenly about its calibrated centre, kept in the two one-sided
    # fields all the same: vLLM's hybrid first FULL capture, hybrid_graph_sample.py); None: `one_sided_words` says a
    # part only raises it (`raise_only_bytes`) or only lowers it (`lower_only_bytes`)
    one_sided_why: str | None = None
    # the part of `bytes` only a launch's first pipeline stage holds (vLLM's cold compile's table copy above the
    # count: V1's, compile_benchmark.py; V2's, v2_graphs.py): a later stage's budget reads the term without it (`CalibratedFigures`); 0: every
    # stage holds the whole figure
    first_stage_only_bytes: int = 0

    @model_validator(mode="after")
    def _one_sided_within_its_error(self) -> TermEstimate:
        """The part only the side above carries is a part of the error: 0 ≤ `raise_only_bytes` ≤ `error_bytes`; the
        part only the side below carries is ≥ 0 (`lower_only_bytes`, beside `error_bytes`) (checked on construction and by `with_error`, which every change of a term's error goes through)."""
        if not 0 <= self.raise_only_bytes <= self.error_bytes:
            raise ValueError(f"{self.term.value}: raise_only_bytes {self.raise_only_bytes:,} is not within its "
                             f"error_bytes {self.error_bytes:,}")  # fmt: skip
        if self.lower_only_bytes < 0:
            raise ValueError(f"{self.term.value}: lower_only_bytes {self.lower_only_bytes:,} is below 0")
        if not 0 <= self.first_stage_only_bytes <= max(self.bytes, 0):
            raise ValueError(f"{self.term.value}: first_stage_only_bytes {self.first_stage_only_bytes:,} is not "
                             f"within its bytes {self.bytes:,}")  # fmt: skip
        return self

    @computed_field  # type: ignore[prop-decorator]
    @property
    def error_below_bytes(self) -> int:
        """How far the term may lie below its figure: `error_bytes` less what only raises it (`raise_only_bytes`), more
        what only lowers it (`lower_only_bytes`); written by every JSON view beside `error_bytes` (the side above), `plan --json` and `explain --json` alike."""
        return max(self.error_bytes - self.raise_only_bytes, 0) + self.lower_only_bytes

    def with_error(
        self, error_bytes: int, raise_only_bytes: int | None = None, lower_only_bytes: int | None = None,
        **update: object,
    ) -> TermEstimate:  # fmt: skip
        """This term with its error rewritten (and any other field in `update`): `error_bytes` above its figure, of
        which `raise_only_bytes` only above it, and `lower_only_bytes` below it only (None: the part it carried,
        kept), checked as construction checks it
        (pydantic's `model_copy` checks nothing): every change of a term's error goes through here, so none drops the
        one-sided part (tests/domain/test_one_sided_error.py greps for any that does not)."""
        unknown = sorted(set(update) - set(type(self).model_fields) | set(update) & ERROR_FIELDS)
        if unknown:  # frozen and ignoring extra keys, the model would drop them silently (review R5 C3-3)
            raise ValueError(f"{self.term.value}: with_error takes no {', '.join(unknown)} (not a settable field)")
        kept = self.raise_only_bytes if raise_only_bytes is None else raise_only_bytes
        lower = self.lower_only_bytes if lower_only_bytes is None else lower_only_bytes
        fields = {**{name: getattr(self, name) for name in type(self).model_fields}, **update}
        return TermEstimate.model_validate(
            {**fields, "error_bytes": error_bytes, "raise_only_bytes": kept, "lower_only_bytes": lower}
        )

    def model_copy(self: _Term, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> _Term:
        """pydantic's copy, refusing an update of the error (`ERROR_FIELDS`): a copy that sets `error_bytes` without
        `raise_only_bytes` drops the one-sided part and runs no check, so the error changes through `with_error`
        alone (review R5 C3-2: the AST guard sees literal updates only)."""
        if update is not None and ERROR_FIELDS & set(update):
            raise ValueError(f"{self.term.value}: set a term's error with with_error, not model_copy")
        return super().model_copy(update=update, deep=deep)

    def widened_by(
        self, error_bytes: int = 0, raise_only_bytes: int = 0, lower_only_bytes: int = 0, **update: object
    ) -> TermEstimate:
        """This term with errors that move with its own added to it (the sum, not the root of squares: the same
        fit erring alike, or a part known to add): `error_bytes` on both sides, `raise_only_bytes` above its figure
        only (a mechanism that can only raise the term), `lower_only_bytes` below it only (a part charged at the
        centre that a start may not hold: `lower_only_bytes`)."""
        return self.with_error(self.error_bytes + error_bytes + raise_only_bytes,
                               self.raise_only_bytes + raise_only_bytes, self.lower_only_bytes + lower_only_bytes,
                               **update)  # fmt: skip

    @property
    def in_host_share(self) -> bool:
        """A context term a unified host's assumed share holds (`CONTEXT_WITHIN_HOST`): not taken off the total again."""
        return self.within == CONTEXT_WITHIN_HOST

    @property
    def one_sided(self) -> bool:
        """Whether the term's error differs above its figure and below it (a part only raises or only lowers it)."""
        return self.error_below_bytes != self.error_bytes

    @property
    def error_said(self) -> str:
        """The term's error as every view writes it: '± 0.97 GiB', '+ 2.41 / − 0.97 GiB' where a part only raises the
        term (above its figure / below it; '+ 0.97 / − 2.41 GiB' where a part only lowers it), '' where it carries
        none."""
        if not self.one_sided:
            return f"± {gib(self.error_bytes)}" if self.error_bytes else ""
        return f"+ {gib_figure(self.error_bytes)} / − {gib(self.error_below_bytes)}"

    @property
    def one_sided_words(self) -> str | None:
        """What the one-sided part does to the interval, in the words every view says it; None: symmetric."""
        if not self.one_sided:
            return None
        raises = self.error_bytes > self.error_below_bytes  # the wider side above the figure (else below it)
        gives = self.more_is_more_kv == raises  # whether the wider side is the one with more KV
        wider, narrower = ("high", "low") if gives else ("low", "high")
        # the capacity's ends, named so (an input's range in `explain` runs the other way for a term that takes KV)
        why = self.one_sided_why or (f"a part only ever {'raises' if raises else 'lowers'} that term, and that part "
                                     f"only {'gives KV' if gives else 'takes KV away'}")  # fmt: skip
        return (f"one-sided: the error of {self.label} is {gib(self.error_bytes)} above its figure and "
                f"{gib(self.error_below_bytes)} below it ({why}): the capacity's {wider} end takes the wider side, its "
                f"{narrower} end the narrower")

    def error_towards(self, side: Literal["low", "high"]) -> int:
        """The term's error towards the capacity's `side` end: the low end (less KV) takes a term that takes from KV
        at its figure + its error above, CUDA's total (`more_is_more_kv`) at its figure − its error below; the high
        end the other sides."""
        above = (side == "low") != self.more_is_more_kv
        return self.error_bytes if above else self.error_below_bytes

    def plus(
        self, added_bytes: int = 0, error_bytes: int = 0, *, why: str | None, beside: bool = False,
        raise_only: bool = False,
    ) -> TermEstimate:  # fmt: skip
        """This term with `added_bytes` more and `error_bytes` in its error, as independent errors add (the root of
        squares), its basis saying `why` after a '; ' (None: its basis says it already). `beside`: an error the
        engine's rules add beside the fitted one, also kept in `beside_error_bytes` (the root of squares) so that a plan
        re-reading the fitted error keeps it (`with_fitted_error`, which drops an error added without it).
        `raise_only`: the error only raises the term (the side below keeps its error: `raise_only_bytes`)."""
        error = round(math.hypot(self.error_bytes, error_bytes)) if error_bytes else self.error_bytes
        below = self.error_below_bytes
        below = round(math.hypot(below, error_bytes)) if error_bytes and not raise_only else below
        # the side below wider than above (`lower_only_bytes`) keeps its excess as the part below only
        update: dict[str, object] = {"bytes": self.bytes + added_bytes}
        if beside:
            update["beside_error_bytes"] = round(math.hypot(self.beside_error_bytes, error_bytes))
        if why is not None:
            update["basis"] = f"{self.basis}; {why}"
        return self.with_error(error, max(error - below, 0), max(below - error, 0), **update)


class CalibratedFigures(BaseModel):
    """The figures the engines' budgets read where nothing measured them (`MeasuredInputs.calibrated`)."""

    model_config = ConfigDict(frozen=True)

    cuda_total_bytes: int | None = None
    cuda_total_source: TermSource = "assumed"
    free_before_load_bytes: int | None = None
    free_before_load_source: TermSource = "assumed"
    non_kv_bytes: int | None = None  # the runtime terms together (vLLM's non-KV, TensorRT-LLM's reserve)
    non_kv_source: TermSource = "assumed"
    activation_bytes: int | None = None  # the activation term alone, of non_kv_bytes (vLLM v0.34.0's sizing margin)
    weights_extra_bytes: int = 0  # added to the predicted weights of every rank (a node's own measure, a bound)
    weights_source: TermSource | None = None  # the weights term's, where the calibration estimated it
    # the pipeline stage whose load a node's stored weights are (`NodeMeasure.weights_stage`): every other stage's
    # figure is derived from it (calibrated, not measured); None: every stage's
    weights_stage: int | None = None
    # what a worker holds before its weights (CUDA context, NCCL) where the budget reads no free memory
    # before load (vLLM): the engine's context fit, read by the ledger as each rank's context
    context_bytes: int | None = None
    context_source: TermSource = "assumed"
    context_error_bytes: int = 0
    # what a unified-memory host is assumed to hold, taken from the free memory before load above (0: a GPU of its own)
    host_held_bytes: int = 0
    # that share holds `context_bytes` (its readings were taken after the engine's context): the free memory above is
    # CUDA's total less the share alone, and the context is not the total less it (`PreloadEstimate.context_in_host`)
    context_in_host: bool = False
    # the part of `non_kv_bytes` only the first pipeline stage holds (`TermEstimate.first_stage_only_bytes`, every
    # runtime term's): the ledger solves every later stage without it
    first_stage_only_bytes: int = 0
    # of it, the activation term's own part (V1's copy sits there, V2's on the CUDA-graphs term): what a later
    # stage takes off `activation_bytes`, never the whole sum (that would take V2's graphs copy off the activation)
    first_stage_only_activation_bytes: int = 0

    def later_stage(self) -> CalibratedFigures:
        """These figures as a pipeline stage after the first reads them: the runtime memory without what only the
        first stage holds (vLLM's cold compile's table copy, V1's on the activation term (compile_benchmark.py), V2's on
        the CUDA-graphs term (v2_graphs.py): only the first stage's forward embeds the ids). The activation term loses
        only its own part, non-KV the whole."""
        less = self.first_stage_only_bytes
        if not less or self.non_kv_bytes is None:
            return self
        own = self.first_stage_only_activation_bytes
        activation = None if self.activation_bytes is None else self.activation_bytes - own
        return self.model_copy(update={"non_kv_bytes": self.non_kv_bytes - less, "activation_bytes": activation,
                                       "first_stage_only_bytes": 0, "first_stage_only_activation_bytes": 0})  # fmt: skip


_STRENGTH: dict[TermSource, int] = {"assumed": 0, "calibrated": 1, "measured": 2}


def weakest(sources: list[TermSource]) -> TermSource:
    """The source of a figure made of several terms: its weakest term's ('assumed' for none)."""
    return min(sources, key=lambda source: _STRENGTH[source]) if sources else "assumed"


class PreloadEstimate(BaseModel):
    """Every term one launch's plan rests on, as the engine's calibration gives them."""

    model_config = ConfigDict(frozen=True)

    engine: str
    terms: tuple[TermEstimate, ...]
    node_note: str | None = None  # "calibrated on this node, 2026-11-30" when the store was used
    # what the calibrated weights term holds beyond the ledger's weights book (a cast at load, the engine
    # loader's own buffers): the budget adds it to every rank's book; 0 where the weights were measured
    weights_beside_book_bytes: int = 0
    weights_stage: int | None = None  # the stage whose load the node's stored weights are (None: every stage's)
    # the engine's context before load where its budget has no such term (vLLM's worker): not in the
    # interval (the capacity does not rest on it), but each rank's predicted context bytes
    context: TermEstimate | None = None
    # the terms' errors together × its factor reach the engine's figure for 90 % of logs from new sources
    # (coverage.py); None: unscaled
    scale: IntervalScale | None = None
    # what the host holds of the GPU's memory: a unified-memory host's assumption, a desktop's share (not modelled)
    unified_host: UnifiedHost | None = None
    desktop: DesktopHost | None = None
    # where the launch lies outside what the engine's corpus covers (a GPU model, a release band, an architecture
    # class no record had): the share of the plan's figure its ends widen by (extrapolation.py); None: inside
    extrapolation: ExtrapolationWidening | None = None

    @property
    def interval_scale(self) -> float:
        """The factor on the terms' errors together (1 where no scale was measured)."""
        return self.scale.factor if self.scale is not None else 1.0

    @property
    def scale_basis(self) -> str | None:
        """The scale in words, as a plan states it (None: unscaled)."""
        return self.scale.basis if self.scale is not None else None

    @property
    def host_notes(self) -> tuple[str, ...]:
        """What the plan says about memory the host holds, in words."""
        return tuple(host.note for host in (self.unified_host, self.desktop) if host is not None)

    @property
    def unmodelled_host_bytes(self) -> int:
        """What a share the plan does not model (a desktop's) may take from the free memory before the load: the
        low end of the interval takes it, the centre and the high end do not (it only ever takes memory)."""
        return self.desktop.low_end_bytes if self.desktop is not None else 0

    @property
    def unmodelled_runtime_bytes(self) -> int:
        """What a desktop may take while an engine that sizes from the total profiles (vLLM's non-torch memory):
        the low end's runtime memory takes it, the centre and the high end do not; 0 where the runtime memory was
        measured (what the desktop took is in it) or no desktop start measured it (`DesktopHost.profile_bytes`)."""
        return self.desktop.profile_bytes if self.desktop is not None else 0

    @property
    def unmodelled_given_back_bytes(self) -> int:
        """What a desktop may give back while an engine that sizes from the total profiles: the high end's runtime
        memory is less by it (it enters vLLM's non-KV memory with its sign), the centre and the low end are not; 0
        where the runtime memory was measured or no desktop start measured it (`DesktopHost.given_back_bytes`)."""
        return self.desktop.given_back_bytes if self.desktop is not None else 0

    @property
    def desktop_term(self) -> TermEstimate | None:
        """What the low end takes for a desktop sharing the card (before the load, and during an engine's profile), and
        what the high end gives back for it, as a term of the interval (its error the wider side), so the plan can name
        it where it widens the interval most; None: it moves neither end."""
        taken = self.unmodelled_host_bytes + self.unmodelled_runtime_bytes
        back = self.unmodelled_given_back_bytes
        if self.desktop is None or not (taken or back):
            return None
        return TermEstimate(term=Term.DESKTOP, label=self.desktop.label, bytes=0, error_bytes=max(taken, back),
                            source="calibrated", basis=self.desktop.note)  # fmt: skip

    def term(self, term: Term) -> TermEstimate | None:
        return next((estimate for estimate in self.terms if estimate.term is term), None)

    @property
    def context_in_host(self) -> bool:
        """A unified host's share is charged and holds this plan's context term (the share's readings were taken after
        the engine's context was made, host_memory.py: the context term says so, `CONTEXT_WITHIN_HOST`), so the free
        memory before the load is CUDA's total less the share alone. Not where the host term was measured 0: the free
        memory before the load given or stored holds the share, and the context is the total less it."""
        host, context = self.term(Term.HOST), self.term(Term.CONTEXT)
        return host is not None and context is not None and (host.source != "measured" or host.bytes > 0)

    @property
    def dominant(self) -> TermEstimate | None:
        """The term whose error is the largest (the one to measure first)."""
        uncertain = [estimate for estimate in self.terms if max(estimate.error_bytes, estimate.error_below_bytes) > 0]
        return max(uncertain, key=lambda e: max(e.error_bytes, e.error_below_bytes)) if uncertain else None

    @property
    def beyond_support(self) -> tuple[str, ...]:
        """Each widening for extrapolation: a term whose fit holds no record at this plan's GPU model or release, and
        the plan's own where the launch lies outside what the engine's corpus covers (`extrapolation`)."""
        own = (self.extrapolation.words,) if self.extrapolation is not None else ()
        return (*(estimate.beyond for estimate in self.terms if estimate.beyond), *own)

    @property
    def combined_error_bytes(self) -> int:
        """The terms' errors together, as independent errors add (the root of their squares), × the engine's
        interval scale: what blind plans of logs from sources left out needed to hold (`coverage.py`); the wider
        side's where a term's error is one-sided (`combined_error_at`)."""
        return max(self.combined_error_at("low"), self.combined_error_at("high"))

    def combined_error_at(self, side: Literal["low", "high"]) -> int:
        """The terms' errors towards the capacity's `side` end together (`TermEstimate.error_towards`), as
        `combined_error_bytes` adds them: the same at both ends unless a term's error only raises it."""
        errors = (estimate.error_towards(side) for estimate in self.terms)
        return round(self.interval_scale * math.sqrt(sum(error**2 for error in errors)))

    @property
    def one_sided(self) -> tuple[TermEstimate, ...]:
        """The terms whose error only one end of the interval takes in part (`TermEstimate.raise_only_bytes`,
        `lower_only_bytes`)."""
        return tuple(estimate for estimate in self.terms if estimate.one_sided)

    def _runtime_at(self, side: Literal["central", "low", "high"], runtime: int, weights: int) -> int:
        """An end's runtime memory beside the weights with what a desktop moves it by during the profile: more at the
        low end; less at the high end, below 0 where the desktop gave back more than the runtime terms charge (the
        RTX 3060 desktop start's −0.43 GiB), never below −`weights`: a start whose free memory after the profile
        exceeds its first snapshot's fails vLLM's assert ('Error in memory profiling', v1/worker/gpu_worker.py:190
        at v0.9.0, :332 at v0.12.0, :535 at v0.27.1)."""
        if side == "low":
            return runtime + self.unmodelled_runtime_bytes
        back = self.unmodelled_given_back_bytes if side == "high" else 0
        return max(runtime - back, -weights) if back else runtime

    def figures(self, side: Literal["central", "low", "high"] = "central") -> CalibratedFigures:
        """The budget's figures at the centre or at one end of the interval.

        At an end each term moves by its error × (combined ÷ Σ errors) towards less KV (`low`) or more
        (`high`), so that the moves add up to the combined error rather than to the worst case of all; no term
        moves below 0 bytes (`_end_moves`).
        """
        sign = {"central": 0, "low": -1, "high": 1}[side]
        moves = _end_moves(self.terms, self.combined_error_at("high" if sign > 0 else "low"), sign)
        by_term = {estimate.term: estimate.bytes + move for estimate, move in zip(self.terms, moves, strict=True)}
        source = {estimate.term: estimate.source for estimate in self.terms}
        cuda_total = by_term.get(Term.CUDA_TOTAL)
        context = by_term.get(Term.CONTEXT)
        runtime = [term for term in RUNTIME_TERMS if term in by_term]
        weights = self.term(Term.WEIGHTS)
        free_known = cuda_total is not None and context is not None
        host = by_term.get(Term.HOST, 0)  # a unified-memory host's share, its context in it: free before the load
        host += self.unmodelled_host_bytes if side == "low" else 0
        free_sources = [source[term] for term in (Term.CUDA_TOTAL, Term.CONTEXT, Term.HOST) if term in source]
        held = self.term(Term.CONTEXT) or self.context
        within = self.context_in_host  # the host's share holds the context: taken off once, in the share
        return CalibratedFigures(
            cuda_total_bytes=cuda_total,
            cuda_total_source=source.get(Term.CUDA_TOTAL, "assumed"),
            free_before_load_bytes=cuda_total - (0 if within else context) - host
            if cuda_total is not None and context is not None
            else None,
            free_before_load_source=weakest(free_sources) if free_known else "assumed",
            non_kv_bytes=self._runtime_at(side, sum(by_term[term] for term in runtime), by_term.get(Term.WEIGHTS, 0))
            if runtime
            else None,
            non_kv_source=weakest([source[term] for term in runtime]),
            activation_bytes=by_term.get(Term.ACTIVATION),
            weights_extra_bytes=by_term[Term.WEIGHTS] - weights.bytes + self.weights_beside_book_bytes
            if weights is not None
            else 0,
            weights_source=weights.source if weights is not None else None,
            weights_stage=self.weights_stage,
            context_bytes=held.bytes if held is not None else None,
            context_source=held.source if held is not None else "assumed",
            context_error_bytes=held.error_bytes if held is not None else 0,
            host_held_bytes=by_term.get(Term.HOST, 0),
            context_in_host=within,
            # at an end, never more than the end's own figure of the term (a later stage's term stays ≥ 0)
            first_stage_only_bytes=sum(min(estimate.first_stage_only_bytes, max(by_term[estimate.term], 0))
                                       for estimate in self.terms if estimate.term in RUNTIME_TERMS),
            first_stage_only_activation_bytes=sum(
                min(estimate.first_stage_only_bytes, max(by_term[estimate.term], 0))
                for estimate in self.terms if estimate.term is Term.ACTIVATION),
        )


def _end_moves(terms: tuple[TermEstimate, ...], combined_bytes: int, sign: int) -> list[int]:
    """Each term's signed move at an interval end (`sign` −1 low, +1 high, 0 the centre): the combined error shared
    in proportion to the terms' errors, no term moving below 0 bytes nor beyond its own error (× the scale, where
    the scale asks more of every term). A term a share would
    take below 0 (vLLM's activation peak of 1.04 GiB ± 3.52 GiB on gpt-oss-120b at TP 8: −0.35 GiB of non-KV memory
    at the high end, the trial's) stops at 0 and its remainder is shared among the others, so the end still moves
    by the combined error the interval scale was measured for as far as the terms' own errors carry it. Each term's
    error is its error towards that end (`TermEstimate.error_towards`: a part that only raises it, at the low end)."""
    if not sign:
        return [0] * len(terms)
    directions = [sign * (1 if estimate.more_is_more_kv else -1) for estimate in terms]
    errors = [estimate.error_towards("high" if sign > 0 else "low") for estimate in terms]
    total_error = sum(errors)
    unit = max(combined_bytes / total_error, 1.0) if total_error else 0.0  # a scale above 1 moves each further
    limits = [error * unit for error in errors]
    caps = [min(limit, max(e.bytes, 0)) if d < 0 else limit for e, limit, d in zip(terms, limits, directions, strict=True)]
    moves: list[float] = [0.0] * len(terms)
    free = [i for i, error in enumerate(errors) if error > 0]
    left = float(combined_bytes)
    while free and left > 0:
        share = left / sum(errors[i] for i in free)
        capped = [i for i in free if errors[i] * share > caps[i]]
        if not capped:
            for i in free:
                moves[i] = errors[i] * share
            break
        for i in capped:  # at its floor or its own error: fixed there, the rest shared again
            moves[i] = caps[i]
            left -= caps[i]
            free.remove(i)
    return [direction * round(move) for direction, move in zip(directions, moves, strict=True)]

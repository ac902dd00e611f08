"""The range of one budget input a log lacks, from the calibration: what `explain --gpu` estimates.

A log that lacks an input (SGLang's free memory before the load, vLLM's non-KV memory) is rebuilt with
that input estimated. The estimate is the plan's (`preload_estimate`): its central value is the calibrated
terms', and its half-width the terms' held-out errors together (the root of their squares; each error is
the 90th percentile of the leave-one-source-out error the corpus measured for that term's fit, for the
engine, era, GPU and TP at hand), × the engine's interval scale (`coverage.py`, docs/calibration.md). A term the
calibration assumes (a context no fit reaches: 0.75 GiB + 0.75 GiB per doubling of TP, ± its measured error) is the
plan's figure all the same: the range is made of it and says so (source "assumed"), never of a number of its own.
The range is what explain says of the input; its capacity ends are not solved at the range's ends but at plan's
(`explain_estimate.plans_ends`: `PreloadEstimate.figures` over this input's terms and the others the rebuild still
estimates), so one launch has one interval (session 72; it was 35,477 – 113,534 against plan's 35,584 – 119,088 on an
L4, docs/engines/vllm.md §9).
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict

from kvtop.domain.calibration.terms import (
    RUNTIME_TERMS,
    PreloadEstimate,
    Term,
    TermEstimate,
    TermSource,
    weakest,
)
from kvtop.domain.wording import gib, gib_about


class InputRange(BaseModel):
    """An input's central value and interval, where the figures come from, and how it was made."""

    model_config = ConfigDict(frozen=True)

    low_bytes: int
    value_bytes: int
    high_bytes: int
    source: TermSource  # the weakest of the terms it is made of
    basis: str  # each term, its figure, its source and its error, in words

    @property
    def error_bytes(self) -> int:
        return max(self.value_bytes - self.low_bytes, self.high_bytes - self.value_bytes)


def _said(estimate: TermEstimate) -> str:
    said = estimate.basis if estimate.basis.startswith(estimate.source) else f"{estimate.source}: {estimate.basis}"
    about = f"{gib(estimate.bytes)} {estimate.error_said}" if estimate.one_sided else gib_about(estimate.bytes, estimate.error_bytes)
    return f"{estimate.label} {about} ({said})"


def _combined(terms: list[TermEstimate], scale: float, side: Literal["low", "high"]) -> int:
    """The terms' errors towards the capacity's `side` end (`TermEstimate.error_towards`: a part that only raises a
    term is the low end's, one that only lowers it the high end's) together (the root of their squares) × the engine's interval scale (`coverage.py`)."""
    return round(scale * math.sqrt(sum(term.error_towards(side) ** 2 for term in terms)))


def _one_sided(terms: list[TermEstimate]) -> str:
    """'; one-sided: …' for each term whose error only one end takes in part, '' where none."""
    return "".join(f"; {words}" for term in terms if (words := term.one_sided_words))


def free_before_load_range(estimate: PreloadEstimate) -> InputRange | None:
    """The memory free before the weights load, as `plan` charges it (`PreloadEstimate.figures`): CUDA's total less
    the CUDA context and NCCL (on a unified-memory host, the host's assumed share, the context within it), each term as the plan's
    calibration gives it, calibrated or assumed; the interval their errors together × the engine's interval scale.
    None where the plan has no such terms (its engine reads no free memory before load). A desktop sharing the card
    (`unmodelled_host_bytes`) lowers the low end only, as it does `plan`'s."""
    total, context, host = estimate.term(Term.CUDA_TOTAL), estimate.term(Term.CONTEXT), estimate.term(Term.HOST)
    if total is None or context is None:
        return None
    # a context a unified host's assumed share holds is within it, not taken off again (`context_in_host`)
    terms = [total, *([] if estimate.context_in_host else [context]), *([host] if host is not None else [])]
    central = max(estimate.figures("central").free_before_load_bytes or 0, 0)  # the plan's own figure
    # the free memory is the capacity's way round: its low end is the capacity's low end's
    low, high = (_combined(terms, estimate.interval_scale, side) for side in ("low", "high"))
    desktop = f"; the low end less what a desktop held ({gib(estimate.unmodelled_host_bytes)})"
    return InputRange(
        low_bytes=max(central - low - estimate.unmodelled_host_bytes, 0),
        value_bytes=central,
        high_bytes=max(central + high, 0),
        source=weakest([term.source for term in terms]),
        basis=" − ".join(_said(term) for term in terms)
        + (f" ({context.label}, {gib(context.bytes)}, within it)" if estimate.context_in_host else "")
        + "; the interval is their held-out errors together"
        + _one_sided(terms) + (desktop if estimate.unmodelled_host_bytes else ""),
    )


def runtime_range(estimate: PreloadEstimate) -> InputRange | None:
    """The runtime memory charged besides the weights (vLLM's activation peak, non-torch memory and, where
    charged, CUDA graphs), each as the calibration gives it; None where none of them is calibrated."""
    terms = [term for term in estimate.terms if term.term in RUNTIME_TERMS]
    if not any(term.source != "assumed" for term in terms):
        return None
    central = sum(term.bytes for term in terms)
    # the runtime memory is against the capacity: its high end is the capacity's low end's
    most, least = (_combined(terms, estimate.interval_scale, side) for side in ("low", "high"))
    desktop = estimate.unmodelled_runtime_bytes  # the capacity's low end: the most runtime memory
    back = estimate.unmodelled_given_back_bytes  # the capacity's high end: the least
    return InputRange(
        low_bytes=max(central - least - back, 0),
        value_bytes=central,
        high_bytes=central + most + desktop,
        source=weakest([term.source for term in terms]),
        basis=" + ".join(_said(term) for term in terms) + "; the interval is their held-out errors together"
        + _one_sided(terms)
        + (f"; the high end more what a desktop left beside them during the profile ({gib(desktop)})" if desktop else "")
        + (f"; the low end less what a desktop gave back during the profile ({gib(back)})" if back else ""),
    )


def weights_range(estimate: PreloadEstimate) -> InputRange | None:
    """The weights a start holds, as `plan` charges them: the weights term (the book and what the engine's load holds
    beside it, SGLang's rope cache), within its held-out error × the engine's interval scale; None without one."""
    weights = estimate.term(Term.WEIGHTS)
    if weights is None:
        return None
    most, least = (_combined([weights], estimate.interval_scale, side) for side in ("low", "high"))
    return InputRange(
        low_bytes=max(weights.bytes - least, 0),
        value_bytes=weights.bytes,
        high_bytes=weights.bytes + most,
        source=weights.source,
        basis=f"{_said(weights)}; the interval is its held-out error{_one_sided([weights])}",
    )

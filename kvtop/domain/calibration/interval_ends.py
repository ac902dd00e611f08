"""A launch's interval ends, one function for every view: `plan` (`estimate.planned_capacity`) and `explain --gpu`
(`explain_estimate`) both read their ends here, so one launch has one interval."""

from __future__ import annotations

from kvtop.domain.calibration.extrapolation import ExtrapolationWidening


def interval_ends(values: list[int], extrapolation: ExtrapolationWidening | None) -> tuple[int, int]:
    """A launch's interval ends from a figure (its tokens, its KV budget) solved at the centre (`values[0]`) and at
    the two ends of its terms' errors (`PreloadEstimate.figures`): the least and the most of them, each end widened
    where the launch lies outside the engine's corpus (`extrapolation`, None: inside). `plan` and `explain --gpu`
    both read their ends here, so one launch has one interval (explain's narrower only by the terms its log measures)."""
    if extrapolation is not None:  # outside the corpus: each end takes its share beside the terms' errors
        values = _widened(values, extrapolation)
    return min(values), max(values)


def _widened(values: list[int], widening: ExtrapolationWidening) -> list[int]:
    """The centre (`values[0]`) and both ends of an interval, each end widened by the widening's share of the centre as
    an independent error (the root of squares with its own half-width)."""
    central, extra = values[0], widening.bytes_for(values[0])
    return [central, widening.widen(central, min(values), extra, upward=False),
            widening.widen(central, max(values), extra, upward=True)]  # fmt: skip

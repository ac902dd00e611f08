"""What if: the same engine on the same GPUs with one thing changed, re-solved by its own rules.

`Replay(ledger)` holds a ledger's model, GPU and measured inputs; `solve` re-solves it with other
settings, free memory moved, weights moved or another KV memory. The planner, diagnose's fixes, the
capacity waterfall and `kvtop plan` all price a change this way, on the same measured state, so the
figure a fix promises is the figure the planner shows for it.
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.calibration.estimate import calibrated_ledger
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import KvtopError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger import Ledger, predict, settings_key
from kvtop.domain.memo import Memo

#: Re-solves by (ledger, question): the capacity waterfall asks its questions again every tick of the same
#: clean ledger (the predictor hands back the same object while the launch and GPUs stay), the planner and
#: diagnose's fixes ask the same questions again; each is solved once while it is remembered.
_SOLVED: Memo[Ledger | None] = Memo(size=256)


class Replay:
    """Re-solve a ledger with one thing changed; everything else as the ledger had it."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.measured = ledger.measured  # what was measured, and the calibrated figures of its launch
        self.load_mtp = ledger.load_mtp

    @property
    def free_before_load_bytes(self) -> int:
        """The pre-load free memory (min over ranks) the ledger assumed."""
        return self.measured.free_before_load(self.ledger.gpu_total_bytes)

    @property
    def weights_bytes(self) -> int:
        """The resident weights per rank the ledger was solved with (measured, else predicted)."""
        return self.measured.weights_bytes or self.ledger.weights_bytes

    def solve(
        self,
        settings: LaunchSettings | None = None,
        *,
        free_shift: int = 0,
        weights_shift: int = 0,
        available_kv_bytes: int | None = None,
        new_layout: bool = False,
    ) -> Ledger | None:
        """The ledger with `settings`, free memory moved by `free_shift`, weights by `weights_shift`.

        `available_kv_bytes` replaces the engine's KV memory where it budgets one (vLLM); `new_layout`
        drops the measurements that belong to the current layout (weights, free after load, KV memory).
        Other settings or another layout re-estimate the pre-load terms the launch did not measure (the
        calibrated estimate of the new launch: its context by TP, its profiled runtime by batch); the
        ledger's own settings keep its figures, so an unchanged replay gives the ledger back.
        """
        unchanged = settings is None or settings == self.ledger.settings
        if unchanged and not (free_shift or weights_shift or new_layout) and available_kv_bytes is None:
            return self.ledger  # nothing changed: the ledger itself, not a re-solve of it
        launch = settings or self.ledger.settings
        key = (id(self.ledger), settings_key(launch), free_shift, weights_shift, available_kv_bytes, new_layout)
        return _SOLVED.get(
            key, self.ledger, lambda: self._solve(launch, free_shift, weights_shift, available_kv_bytes, new_layout)
        )

    def _solve(
        self, launch: LaunchSettings, free_shift: int, weights_shift: int, available_kv_bytes: int | None,
        new_layout: bool,
    ) -> Ledger | None:  # fmt: skip
        m = self.measured
        if new_layout:
            m = MeasuredInputs(
                gpu_total_bytes=m.gpu_total_bytes, free_before_load_bytes=m.free_before_load_bytes,
                calibrated=m.calibrated,
            )  # fmt: skip
        recalibrate = m.calibrated is not None and (new_layout or launch != self.ledger.settings)
        update: dict[str, int] = {}
        if free_shift:
            update["free_before_load_bytes"] = self.free_before_load_bytes + free_shift
        if m.free_after_load_bytes is not None and (free_shift or weights_shift):
            update["free_after_load_bytes"] = m.free_after_load_bytes + free_shift - weights_shift
        if weights_shift:
            update["weights_bytes"] = self.weights_bytes + weights_shift
            if m.available_kv_bytes is not None:
                update["available_kv_bytes"] = m.available_kv_bytes - weights_shift
        if available_kv_bytes is not None:
            update["available_kv_bytes"] = available_kv_bytes
        try:
            if recalibrate:
                return calibrated_ledger(
                    self.ledger.model, launch, gpu_total_bytes=self.ledger.gpu_total_bytes,
                    gpu_name=self.ledger.gpu_name, measured=m.model_copy(update={**update, "calibrated": None}),
                    load_mtp=self.load_mtp, draft=self.ledger.draft, version=self.ledger.version,
                )  # fmt: skip
            return predict(
                self.ledger.model,
                launch,
                gpu_total_bytes=self.ledger.gpu_total_bytes,
                gpu_name=self.ledger.gpu_name,
                measured=m.model_copy(update=update),
                load_mtp=self.load_mtp,
                version=self.ledger.version,
                draft=self.ledger.draft,
            )
        except KvtopError:
            return None  # the what-if is not a valid layout: it gains nothing

    def capacity(
        self,
        settings: LaunchSettings | None = None,
        *,
        free_shift: int = 0,
        weights_shift: int = 0,
        available_kv_bytes: int | None = None,
    ) -> int:
        """Token capacity per rank of `solve(...)`; 0 when it does not fit or is not a valid layout."""
        solved = self.solve(
            settings,
            free_shift=free_shift,
            weights_shift=weights_shift,
            available_kv_bytes=available_kv_bytes,
        )
        return solved.token_capacity if solved else 0

    def capacity_at_least_free(self, free: Mapping[int, int]) -> int:
        """Tokens per rank a restart gets with `free` bytes free on each GPU, for an engine that sizes
        every rank from the least free GPU of the world (`EngineRules.sizes_every_rank_from_least_free`)."""
        return self.capacity(free_shift=min(free.values()) - self.free_before_load_bytes)

    def at_least_free(self, free: Mapping[int, int], settings: LaunchSettings | None = None) -> Ledger | None:
        """The ledger a restart with `settings` solves with `free` bytes free on each GPU, for an engine
        that sizes every rank from the least free GPU (None: not a valid launch)."""
        return self.solve(settings, free_shift=min(free.values()) - self.free_before_load_bytes)

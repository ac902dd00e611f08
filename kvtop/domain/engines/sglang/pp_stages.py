"""Pipeline stages whose load lines a log lacks: SGLang's free memory is the least over every stage.

SGLang reads both free-memory figures with `get_available_gpu_memory(..., distributed=get_world_group()
.world_size > 1, cpu_group=get_world_group().cpu_group)`: an all-reduce MIN over the world group, i.e. over
every TP rank of every pipeline stage (python/sglang/srt/model_executor/model_runner.py, `init_torch_distributed`
→ `pre_model_load_memory`, and `profile_max_num_token`; docs/engines/sglang.md §2). A log (or an excerpt) that
shows the `Load weight` lines of fewer stages than `--pp-size` lacks the others' figures. Where the logged pool
is larger than the stages shown give, only a lower pre-load free memory on a hidden stage (a smaller reserve,
`pre × (1 − mem_fraction_static)`) explains it: that least is the estimated input (issue #28 item 7), between
the least free memory after the load (every stage's pre-load figure is at least its post-load one; the
post-load least is taken as the shown stage's) and the shown stage's pre-load figure.
"""

from __future__ import annotations

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.sglang.log_records import SglangRankLog
from kvtop.domain.explain_estimate import EstimateRun, rebuild_with_estimate
from kvtop.domain.explanation import Ends, EstimatedInput, Explanation
from kvtop.domain.wording import counted, gib


def stages_shown(log: EngineLog) -> set[int]:
    """The pipeline stages whose `Load weight` lines the log holds (an untagged rank counts as stage 0)."""
    return {rank.rank.pp or 0 for rank in log.ranks(SglangRankLog) if rank.weight_loads}


def hidden_stage_reserve(
    result: Explanation, log: EngineLog, run: EstimateRun, before: Ends, after: Ends
) -> Explanation:
    """A pool larger than the shown stages' free memory gives, at PP > 1 with stages' load lines missing:
    rebuilt with the world group's least pre-load free memory estimated within its bounds (module docstring)."""
    stages, shown = run.settings.pp, stages_shown(log)
    logged, most = result.logged.token_capacity, result.token_capacity_max
    if stages < 2 or len(shown) >= stages or result.verdict != "mismatch" or logged is None or most is None:
        return result
    if logged <= most:
        return result
    hidden = stages - len(shown)
    names = ", ".join(f"PP{s}" for s in sorted(shown))
    estimate = EstimatedInput(
        field="free_before_load_bytes",
        label="free memory before the weights load (the least over all stages)",
        low_bytes=min(after[1], before[1]),
        value_bytes=before[1],
        high_bytes=before[1],
        source="assumed",
        basis=(
            f"SGLang takes the least over every stage (an all-reduce MIN over the world group); the log shows "
            f"{names}'s {gib(before[1])} and not the `Load weight` lines of the other {counted(hidden, 'stage')}, so "
            f"the least is at most that and at least the {gib(after[1])} free after the load (taken as the least after "
            "it)"
        ),
    )
    note = (
        f"the logged {logged:,} tokens are more than {names}'s own free memory gives ({result.token_capacity_min:,}–"
        f"{most:,}): a stage whose load lines the log lacks had less free memory before the load"
    )

    def at(pre: int) -> MeasuredInputs:
        return MeasuredInputs(
            free_before_load_bytes=pre, free_after_load_bytes=after[1], gpu_total_bytes=run.gpu_total_bytes
        )

    return rebuild_with_estimate("sglang", result.logged, run, estimate, at, (*result.notes, note))

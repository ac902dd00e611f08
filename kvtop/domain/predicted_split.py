"""The GPU as a rank's prediction splits it (`RankView.predicted_split`), the one set of figures the predicted memory
bar draws: apart from `node` so that the rank's view stays one module under the size bound."""

from __future__ import annotations

from typing import NamedTuple


class PredictedSplit(NamedTuple):
    """The GPU as the prediction has it, summing to its total: the predicted worker (weights with resident terms | KV
    pool | the rest), what NVML counts beyond it now, taken as given, and `free` (`RankView.predicted_free_bytes`)."""

    weights_bytes: int
    kv_pool_bytes: int
    runtime_bytes: int  # the worker's rest: runtime reserve and the context NVML counts in the process
    server_bytes: int  # engine servers' own memory
    driver_bytes: int  # driver reserved and memory no process holds (negative where the processes overcount)
    foreign_bytes: int  # foreign and unattributed processes
    orphan_bytes: int  # engine workers whose server is gone
    free_bytes: int

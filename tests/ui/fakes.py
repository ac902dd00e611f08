"""Hand-built node snapshots and fake sources for the UI tests (no NVML, no engine, no thread tricks).

The node is Meta-Llama-3-70B served by SGLang at TP8 on eight H100s. Predictions come from the
real `predict()` on the real config in tests/data; observed bytes sit close to the prediction, as
a healthy engine's do. Variants add a 6 GiB co-tenant on GPU 3, or lose GPU 5.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from kvtop.domain.calibration.estimate import calibrated_ledger
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.launch import LaunchSettings, parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.node import NodeSnapshot, build_snapshot
from kvtop.domain.observe import (
    EndpointState,
    EngineInstance,
    EngineLive,
    EngineRank,
    GpuObservation,
    GpuProcess,
    GpuState,
    MemoryApi,
    NodeObservation,
    ProcessRole,
    ReportedVersion,
)
from kvtop.domain.process_identity import ProcessIdentity
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.calibrated_figures import sglang_context_bytes
from tests.data_paths import CONFIGS

LLAMA_70B_CONFIG = CONFIGS / "meta-llama--Meta-Llama-3-70B.json"
#: The engine's `--model-path` in the fixtures: the shipped preset of the same config, so that
#: screens showing the model reference do not depend on where the checkout lives.
LLAMA_70B_REF = "llama-3-70b"

MIB = 1 << 20
H100_TOTAL_BYTES = 81559 * MIB  # what the driver reports for an H100 80GB HBM3
H100_NAME = "NVIDIA H100 80GB HBM3"
DRIVER_RESERVED_BYTES = 512 * MIB  # NVML v2 `reserved`
UNTOUCHED_RESERVE_BYTES = 2 * GIB  # runtime reserve a healthy worker has not claimed yet
CO_TENANT_BYTES = 6 * GIB
# The planner's pre-load terms on an H100, from the fitted constants (tests/calibrated_figures.py): CUDA's total, the
# mean of the H100 totals the corpus's logs printed; SGLang's CUDA context and NCCL at TP 8 on NVLink GPUs
SGLANG_TP8_CONTEXT_BYTES = sglang_context_bytes(8)
TAKEN_AT = 1_750_000_000.0
SERVER_PID = 4242
ENGINE_ID = f"sglang:{SERVER_PID}"
LOST_MESSAGE = "GPU has fallen off the bus (Xid 79): reset the GPU or reboot the node"


def llama_model() -> ModelSpec:
    return load_model(str(LLAMA_70B_CONFIG))


def llama_settings(tp: int = 8) -> LaunchSettings:
    # an SGLang 0.5.9 server, as the demo scenarios run (its automatic fraction: 0.818 at TP8 on H100)
    return parse_flags("sglang", ["--model-path", LLAMA_70B_REF, "--tp-size", str(tp), "--engine-version", "0.5.9"])


def llama_plan(tp: int = 8, measured: MeasuredInputs = MeasuredInputs()) -> Ledger:
    """What `kvtop plan` and the planner give for the fake node's launch: every pre-load term that nothing
    measured at its calibrated figure (the one estimate, `calibrated_ledger`)."""
    return calibrated_ledger(
        llama_model(), llama_settings(tp), gpu_total_bytes=H100_TOTAL_BYTES, gpu_name="H100", measured=measured
    )


def llama_ledger(tp: int = 8, measured: MeasuredInputs = MeasuredInputs()) -> Ledger:
    return predict(
        llama_model(),
        llama_settings(tp),
        gpu_total_bytes=H100_TOTAL_BYTES,
        gpu_name="H100",
        measured=measured,
    )


def _worker_bytes(
    ledger: Ledger, rank: int, kv_pool_bytes: int, unclaimed: int = UNTOUCHED_RESERVE_BYTES
) -> int:
    """A healthy worker: weights, its KV pool, context, and its runtime reserve less what it has not claimed."""
    row = ledger.ranks[rank]
    return row.weights_bytes + kv_pool_bytes + row.reserve_bytes + row.context_bytes - unclaimed


def _named(pid: int, uid: int = 0) -> ProcessIdentity:
    """What the OS said of a process (its start, user id and executable): kvtop can name and signal it."""
    return ProcessIdentity(pid=pid, start_time=1_700_000_000.0, uid=uid, exe="/usr/bin/python3.11")


def _gpu(index: int, worker_bytes: int, others: tuple[GpuProcess, ...]) -> GpuObservation:
    worker = GpuProcess(
        pid=SERVER_PID + 1 + index, used_bytes=worker_bytes, name="python3", title=f"sglang::scheduler_TP{index}",
        role=ProcessRole.ENGINE_WORKER, engine_id=ENGINE_ID, engine_kind="sglang", rank=EngineRank(tp=index),
        identity=_named(SERVER_PID + 1 + index),
    )  # fmt: skip
    processes = (worker, *others)
    used = sum(p.used_bytes or 0 for p in processes)
    return GpuObservation(
        index=index, uuid=f"GPU-0000000{index}-fake", pci_bus_id=f"00000000:{0x18 + index:02X}:00.0", name=H100_NAME,
        total_bytes=H100_TOTAL_BYTES, used_bytes=used, reserved_bytes=DRIVER_RESERVED_BYTES,
        free_bytes=H100_TOTAL_BYTES - used - DRIVER_RESERVED_BYTES, memory_api=MemoryApi.V2, processes=processes,
    )  # fmt: skip


def llama_snapshot(
    *,
    co_tenant_gpu: int | None = None,
    lost_gpu: int | None = None,
    kv_usage: float = 0.42,
    unclaimed_bytes: int = UNTOUCHED_RESERVE_BYTES,
) -> NodeSnapshot:
    """Llama-3-70B TP8 on 8× H100; optionally a 6 GiB co-tenant on one GPU or one GPU lost.

    `unclaimed_bytes`: the runtime reserve each worker has not claimed yet (it shows as free memory).
    """
    settings = llama_settings()
    ledger = llama_ledger()
    live_capacity, kv_pool_bytes = ledger.token_capacity, ledger.engine.kv_pool_bytes
    if co_tenant_gpu is not None:
        # SGLang sizes every rank by the tightest one: the co-tenant's bytes come off every rank's pool.
        squeezed = llama_ledger(
            measured=MeasuredInputs(free_before_load_bytes=H100_TOTAL_BYTES - GIB - CO_TENANT_BYTES)
        )
        live_capacity, kv_pool_bytes = squeezed.token_capacity, squeezed.engine.kv_pool_bytes
    gpus = []
    for index in range(8):
        if index == lost_gpu:
            gpus.append(
                GpuObservation(index=index, name=H100_NAME, state=GpuState.LOST, state_message=LOST_MESSAGE)
            )
            continue
        others: tuple[GpuProcess, ...] = ()
        if index == co_tenant_gpu:
            others = (
                GpuProcess(
                    pid=9001,
                    used_bytes=CO_TENANT_BYTES,
                    name="python3",
                    title="jupyter-kernel",
                    role=ProcessRole.CO_TENANT,
                    identity=_named(9001, uid=1000),
                ),
            )
        gpus.append(_gpu(index, _worker_bytes(ledger, index, kv_pool_bytes, unclaimed_bytes), others))
    live = EngineLive(
        state=EndpointState.OK, base_url="http://127.0.0.1:30000", version=ReportedVersion(said="0.4.9"), token_capacity=live_capacity,
        kv_usage_fraction=kv_usage, used_tokens=int(live_capacity * kv_usage), running_requests=37, waiting_requests=0,
        memory_fraction=ledger.engine.memory_fraction,
    )  # fmt: skip
    engine = EngineInstance(
        engine_id=ENGINE_ID, kind="sglang", server_pid=SERVER_PID, model=LLAMA_70B_REF, settings=settings,
        host="127.0.0.1", port=30000, live=live,
    )  # fmt: skip
    observation = NodeObservation(
        taken_at=TAKEN_AT, driver_version="570.124.06", gpus=tuple(gpus), engines=(engine,)
    )
    return build_snapshot(observation, {ENGINE_ID: ledger}, source="fake:llama-3-70b-tp8")


class FakeSource:
    """A SnapshotSource that returns what its script says: snapshots, or exceptions to raise."""

    def __init__(self, *script: NodeSnapshot | Exception, label: str = "fake:llama-3-70b-tp8") -> None:
        self.label = label
        self._script = list(script)
        self._lock = threading.Lock()
        self.calls = 0

    def push(self, item: NodeSnapshot | Exception) -> None:
        """Replace what every later collect() gives."""
        with self._lock:
            self._script = [item]

    def collect(self) -> NodeSnapshot:
        with self._lock:
            self.calls += 1
            item = self._script[0] if len(self._script) == 1 else self._script.pop(0)
        if isinstance(item, Exception):
            raise item
        return item


class FixedClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


ModelLoaderFn = Callable[[str], ModelSpec]

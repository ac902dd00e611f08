"""What the node says, as frozen values: GPUs, the processes on them, engines and their live state.

`sources/nvml.py` fills the GPUs, `sources/processes.py` attributes each GPU process to an engine
rank (or names it a co-tenant, an orphan or unattributed), `sources/engine_http.py` adds each
engine's live endpoint facts. The UI, diagnose and the exporter read one `NodeObservation`.
Every failure is a named state with a message; a number that could not be read is `None`,
never a zero. Command lines and every string from outside (names, titles, messages, URLs) are
redacted when a value is built or copied, so no surface can show a secret.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any

from pydantic import Field, computed_field, field_validator, model_validator

from kvtop.domain.engines.catalogue import EngineId
from kvtop.domain.host_desktop import HostDesktop
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.process_identity import PidNamespace, ProcessIdentity
from kvtop.domain.redact import (
    RedactedModel,
    RedactedStr,
    redact_mapping,
    redact_shown,
    shown_argv,
    shown_cut,
)
from kvtop.domain.terminal import cut


class _Frozen(RedactedModel):
    """Frozen; copies are validated, so redaction cannot be skipped."""


class NvmlState(str, Enum):
    """Whether kvtop could talk to the NVIDIA driver at all."""

    OK = "ok"
    LIBRARY_NOT_FOUND = "library_not_found"  # libnvidia-ml.so or the nvidia-ml-py package missing
    NO_DRIVER = "no_driver"  # library present, kernel driver not loaded
    VERSION_MISMATCH = "version_mismatch"  # library and kernel module from different drivers
    NO_PERMISSION = "no_permission"
    ERROR = "error"  # any other NVML failure, message says which
    DEMO = "demo"  # a simulated node (--demo): no driver was asked, the scenario supplies every figure

    @property
    def failed(self) -> bool:
        """NVML could not be read (a demo node is no failure: it never asks the driver)."""
        return self not in (NvmlState.OK, NvmlState.DEMO)


class GpuState(str, Enum):
    """The most important condition of one GPU (its message says all that apply)."""

    OK = "ok"
    LOST = "lost"  # fell off the bus / needs a reset; nothing else could be read
    ERROR = "error"  # an NVML call failed for this GPU; the message names it
    UNIFIED_MEMORY = "unified_memory"  # GB10/Grace: memory is the host's, read from the OS
    MIG = "mig"  # MIG enabled: memory per instance in `mig_instances`
    PROCESS_MEMORY_UNAVAILABLE = "process_memory_unavailable"  # no per-process bytes (MIG, WDDM, vGPU…)


class MemoryApi(str, Enum):
    """Which call produced a GPU's memory figures (v1 `used` includes the reserved bytes)."""

    V2 = "v2"
    V1 = "v1"
    HOST = "host"


class ProcessKind(str, Enum):
    COMPUTE = "compute"
    GRAPHICS = "graphics"
    COMPUTE_AND_GRAPHICS = "compute+graphics"


class ProcessRole(str, Enum):
    """What a GPU process is to kvtop."""

    ENGINE_SERVER = "engine_server"  # the launching SGLang/vLLM process itself holds GPU memory
    ENGINE_WORKER = "engine_worker"  # a rank of an engine whose server is alive
    CO_TENANT = "co_tenant"  # belongs to no engine
    ORPHAN = "orphan"  # an engine worker whose launching server is gone
    UNATTRIBUTED = "unattributed"  # not visible or not readable here: bytes without an owner


class ProcessInfoState(str, Enum):
    """How much the OS told kvtop about a GPU process."""

    NOT_READ = "not_read"  # NVML facts only (process attribution not run)
    OK = "ok"
    ACCESS_DENIED = "access_denied"  # exists, but its details are not readable by this user
    NOT_VISIBLE = "not_visible"  # another PID namespace (container) or already exited


class EndpointState(str, Enum):
    """The outcome of reading an engine's HTTP endpoints."""

    NOT_QUERIED = "not_queried"
    OK = "ok"
    UNREACHABLE = "unreachable"  # connection refused / no route / DNS
    TIMEOUT = "timeout"
    HTTP_ERROR = "http_error"  # a non-2xx answer
    BAD_PAYLOAD = "bad_payload"  # answered, but not the engine's format


class EngineRank(_Frozen):
    """A worker's place in its engine's layout (0-based; `ep` None when the engine does not say)."""

    dp: int = 0
    tp: int = 0
    pp: int = 0
    ep: int | None = None


class GpuProcess(_Frozen):
    """One process on one GPU: NVML's bytes plus what the OS and attribution say about it."""

    pid: int
    used_bytes: int | None  # None: NVML cannot say (WDDM, MIG, some vGPU)
    kind: ProcessKind = ProcessKind.COMPUTE
    gpu_instance_id: int | None = None  # MIG GPU instance, when NVML reports one
    name: RedactedStr | None = None
    title: RedactedStr | None = None  # the title an engine set (`VLLM::Worker_TP0`, `sglang::scheduler_TP1`)
    cmdline: tuple[str, ...] = ()  # always redacted
    user: RedactedStr | None = None
    parent_pid: int | None = None
    start_time: float | None = None  # seconds since the epoch
    cuda_visible_devices: RedactedStr | None = None
    info_state: ProcessInfoState = ProcessInfoState.NOT_READ
    info_message: RedactedStr | None = None
    role: ProcessRole = ProcessRole.UNATTRIBUTED
    engine_id: str | None = None
    engine_kind: EngineId | None = None  # also set for orphans (from their title)
    rank: EngineRank | None = None
    identity: ProcessIdentity | None = None  # None: kvtop cannot name it (and never signals it)

    @field_validator("cmdline")
    @classmethod
    def _redact_cmdline(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return shown_argv(value)

    def unidentified_reason(self) -> str | None:
        """Why kvtop cannot name this process (so offers no signal to it), or None when it can."""
        if self.identity is not None:
            return None
        if self.info_state is ProcessInfoState.NOT_VISIBLE:
            return f"{self.info_message or f'pid {self.pid} is not visible here'}: kvtop cannot tell which process it is"
        if self.info_state is ProcessInfoState.NOT_READ:
            return f"pid {self.pid} was not looked up: kvtop cannot tell which process it is"
        return (
            f"kvtop could not read pid {self.pid}'s start time, user id and executable (all three name a "
            "process, a pid alone does not): run kvtop as root or as the process's user"
        )


class MigInstance(_Frozen):
    """One MIG device of a GPU, with its own memory."""

    index: int
    uuid: str | None
    name: RedactedStr | None
    total_bytes: int | None
    used_bytes: int | None
    free_bytes: int | None
    reserved_bytes: int | None
    memory_api: MemoryApi | None


class GpuObservation(_Frozen):
    """One physical GPU. Byte fields are None when they could not be read (see `state`)."""

    index: int
    uuid: str | None = None
    pci_bus_id: str | None = None
    name: RedactedStr | None = None
    total_bytes: int | None = None
    used_bytes: int | None = None  # v2: excludes reserved; v1: includes it
    free_bytes: int | None = None
    reserved_bytes: int | None = None  # None unless the v2 call answered
    memory_api: MemoryApi | None = None
    utilization_percent: int | None = None
    # NVML's vitals (nvitop's row): None where the GPU does not report them (MIG, some vGPUs)
    temperature_c: int | None = None
    power_mw: int | None = None  # drawn now, milliwatts
    power_limit_mw: int | None = None  # the enforced limit, milliwatts
    sm_clock_mhz: int | None = None
    state: GpuState = GpuState.OK
    state_message: RedactedStr | None = None
    processes: tuple[GpuProcess, ...] = ()
    mig_instances: tuple[MigInstance, ...] = ()

    @property
    def process_bytes(self) -> int:
        """Bytes NVML attributes to the listed processes (those that report a number)."""
        return sum(process.used_bytes or 0 for process in self.processes)

    @property
    def not_free_bytes(self) -> int | None:
        """Memory that is not free: NVML's used plus the driver-reserved bytes the v2 call counts apart."""
        return None if self.used_bytes is None else self.used_bytes + (self.reserved_bytes or 0)

    @property
    def not_free_fraction(self) -> float | None:
        """`not_free_bytes` of the total (the trend's 'used' share); None without both figures."""
        taken = self.not_free_bytes
        return taken / self.total_bytes if self.total_bytes and taken is not None else None

    @property
    def free_or_remainder_bytes(self) -> int | None:
        """NVML's free, else what the total leaves beyond `not_free_bytes` (never below 0); None without them."""
        if self.free_bytes is not None:
            return self.free_bytes
        taken = self.not_free_bytes
        return None if self.total_bytes is None or taken is None else max(0, self.total_bytes - taken)


class EngineLiveRank(_Frozen):
    """Live facts one rank (or one vLLM DP engine) reports, keyed by the labels it used."""

    dp_rank: int | None = None
    tp_rank: int | None = None
    pp_rank: int | None = None
    engine_index: str | None = None  # vLLM's `engine` label
    pid: int | None = None  # SGLang's `pid` label: the scheduler process of this rank
    token_capacity: int | None = None
    num_gpu_blocks: int | None = None
    block_size: int | None = None
    kv_usage_fraction: float | None = None
    used_tokens: int | None = None
    running_requests: int | None = None
    waiting_requests: int | None = None
    # pressure (kvtop.domain.pressure): counters are cumulative since the engine started
    swapped_requests: int | None = None  # vLLM V0: requests whose KV was swapped to CPU
    preemptions_total: int | None = None  # vLLM: requests preempted (their KV freed) for lack of blocks
    retractions_total: int | None = None  # SGLang: requests retracted (decode ran out of KV)
    evicted_tokens_total: int | None = None  # SGLang: tokens evicted from the GPU pool (to host with HiCache)
    spec_accepted_tokens_total: int | None = None  # vLLM: draft tokens the target accepted
    spec_draft_tokens_total: int | None = None  # vLLM: draft tokens proposed
    spec_acceptance: float | None = None  # SGLang: accepted ÷ proposed drafts in the last batches (0..1)


class EngineCounters(_Frozen):
    """An engine's cumulative counters at one reading: two readings give rates (kvtop.domain.pressure)."""

    taken_at: float
    preemptions: int | None = None
    retractions: int | None = None
    evicted_tokens: int | None = None
    spec_accepted: int | None = None
    spec_drafted: int | None = None


SAID_CHARS = 40  # the most of an endpoint's version words kept (SGLang's server info may run on)
WORDS_CHARS = 200  # the most of them read for the release: a source build's version runs past 40 (49 in R8's)


class ReportedVersion(_Frozen):
    """A version as a running engine's endpoint reported it: its own words, as one line, redacted. `words` is the
    line cut only at `WORDS_CHARS`, what the engine's release names are read from (`stated_release.endpoint_release`,
    by its `RELEASE_NAMES`: PEP 440's '0.5.9', llama.cpp's 'b6980'; a source build's
    '0.11.1rc2.dev150+g8e4ca4d54.d20251024.precompiled' is 49 characters: cut to 40 it lost its build date); `said`
    is derived from it, never stored beside it, so the two cannot disagree: the same words cut to `SAID_CHARS` (SGLang's
    server info may carry more than the release, '0.5.9 api_key=…'), shown as the endpoint's, never as an
    `--engine-version` nobody typed. Readers build it from `words=` (the endpoint's words as they came; `said=`, a
    JSON copy's key, is read the same way); the JSON writes `said` only."""

    words: RedactedStr = Field(exclude=True, repr=False)

    @model_validator(mode="before")
    @classmethod
    def _one_redacted_line(cls, data: Any) -> Any:
        """Every reader's words alike (an endpoint's, the demo's, a copy's): `said=` as given (else `words=`),
        whitespace runs made one space (a tab or a line break never hides a release), redacted, then cut at
        `WORDS_CHARS` (redacted before the cut: a cut could leave a secret's head no shape matches)."""
        if not isinstance(data, dict):
            return data
        line = data.get("said") if isinstance(data.get("said"), str) else data.get("words")
        if not isinstance(line, str):
            return data
        rest = {key: value for key, value in data.items() if key not in ("said", "words")}
        return {**rest, "words": shown_cut(" ".join(line.split()), WORDS_CHARS)}

    @computed_field  # type: ignore[prop-decorator]
    @property
    def said(self) -> str:
        """The words as shown: cut to `SAID_CHARS` (the cut marked), redacted again as every shown string is."""
        return redact_shown(cut(self.words, SAID_CHARS))


class EngineLive(_Frozen):
    """What an engine's endpoints said. Engine-wide figures: capacity and pages of the tightest rank, usage the
    highest rank's, tokens and requests summed over ranks. `*_bytes` come from GiB figures the
    engine printed to two decimals."""

    state: EndpointState = EndpointState.NOT_QUERIED
    message: RedactedStr | None = None
    base_url: RedactedStr | None = None
    version: ReportedVersion | None = None  # what the endpoint says it is (/version, server info)
    token_capacity: int | None = None  # SGLang max_total_num_tokens; vLLM kv_cache_size_tokens
    token_capacity_logged: bool = False  # the figure came from the engine's startup log, not its endpoint
    num_gpu_blocks: int | None = None  # vLLM, includes the null block
    block_size: int | None = None  # tokens per KV page (vLLM block_size, SGLang page_size)
    kv_usage_fraction: float | None = None  # 0..1
    used_tokens: int | None = None
    running_requests: int | None = None
    waiting_requests: int | None = None
    memory_fraction: float | None = None  # vLLM gpu_memory_utilization / SGLang mem_fraction_static
    weight_bytes: int | None = None
    kv_cache_bytes: int | None = None
    swapped_requests: int | None = None  # pressure figures, summed over ranks (see EngineLiveRank)
    preemptions_total: int | None = None
    retractions_total: int | None = None
    evicted_tokens_total: int | None = None
    spec_accepted_tokens_total: int | None = None
    spec_draft_tokens_total: int | None = None
    spec_acceptance: float | None = None  # the mean over ranks
    taken_at: float | None = None  # when the endpoint was read (seconds since the epoch), for counter rates
    # the counters of the previous reading, kept by the live source: rates are their differences
    previous: EngineCounters | None = None
    ranks: tuple[EngineLiveRank, ...] = ()
    notes: tuple[RedactedStr, ...] = ()  # partial failures, e.g. SGLang started without --enable-metrics

    @classmethod
    def of_ranks(cls, ranks: Sequence[EngineLiveRank]) -> EngineLive:
        """An answering engine's figures from its ranks': capacity and pages of the tightest, usage of
        the fullest, tokens and requests summed; a figure no rank states stays unknown (None), not 0."""

        def known(field: str) -> list[Any]:
            return [value for rank in ranks if (value := getattr(rank, field)) is not None]

        def combined(field: str, how: Callable[[list[Any]], Any]) -> Any:
            found = known(field)
            return how(found) if found else None

        return cls(
            state=EndpointState.OK,
            token_capacity=combined("token_capacity", min),
            num_gpu_blocks=combined("num_gpu_blocks", min),
            block_size=combined("block_size", min),
            kv_usage_fraction=combined("kv_usage_fraction", max),
            used_tokens=combined("used_tokens", sum),
            running_requests=combined("running_requests", sum),
            waiting_requests=combined("waiting_requests", sum),
            swapped_requests=combined("swapped_requests", sum),
            preemptions_total=combined("preemptions_total", sum),
            retractions_total=combined("retractions_total", sum),
            evicted_tokens_total=combined("evicted_tokens_total", sum),
            spec_accepted_tokens_total=combined("spec_accepted_tokens_total", sum),
            spec_draft_tokens_total=combined("spec_draft_tokens_total", sum),
            spec_acceptance=combined("spec_acceptance", lambda v: sum(v) / len(v)),
            ranks=tuple(ranks),
        )

    @property
    def counters(self) -> EngineCounters | None:
        """This reading's cumulative counters (None: the reading has no time or no counter)."""
        values = (self.preemptions_total, self.retractions_total, self.evicted_tokens_total,
                  self.spec_accepted_tokens_total, self.spec_draft_tokens_total)  # fmt: skip
        if self.taken_at is None or all(v is None for v in values):
            return None
        return EngineCounters(
            taken_at=self.taken_at, preemptions=self.preemptions_total, retractions=self.retractions_total,
            evicted_tokens=self.evicted_tokens_total, spec_accepted=self.spec_accepted_tokens_total,
            spec_drafted=self.spec_draft_tokens_total,
        )  # fmt: skip


# LaunchSettings fields that hold free text from a command line (the rest are numbers and choices)
_SETTINGS_TEXT = (
    "model",
    "host",
    "quantization",
    "dtype",
    "kv_cache_memory_bytes",
    "engine_version",
    "backend",  # TensorRT-LLM
    "extra_llm_api_options",  # TensorRT-LLM
)


class EngineInstance(_Frozen):
    """A running SGLang/vLLM server found on the node, with the settings its command line states."""

    engine_id: str  # "<kind>:<server pid>"
    kind: EngineId
    server_pid: int
    model: RedactedStr | None = None
    settings: LaunchSettings | None = None  # None when the command line could not be parsed
    settings_message: RedactedStr | None = None
    host: RedactedStr  # where kvtop reads its endpoints (127.0.0.1 when it binds every address)
    port: int
    live: EngineLive = EngineLive()

    @field_validator("settings")
    @classmethod
    def _redact_flags(cls, value: LaunchSettings | None) -> LaunchSettings | None:
        if value is None:
            return None
        return value.model_copy(update={
            "flags": redact_mapping(value.flags),
            "unknown_flags": tuple(redact_shown(flag) for flag in value.unknown_flags),
            **{field: redact_shown(getattr(value, field)) for field in _SETTINGS_TEXT if getattr(value, field)},
        })  # fmt: skip

    @property
    def label(self) -> str:
        """How views name the engine ("sglang pid 4242"): the ledger's title, the probe's and the planner's basis."""
        return f"{self.kind} pid {self.server_pid}"


class HostMemory(_Frozen):
    """The node's host memory (what offloaded KV tiers pin), as the OS reports it."""

    total_bytes: int
    available_bytes: int  # what a new allocation can take without swapping (Linux MemAvailable)


def held_total(held: Sequence[tuple[int, int | None]]) -> int | None:
    """What a process holds over its GPUs ((GPU index, bytes) as `NodeObservation.held_by` has them); None where
    NVML left any GPU's figure out (a partial sum would read as the whole)."""
    sizes = [used for _, used in held]
    return sum(size for size in sizes if size is not None) if all(size is not None for size in sizes) else None


class NodeObservation(_Frozen):
    """Everything kvtop observed on one node at `taken_at` (seconds since the epoch)."""

    taken_at: float
    host_memory: HostMemory | None = None  # None: not read (a remote node, a read that failed)
    # a desktop sharing the GPUs as the node shows it (a WSL2 kernel); None: nothing showed one, or not read
    desktop: HostDesktop | None = None
    nvml_state: NvmlState = NvmlState.OK
    nvml_message: RedactedStr | None = None
    driver_version: RedactedStr | None = None
    gpus: tuple[GpuObservation, ...] = ()
    engines: tuple[EngineInstance, ...] = ()
    pid_namespace: PidNamespace = PidNamespace.UNKNOWN  # whose pids kvtop looked NVML's up among

    def gpu(self, index: int) -> GpuObservation | None:
        """The GPU with NVML index `index`, if observed."""
        return next((gpu for gpu in self.gpus if gpu.index == index), None)

    def engine(self, engine_id: str) -> EngineInstance | None:
        return next((engine for engine in self.engines if engine.engine_id == engine_id), None)

    def engine_processes(self, engine_id: str) -> tuple[tuple[GpuObservation, GpuProcess], ...]:
        """Every (GPU, process) of an engine, in GPU order: its ranks and where they run."""
        return tuple(
            (gpu, process) for gpu in self.gpus for process in gpu.processes if process.engine_id == engine_id
        )

    def held_by(self, pid: int) -> tuple[tuple[int, int | None], ...]:
        """(GPU index, bytes NVML says `pid` holds there) on every GPU it is on (TurboMind drives several)."""
        return tuple((gpu.index, p.used_bytes) for gpu in self.gpus for p in gpu.processes if p.pid == pid)

    @property
    def used_bytes(self) -> int | None:
        """NVML's used over the GPUs that report it (None: none does)."""
        used = [gpu.used_bytes for gpu in self.gpus if gpu.used_bytes is not None]
        return sum(used) if used else None

    def processes_with_role(self, role: ProcessRole) -> tuple[tuple[GpuObservation, GpuProcess], ...]:
        return tuple((gpu, process) for gpu in self.gpus for process in gpu.processes if process.role == role)

    def unattributed_bytes_by_gpu(self) -> dict[int, int]:
        """Bytes held by processes kvtop could not see or read, per GPU index (GPUs with any)."""
        totals: dict[int, int] = {}
        for gpu, process in self.processes_with_role(ProcessRole.UNATTRIBUTED):
            totals[gpu.index] = totals.get(gpu.index, 0) + (process.used_bytes or 0)
        return totals

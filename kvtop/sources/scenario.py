"""Demo scenarios: a simulated node described in a small JSON file, validated with pydantic.

A scenario states what an operator would know about a node: the GPU model and count, each
engine's model preset and launch command, and what is wrong with it (co-tenant processes,
orphaned workers, lost GPUs, bytes no ledger explains). Every observed byte is derived from the
engine's simulated solve in `kvtop.sources.demo_plan`, from what real starts of that shape measured
(`kvtop.sources.demo_starts`), so a scenario never lists memory figures of healthy ranks.
Sizes are byte counts or text such as "6GiB"; `--demo NAME` finds `examples/scenarios/NAME.json`
(shipped inside the package, see `kvtop.bundled`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator

from kvtop.bundled import bundled_dir
from kvtop.domain.engines.registry import title_prefixes
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.observe import EndpointState
from kvtop.sources.json_file import read_json_object
from kvtop.units import MIB, parse_size

DEFAULT_SCENARIO = "llama70b-tp8-sglang"


def _size(value: Any) -> int:
    """Bytes from an int or from text ('6GiB', '512MiB'); a ValueError names what was wrong."""
    if isinstance(value, bool):
        raise ValueError("expected a size such as 6GiB or a byte count")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"a size cannot be negative (got {value})")
        return value
    if isinstance(value, str):
        try:
            return parse_size(value)
        except InputError as error:
            raise ValueError(str(error)) from None
    raise ValueError("expected a size such as 6GiB or a byte count")


Size = Annotated[int, BeforeValidator(_size)]


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GpuSpec(_Strict):
    """Every GPU of the node (they are all the same model)."""

    model: str  # a GPU kvtop knows (kvtop.domain.gpus): H100, H200, A100-80GB, B200, …
    count: int = Field(ge=1, le=1024)
    name: str | None = None  # the name NVML reports; default "NVIDIA <model>"
    total: Size | None = None  # default: the driver-reported memory of `model`
    # NVML v2 `reserved` (the driver's); default: nvidia-smi's total less CUDA's total for the GPU model as a real
    # start printed it (examples/measured/starts.json; a GPU it lacks: as kvtop's calibration has it)
    reserved: Size | None = None
    driver_version: str = "550.90.07"

    @field_validator("model")
    @classmethod
    def _known_model(cls, value: str) -> str:
        try:
            gpu_total_bytes(value)
        except InputError as error:
            raise ValueError(str(error).removeprefix("--gpu: ")) from None
        return value


class EngineSpec(_Strict):
    """One SGLang/vLLM server; its ranks' bytes are its predicted ledger, plus any deviation."""

    model: str  # a model preset (examples/models), used for the prediction
    command: str  # the launch command, as the server's process shows it
    gpus: tuple[int, ...] | None = (
        None  # physical GPU of each rank, in rank order; default: the next free ones
    )
    server_pid: int = Field(ge=2)
    version: str | None = None
    # What each worker holds before its weights (CUDA context, NCCL). Default: what a real start of this shape
    # measured (examples/measured/starts.json: engine, model, GPU, TP, PP, DP); a shape it lacks: the
    # context kvtop's clean prediction expects (a scenario that sets it shows what a different context costs)
    cuda_context: Size | None = None
    # GPU index → bytes that rank's worker holds beyond its ledger, taken before the KV cache was
    # sized (NCCL or all-reduce buffers, a second CUDA context): the engine budgets around them
    extra_bytes: dict[int, Size] = {}
    # An engine over several nodes (its command's --nnodes): what others held before it started on the
    # most-used of its GPUs on its other nodes (an engine sized by the least free GPU feels it here too)
    elsewhere_before_load: Size = 0
    kv_usage: float = Field(default=0.35, ge=0.0, le=1.0)  # mean fraction of the KV pool in use
    running_requests: int = Field(default=8, ge=0)
    waiting_requests: int = Field(default=0, ge=0)
    # pressure its metrics show: requests preempted (vLLM) or retracted (SGLang) per minute, drafts accepted
    evictions_per_min: float = Field(default=0.0, ge=0.0, le=1e6)
    spec_acceptance: float | None = Field(default=None, ge=0.0, le=1.0)
    endpoint: EndpointState = EndpointState.OK  # what reading its HTTP endpoints gives


class ForeignProcess(_Strict):
    """A process of no engine (a co-tenant: a notebook, a training job, another user's tool)."""

    gpu: int = Field(ge=0)
    pid: int = Field(ge=2)
    used: Size
    cmdline: tuple[str, ...] = ("python3",)
    user: str = "ada"
    parent_pid: int = 1
    started_before_engines: bool = True  # the engines saw its bytes taken when they sized their pools


class OrphanProcess(_Strict):
    """An engine worker whose launching server is gone, still holding its memory."""

    gpu: int = Field(ge=0)
    pid: int = Field(ge=2)
    title: str  # the title the engine gave it: VLLM::Worker_TP1, sglang::scheduler_TP0
    used: Size
    user: str = "root"

    @field_validator("title")
    @classmethod
    def _engine_title(cls, value: str) -> str:
        prefixes = tuple(f"{prefix}::" for prefix in title_prefixes())
        if not value.upper().startswith(prefixes):
            raise ValueError(
                f"an orphan's title starts with an engine's title prefix, one of {', '.join(prefixes)} (e.g. VLLM::Worker_TP1)"
            )
        return value


class LostGpu(_Strict):
    """A GPU that fell off the bus: NVML answers nothing but `GpuIsLost` for it."""

    gpu: int = Field(ge=0)
    message: str | None = None


class Scenario(_Strict):
    """A simulated node. `name` is the file stem when loaded from a file."""

    name: str = "custom"
    description: str = ""
    seed: int = 0  # drives the deterministic noise and the movement over time
    gpu: GpuSpec
    engines: tuple[EngineSpec, ...] = ()
    foreign_processes: tuple[ForeignProcess, ...] = ()
    orphans: tuple[OrphanProcess, ...] = ()
    lost_gpus: tuple[LostGpu, ...] = ()
    noise: Size = 8 * MIB  # bound of each worker's fixed deviation below its ledger
    jitter: Size = 24 * MIB  # bound of each worker's movement from one tick to the next
    kv_usage_swing: float = Field(default=0.08, ge=0.0, le=0.5)  # how far KV usage moves around its mean
    host_memory: Size | None = None  # the node's host memory (offloaded KV tiers pin part of it); None: not shown

    def non_engine_processes(self) -> tuple[ForeignProcess | OrphanProcess, ...]:
        """Co-tenants and orphans: the processes whose bytes the scenario states."""
        return (*self.foreign_processes, *self.orphans)


def scenario_dir() -> Path:
    """examples/scenarios, as shipped with this kvtop (a checkout or an installed wheel)."""
    return bundled_dir("examples", "scenarios")


def scenario_names() -> list[str]:
    return sorted(path.stem for path in scenario_dir().glob("*.json")) if scenario_dir().is_dir() else []


def scenario_path(ref: str) -> Path:
    """The file of a scenario name ('default' included) or path; an InputError lists the names."""
    name = DEFAULT_SCENARIO if ref in ("", "default") else ref
    path = Path(name).expanduser()
    if path.suffix == ".json" or "/" in name:
        if not path.exists():  # one that is there but no file (a folder, /dev/zero) is said so by read_json_object
            raise InputError("scenario file not found", field="--demo", source=str(path), value_is_file=True)
        return path
    named = scenario_dir() / f"{name}.json"
    if not named.is_file():
        raise InputError(
            f"no demo scenario {name!r} (scenarios: {', '.join(scenario_names()) or 'none found'}; or a .json path)",
            field="--demo",
        )
    return named


def load_scenario(ref: str) -> Scenario:
    """Read and validate a scenario by name or path; a bad file is an InputError naming the field."""
    path = scenario_path(ref)
    data = read_json_object(path, "scenario", field="--demo")
    data.setdefault("name", path.stem)
    return parse_scenario(data, source=str(path))


def parse_scenario(data: dict[str, Any], *, source: str = "<scenario>") -> Scenario:
    """Validate a scenario held in memory (the loader and the tests share this)."""
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        raise InputError(_message(first), field=field_path(first["loc"]), source=source) from None
    _check_references(scenario, source)
    return scenario


def _check_references(scenario: Scenario, source: str) -> None:
    """Every GPU named exists and has room for what is put on it, and no pid is used twice."""
    count = scenario.gpu.count
    for group in ("foreign_processes", "orphans", "lost_gpus"):
        for position, item in enumerate(getattr(scenario, group)):
            if item.gpu >= count:
                raise InputError(
                    f"GPU {item.gpu} does not exist (the node has {count})",
                    field=f"{group}[{position}].gpu",
                    source=source,
                )
    for position, engine in enumerate(scenario.engines):
        for gpu in engine.gpus or ():
            if gpu >= count:
                raise InputError(
                    f"GPU {gpu} does not exist (the node has {count})",
                    field=f"engines[{position}].gpus",
                    source=source,
                )
    held: dict[int, int] = {}
    for process in scenario.non_engine_processes():
        held[process.gpu] = held.get(process.gpu, 0) + process.used
        if (
            held[process.gpu]
            > (scenario.gpu.total or gpu_total_bytes(scenario.gpu.model)) - (scenario.gpu.reserved or 0)
        ):
            raise InputError(
                f"the processes on GPU {process.gpu} hold more than its memory",
                field="foreign_processes",
                source=source,
            )
    pids = [engine.server_pid for engine in scenario.engines] + [
        p.pid for p in scenario.non_engine_processes()
    ]
    repeated = sorted({pid for pid in pids if pids.count(pid) > 1})
    if repeated:
        raise InputError(f"pid {repeated[0]} is used twice", field="pid", source=source)


def field_path(loc: tuple[int | str, ...]) -> str:
    """('engines', 0, 'gpus') → 'engines[0].gpus'."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "scenario"


def _message(error: Any) -> str:
    message = str(error["msg"])
    return message.removeprefix("Value error, ")


def generated_scenario(gpu_count: int, process_count: int, *, seed: int = 1) -> Scenario:
    """A synthetic node for scale tests: Llama-3-70B SGLang TP8 engines on every full group of
    8 H100s, and co-tenant processes spread over the GPUs until `process_count` are listed."""
    engines = tuple(
        EngineSpec(
            model="llama-3-70b",
            command=f"python3 -m sglang.launch_server --model-path meta-llama/Meta-Llama-3-70B-Instruct --tp 8 --port {30000 + group}",
            gpus=tuple(range(group * 8, group * 8 + 8)),
            server_pid=41000 + 1000 * group,
        )
        for group in range(gpu_count // 8)
    )
    workers = 8 * len(engines)
    if process_count < workers:
        raise InputError(
            f"{gpu_count} GPUs run {workers} engine workers: ask for at least that many processes",
            field="processes",
        )
    foreign = tuple(
        ForeignProcess(
            gpu=index % gpu_count,
            pid=200_000 + index,
            used=64 * MIB,
            cmdline=(
                "python3",
                "-m",
                "ipykernel_launcher",
                "-f",
                f"/home/ada/.local/share/jupyter/runtime/kernel-{index}.json",
            ),
        )  # fmt: skip
        for index in range(process_count - workers)
    )
    return Scenario(
        name=f"generated-{gpu_count}gpu-{process_count}proc",
        description=f"{gpu_count} H100s, {len(engines)} SGLang TP8 engines, {len(foreign)} co-tenants",
        seed=seed,
        gpu=GpuSpec(model="H100", count=gpu_count, name="NVIDIA H100 80GB HBM3"),
        engines=engines,
        foreign_processes=foreign,
    )

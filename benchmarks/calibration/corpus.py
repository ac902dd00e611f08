"""The calibration corpus (tests/data/calibration/<engine>.jsonl), read into records kvtop can solve.

Each line is one engine start a public log printed: its source, the engine and release, the GPU, the
layout, the model's config (in tests/data/configs or tests/data/calibration/configs; null when none is at
hand), the launch flags as the engine spells them, and the figures the log printed (`logged`, GiB as
printed, tokens as counts). `env` holds the environment the launch set where a rule of the engine reads it
(`{"VLLM_MXFP4_USE_MARLIN": "1"}`), read as `--cmd` reads a leading `NAME=VALUE` (`launch_line.with_environment`). `exclude` names the terms a record must not be fitted on, and why. `host: desktop`
marks a start on a card a desktop (Windows, WSL2) shares: it is planned as `plan --desktop` plans it; with
`host_os: wsl2` (the source says the start ran under WSL2: its kernel, Docker Desktop, a Windows driver) as `plan
--wsl2` plans it, CUDA's total the card's whole memory (`Record.host_measured`). `kv_stage`
says whose figure a pipeline-parallel start's `logged.kv` is: a stage's index (vLLM sizes and logs each stage's KV
memory apart) or "min", the least over the stages (`Record.kv_stage`). `gpu_total_is_cuda: true` says the printed
`gpu_total_mib` is CUDA's own total, not nvidia-smi's of a whole card (a HAMi or MIG slice: `Record.total_is_cudas`):
planned as `plan --gpu-memory` plans it. A record whose launch kvtop refuses by name (`plan` prints the refusal, no
figure) is loaded all the same, its refusal kept (`Record.refusal`) and its model set aside as a record without a
config is: its printed figures that need no plan still count, and docs/calibration.md names it. `compile_cache: warm` says the start's own lines show torch.compile's cache warm ('Directly load …',
no 'Compiling a graph for …'), or, where they are not published, that the source started the same configuration
before it with the same cache root (its note says how): planned as `plan --compile-cache warm` plans it
(`Record.compile_cache`). `draft_config` names a speculative draft's config under tests/data
(`calibration/configs/…`), given to the plan as an operator gives it (`plan --draft-model FILE` beside
`--speculative-config '{"model": …}'`): the draft's layers, weights and KV as the engine builds them (`Record.draft`);
without one a draft named only by a path kvtop cannot read is planned as `plan` plans it (one EAGLE-like layer).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date
from decimal import Decimal
from functools import cache, cached_property
from pathlib import Path
from typing import Literal, TypeVar, cast

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.registry import ENGINE_IDS, display_name, engine_rules
from kvtop.domain.engines.versions import NOT_STATED, ResolvedVersion, from_dates, from_flag
from kvtop.domain.engines.vllm.release_calendar import V0_RELEASE
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.gpu_total_origin import GpuTotalOrigin
from kvtop.domain.gpus import GPU_TOTAL_MIB, gpu_key
from kvtop.domain.launch import LaunchSettings, engine_flags, parse_flags
from kvtop.domain.launch_line import with_environment
from kvtop.domain.ledger import Ledger, layout_from_settings, predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.served_model import served_model
from kvtop.domain.wording import GIB, MIB
from kvtop.sources.hub import load_config_file

T = TypeVar("T")
DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
CORPUS = DATA / "calibration"
FIGURES = ("cuda_total", "free_before_load", "free_after_load", "context", "weights", "activation", "non_torch",
           "cuda_graphs", "cuda_graph_estimate", "runtime", "kv")  # fmt: skip
# `cuda_graphs`: the CUDA-graph memory the log printed (vLLM: the 'Estimated CUDA graph memory' line where a record takes
# it, else the startup line's pool captured after the KV cache); `cuda_graph_estimate`: the estimate a vLLM v0.27+ log
# printed apart ('CUDA graph pool memory: … (estimated)'), which its peak activation holds (vllm startup_split.py)


KV_STAGE_MIN = "min"  # `kv_stage`: the figure is the least over the pipeline stages


def gib_bytes(text: str) -> int:
    """A printed GiB figure as bytes ('8.23' → 8.23 × 2**30, exactly as printed)."""
    return round(Decimal(text) * GIB)


@dataclass(frozen=True)
class Record:
    """One corpus line, resolved: the model (None without a config, or where kvtop refuses the launch), the settings
    and release."""

    raw: dict[str, object]
    model: ModelSpec | None
    settings: LaunchSettings
    version: ResolvedVersion
    figures: dict[str, int] = field(default_factory=dict)  # logged figures, bytes
    tokens: int | None = None
    refusal: str | None = None  # kvtop's refusal of the launch, as `plan` prints it (its model is then None)
    draft: ModelSpec | None = None  # the speculative draft's config (`draft_config`), as `plan --draft-model` reads it

    @property
    def id(self) -> str:
        return str(self.raw["id"])

    @property
    def engine(self) -> str:
        return str(self.raw["engine"])

    @cached_property
    def source(self) -> str:
        """The source its figures came from, at its release: records of one source and release (one install) are
        left out together (`source_key`). Read once per record (a case's source is in its case.json): every
        leave-one-source-out fit asks every record."""
        return f"{source_key(str(self.raw['source']))} @ {self.version.text or 'release not stated'}"

    @property
    def gpu(self) -> str | None:
        gpu = self.raw.get("gpu")
        return str(gpu) if gpu else None

    @cached_property
    def gpu_total_bytes(self) -> int | None:
        """nvidia-smi's total of the GPU: as the source printed it (`gpu_total_mib`), else kvtop's table;
        None for an unnamed or unlisted GPU. Read once per record (every fold's `observed` asks it)."""
        printed = self.raw.get("gpu_total_mib")
        if printed is not None:
            return int(str(printed)) * MIB
        key = gpu_key(self.gpu) if self.gpu else None
        return GPU_TOTAL_MIB[key] * MIB if key in GPU_TOTAL_MIB else None

    @property
    def desktop(self) -> bool:
        """A start on a card a desktop shares (`host: desktop`), planned with `--desktop`."""
        return self.raw.get("host") == "desktop"

    @property
    def wsl2(self) -> bool:
        """A desktop start under WSL2 (`host_os: wsl2`), planned with `--wsl2`: CUDA's total is the whole card."""
        return self.desktop and self.raw.get("host_os") == "wsl2"

    @property
    def total_is_cudas(self) -> bool:
        """Whether the total the source printed (`gpu_total_mib`) is CUDA's own (`gpu_total_is_cuda: true`): a slice
        whose limit CUDA reports as the card's total, no driver reserve taken from it (a HAMi memory limit, which
        hami-core reports in device properties and cudaMemGetInfo alike; a MIG instance, whose nvidia-smi size is
        PyTorch's 'total capacity'). Planned as `plan --gpu-memory` plans a size: the engine's total as given."""
        return bool(self.raw.get("gpu_total_is_cuda")) and self.raw.get("gpu_total_mib") is not None

    def host_measured(self, **figures: int | None) -> MeasuredInputs:
        """What a plan of this start is told of its host, as `plan --desktop` / `--wsl2` tell it (the total's origin
        `GpuTotalOrigin.WSL2` under WSL2), with the measured `figures` (`MeasuredInputs` fields) given; a total that is
        CUDA's own (`total_is_cudas`) given as `plan --gpu-memory` gives it (`GpuTotalOrigin.GIVEN`), so the plan
        takes no fitted driver gap from it."""
        cache = self.compile_cache
        if self.total_is_cudas:
            return MeasuredInputs(desktop=self.desktop, gpu_total_bytes=self.gpu_total_bytes,
                                  gpu_total_origin=GpuTotalOrigin.GIVEN, compile_cache=cache, **figures)  # fmt: skip
        origin = GpuTotalOrigin.WSL2 if self.wsl2 else None
        return MeasuredInputs(desktop=self.desktop, gpu_total_origin=origin, compile_cache=cache, **figures)

    @property
    def compile_cache(self) -> Literal["warm", "cold"] | None:
        """torch.compile's cache as the start's own lines say it (`compile_cache: warm`: 'Directly load …' and no
        'Compiling a graph for …') or, where they are not published, its source's run order (the same configuration
        started before it with the same cache root, said in its note), planned as `plan --compile-cache` plans it;
        None: not said."""
        state = self.raw.get("compile_cache")
        assert state in (None, "warm", "cold"), state
        return state

    def excluded(self, term: Term) -> bool:
        exclude = self.raw.get("exclude") or {}
        assert isinstance(exclude, dict)
        return "*" in exclude or term.value in exclude

    @property
    def kv_stage(self) -> int | str | None:
        """Which pipeline stage printed `logged.kv`: its index, or `KV_STAGE_MIN` for the least over the stages;
        None for one stage, or where the record does not say. vLLM's workers each profile and log their own stage's
        'Available KV cache memory', and the engine pools the least of the stages' blocks (v1/core/kv_cache_utils.py
        :2210-2222 at v0.27.1; vllm-project/vllm#32105: PP 3 over RTX 4090s, each stage its own figure)."""
        stage = self.raw.get("kv_stage")
        return stage if isinstance(stage, int | str) else None

    @property
    def util(self) -> float | None:
        return self.settings.gpu_memory_utilization

    def ledger(self, **kwargs: object) -> Ledger | None:
        """kvtop's plan of this launch (None without a config or a GPU kvtop knows); the plain one is made once per
        record (`_plan`: the loader's refusal check makes it, the judgement's inputs read it)."""
        return self._plan if not kwargs else self._planned(**kwargs)

    @cached_property
    def _plan(self) -> Ledger | None:
        return self._planned()

    def _planned(self, **kwargs: object) -> Ledger | None:
        if self.model is None or self.gpu_total_bytes is None:
            return None
        return predict(self.model, self.settings, gpu_total_bytes=self.gpu_total_bytes, gpu_name=gpu_key(self.gpu),
                       version=self.version, draft=self.draft, **kwargs)  # type: ignore[arg-type]  # fmt: skip

    def memo(self, name: tuple[str, str], make: Callable[[], T]) -> T:
        """`make()` once per record and `name`: what an engine's calibration derives from `inputs()` alone (a
        fit's features), asked again by every leave-one-source-out fit."""
        if name not in self._memo:
            self._memo[name] = make()
        return cast(T, self._memo[name])

    @cached_property
    def _memo(self) -> dict[tuple[str, str], object]:
        return {}

    def inputs(self) -> CalibrationInputs:
        """The launch as the term models read it (the book's weights where the model is known)."""
        return self._inputs

    @cached_property
    def _inputs(self) -> CalibrationInputs:
        """`inputs()`, solved once per record: a pure function of the frozen record (its model, settings, GPU and
        release), which every fit of every leave-one-source-out judgement reads (≈ 190,000 calls a judgement).
        Without a ledger (no GPU total) the log's weights stand in as the book: they already hold what the engine
        adds beside the book (the MXFP4 padding), so no weights term is made of them (`evaluate.weights_term`)."""
        layout = layout_from_settings(self.settings)
        ledger = self.ledger()
        weights = ledger.weights_bytes if ledger is not None else self.figures.get("weights", 0)
        # the length the engine runs with, as the domain decides it (the ledger's; without one, the engine's rule);
        # without a config, the length typed, else 8,192 in its stead
        rule = engine_rules(self.settings.engine).context_length
        context = (ledger.context_length if ledger is not None
                   else rule(self.model, self.settings, self.version) if self.model is not None
                   else self.settings.context_length or 8192)  # fmt: skip
        served = served_model(self.model, self.settings) if self.model is not None else None  # as the ledger reads it
        return CalibrationInputs(
            model=served, settings=self.settings, layout=layout, gpu_name=gpu_key(self.gpu) if self.gpu else None,
            gpu_total_bytes=self.gpu_total_bytes or 80 * GIB, version=self.version, weights_bytes=weights,
            context_length=context, wsl2=self.wsl2, compile_cache_warm=self.compile_cache == "warm",
            compile_cache_cold=self.compile_cache == "cold",
        )  # fmt: skip


_THREAD = re.compile(r"https://github\.com/([^/\s]+/[^/\s]+)/(?:issues|pull|discussions)/(\d+)")
_REPO = re.compile(r"https://github\.com/([^/\s]+/[^/\s#]+)")
_INDEXED = re.compile(r"search-index id (\d+)")


def source_key(source: str) -> str:
    """The source a record's figures share with its siblings: a GitHub thread ('vllm-project/vllm#10517'), a
    repository ('llm-d-incubation/llm-d-planner': one benchmarking repository's files are one sweep's hosts and
    installs), a file the search index names by id, a page; a case in tests/data/cases by the thread or page its
    case.json names. Starts of one source share GPU, release and install, so a sibling predicts them better than
    a plan predicts a log from elsewhere: the held-out errors leave a whole source out."""
    if source.startswith("cases/"):
        case = DATA / source / "case.json"
        meta = json.loads(case.read_text()) if case.exists() else {}
        nested = meta.get("source")
        url = meta.get("url") or (nested.get("url") if isinstance(nested, dict) else None)
        return source_key(str(url)) if url else source
    for pattern in (_THREAD, _REPO):
        found = pattern.match(source)
        if found:
            return f"{found.group(1)}#{found.group(2)}" if pattern is _THREAD else found.group(1).removesuffix(".git")
    indexed = _INDEXED.search(source)
    if indexed:
        return f"search-index {indexed.group(1)}"
    return source.split(" ")[0].split("#")[0]


def _config_path(name: str) -> Path:
    return DATA / name if name.startswith("calibration/") else DATA / "configs" / name


@cache
def _config_model(path: Path) -> ModelSpec:
    """A corpus config's model, read once per process: a frozen value of a committed file, which every `load`
    resolved again (the test modules load the corpus ≈ 90 times a run: ≈ 60 % of their loading was this read)."""
    return load_config_file(path)


def _version(raw: dict[str, object]) -> ResolvedVersion:
    """The release stated, else (`version_from: date`) the release out on the source's date, as kvtop
    reads a log that prints no version (`from_dates`), else none (the latest rules)."""
    engine = str(raw["engine"])
    text = V0_RELEASE if raw.get("v0") else raw.get("version")
    if text:
        return from_flag(str(text), engine_rules(engine).calendar)
    if raw.get("version_from") == "date":
        return from_dates(engine_rules(engine).calendar, date.fromisoformat(str(raw["date"])), display_name(engine))
    return NOT_STATED


# Figures a source does not print but its engine's own definition gives from printed ones (`derived`
# names them with the reason): SGLang's `mem usage` is the free memory before the load less after it.
DERIVATIONS = {
    "free_before_load": lambda f: f["free_after_load"] + f["weights"],
    "weights": lambda f: f["free_before_load"] - f["free_after_load"],
}


def _derived(raw: dict[str, object], figures: dict[str, int]) -> dict[str, int]:
    derived = raw.get("derived") or {}
    assert isinstance(derived, dict)
    out = dict(figures)
    for name in derived:
        out[str(name)] = DERIVATIONS[str(name)](figures)
    return out


def resolve(raw: dict[str, object]) -> Record:
    engine = str(raw["engine"])
    flags = [str(flag) for flag in raw.get("flags") or []]  # type: ignore[union-attr]
    layout = [f"--{name}" for name in ("tp", "pp")]
    for name, value in zip(layout, (raw.get("tp") or 1, raw.get("pp") or 1), strict=True):
        flags += [name, str(value)]
    env = raw.get("env") or {}
    assert isinstance(env, dict)
    unread = set(env) - engine_flags(engine).env_read  # a record names only what a rule reads (a typo would be lost)
    if unread:
        raise ValueError(f"{raw['id']}: env {sorted(unread)} is read by no rule of {engine}")
    settings = with_environment(parse_flags(engine, flags), {str(name): str(value) for name, value in env.items()})
    version = _version(raw)
    # `image`: the container image the source's launch runs (a Deployment's `image:`, a `docker run` line), as
    # `plan` reads it from a launch line (LaunchSettings.image): what the install holds beyond the wheel is the image's
    image = {"image": str(raw["image"])} if raw.get("image") else {}
    # `flashinfer`: "installed" | "absent", what the source's install holds (pip `flashinfer-python`), as `plan
    # --flashinfer` states it (LaunchSettings.flashinfer); its `flashinfer_basis` says where the source says so
    install = raw.get("flashinfer")
    if install not in (None, "installed", "absent"):
        raise ValueError(f"{raw['id']}: flashinfer {install!r} is neither 'installed' nor 'absent'")
    stated = {**image, **({"flashinfer": install} if install else {})}
    settings = settings.model_copy(update={"engine_version": version.text, **stated})
    config = raw.get("config")
    model = _config_model(_config_path(str(config))) if config else None
    draft = _draft_of(raw, settings)
    logged = raw.get("logged") or {}
    assert isinstance(logged, dict)
    figures = _derived(raw, {name: gib_bytes(str(logged[name])) for name in FIGURES if name in logged})
    _check_kv_stage(raw, logged)
    tokens = logged.get("tokens")
    record = Record(raw=raw, model=model, settings=settings, version=version, figures=figures,
                    tokens=int(tokens) if tokens is not None else None, draft=draft)  # fmt: skip
    return _judged_refused(record)


def _draft_of(raw: dict[str, object], settings: LaunchSettings) -> ModelSpec | None:
    """The draft's model where the record names the draft's config (`draft_config`), as `plan --draft-model` gives it
    beside a launch that names its draft (`--speculative-config '{"model": …}'`); None where it names none. A launch
    that names no draft model is a record error. The launch itself is left as it is (the ledger reads the draft's
    class: `deployment.with_draft_config`)."""
    name = raw.get("draft_config")
    if not name:
        return None
    setup = engine_rules(settings.engine).deployment.setup(settings)
    if not setup.draft_model:
        raise ValueError(f"{raw['id']}: draft_config {name!r} beside a launch that names no draft model")
    return _config_model(_config_path(str(name)))


def _judged_refused(record: Record) -> Record:
    """The record as kvtop plans it: where `plan` refuses its launch by name (a P-EAGLE head whose config is not
    at hand), the refusal kept and the model set aside, so no fit or judgement plans it and the loader does not stop;
    the figures it printed that need no plan (CUDA's total, the free memory, non-torch) count as before."""
    try:
        record.ledger()  # the plan, kept on the record (`_plan`) for the judgement's inputs
    except UnsupportedModelError as refused:
        return replace(record, model=None, refusal=str(refused))
    return record


def _check_kv_stage(raw: dict[str, object], logged: dict[object, object]) -> None:
    """A `kv_stage` names a stage of a pipeline-parallel start that logged a KV figure, or says "min"."""
    if "kv_stage" not in raw:
        return
    stage, pp = raw["kv_stage"], int(str(raw.get("pp") or 1))
    if pp < 2 or "kv" not in logged:
        raise ValueError(f"{raw['id']}: kv_stage needs pp > 1 and a logged kv")
    if stage != KV_STAGE_MIN and not (isinstance(stage, int) and not isinstance(stage, bool) and 0 <= stage < pp):
        raise ValueError(f"{raw['id']}: kv_stage {stage!r} is neither a stage of {pp} nor {KV_STAGE_MIN!r}")


def load(engine: str, *, fresh: bool = False) -> list[Record]:
    """Every record of one engine's corpus file, in file order: resolved once per process and file text (`_resolved`),
    so the records and their memos are SHARED across the process — a test that patches a rule or a fit before judging
    passes `fresh=True` (resolved again: records no earlier plan or memo touched)."""
    text = (CORPUS / f"{engine}.jsonl").read_text()
    return list(_resolve_lines(text) if fresh else _resolved(text))


@cache
def _resolved(text: str) -> tuple[Record, ...]:
    """The records of one corpus file's text, resolved once per process: the test modules load the corpus ≈ 100 times
    at import, on each xdist worker, and each load planned every record again (≈ 1 s of one core; session 69). A record
    is a frozen value of its line, the committed configs and the engines' rules, so every load shares the same ones."""
    return _resolve_lines(text)


def _resolve_lines(text: str) -> tuple[Record, ...]:
    return tuple(resolve(json.loads(line)) for line in text.splitlines() if line.strip())


def load_all(*, fresh: bool = False) -> dict[str, list[Record]]:
    return {engine: load(engine, fresh=fresh) for engine in ENGINE_IDS if (CORPUS / f"{engine}.jsonl").exists()}


def by_id() -> dict[str, Record]:
    """Every engine's records by their `id` (`load_all`), for a reader that names the records it checks."""
    return {record.id: record for records in load_all().values() for record in records}


@dataclass(frozen=True)
class GpuTotal:
    """CUDA's total of a GPU model as a source printed it outside an engine's log (`gpus.jsonl`: a
    torch out-of-memory message's `total capacity`), with the source and the line quoted."""

    id: str
    gpu: str
    total_bytes: int
    source: str

    @property
    def source_key(self) -> str:
        return source_key(self.source)


def load_gpu_totals() -> list[GpuTotal]:
    path = CORPUS / "gpus.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    return [GpuTotal(id=str(r["id"]), gpu=str(r["gpu"]), total_bytes=gib_bytes(str(r["cuda_total"])),
                     source=str(r["source"])) for r in rows]  # fmt: skip

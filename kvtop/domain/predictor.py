"""Each engine's predicted ledger, from its launch settings and its GPUs' memory (the clean prediction).

`EnginePredictor` is the prediction step of assembling a node: the live node and the demo node both go
through it (`kvtop.commands.node_source`), so both predict the same way. The model loader is passed in:
the live node reads the hub or a local path, a demo its scenario's models.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kvtop.domain.calibration.estimate import calibrated_ledger
from kvtop.domain.deployment import SpecKind
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.stated_release import endpoint_release
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import KvtopError
from kvtop.domain.gpu_total_origin import GpuTotalOrigin, engine_visible_total, wsl2_total_origin
from kvtop.domain.host_desktop import HostDesktop
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.launch_model import launch_override
from kvtop.domain.ledger import Ledger
from kvtop.domain.model import ModelSpec
from kvtop.domain.observe import EngineInstance, GpuObservation, NodeObservation
from kvtop.domain.ports import ModelLoader


class EnginePredictor:
    """Predicts each engine's ledger from its launch settings and its GPUs' memory.

    Ledgers (and the reasons there is none) are cached per (model ref, settings, GPU total,
    GPU name, CUDA total measured, desktop seen), so a refresh re-predicts only what changed, and hands back the very
    same Ledger object (later steps memoise by it). A model that cannot be resolved, or a layout the model
    cannot run, becomes the reason string, never an exception.
    """

    def __init__(self, model_loader: ModelLoader) -> None:
        self._load_model = model_loader
        self._cache: dict[
            tuple[str, str, int, str | None, int | None, HostDesktop | None, ResolvedVersion | None], Ledger | str
        ] = {}

    def ledgers(
        self, node: NodeObservation, releases: Mapping[str, ResolvedVersion] | None = None,
        only: frozenset[str] | None = None,
    ) -> dict[str, Ledger | str]:  # fmt: skip
        """engine_id → its Ledger, or one line saying why there is none. An engine is sized by the
        GPUs of its ranks, or of its other processes (a server alone) when it has no rank. `releases`: engine_id →
        the release another source states for it (its startup log's, `--engine-log`), taken where neither its
        launch nor its endpoint names one. `only`: the engines to predict (None: every engine of the node)."""
        rank_gpus: dict[str, list[GpuObservation]] = {}
        process_gpus: dict[str, list[GpuObservation]] = {}
        for gpu in node.gpus:
            for process in gpu.processes:
                if process.engine_id is not None:
                    process_gpus.setdefault(process.engine_id, []).append(gpu)
                    if process.rank is not None:
                        rank_gpus.setdefault(process.engine_id, []).append(gpu)
        releases = releases or {}
        return {
            engine.engine_id: self.ledger(
                engine,
                rank_gpus.get(engine.engine_id) or process_gpus.get(engine.engine_id, []),
                node.desktop,
                releases.get(engine.engine_id),
            )
            for engine in node.engines
            if only is None or engine.engine_id in only
        }

    def ledger(
        self,
        engine: EngineInstance,
        gpus: list[GpuObservation],
        desktop: HostDesktop | None = None,
        release: ResolvedVersion | None = None,
    ) -> Ledger | str:
        """The ledger of `engine`, whose ranks run on `gpus` (the smallest GPU sizes the prediction), on a node where
        `desktop` shows a desktop shares the GPUs (None: none shown), at the release its launch names, else its
        endpoint's, else `release` (its startup log's), else the latest (an endpoint's words that name no release
        kvtop reads: the latest, said so as the endpoint's)."""
        settings = engine.settings
        if settings is None:
            return engine.settings_message or "no prediction: the launch command could not be read"
        version: ResolvedVersion | None = None
        if settings.engine_version is None and engine.live.version is not None:  # the endpoint's release sets the era
            version = endpoint_release(settings.engine, engine.live.version)  # words naming none: a named state
        if settings.engine_version is None and (version is None or version.text is None) and release is not None \
                and release.text is not None:  # the log's, where the endpoint names no release kvtop reads
            said = engine.live.version
            version = release if said is None else release.model_copy(update={
                "detail": f"{release.detail} (the engine's endpoint reports {said.said!r}, no release kvtop reads)"})
        if version is not None and version.text is not None:
            settings = settings.model_copy(update={"engine_version": version.text})
        ref = engine.model or settings.model
        if not ref:
            return "no prediction: the launch command names no model"
        sliced = [mig_slice(gpu) for gpu in gpus]
        unread = next((gpu for gpu in sliced if isinstance(gpu, str)), None)
        if unread is not None:
            return unread
        sized = [gpu for gpu in sliced if not isinstance(gpu, str) and gpu.total_bytes]
        if not sized:
            return "no prediction: the memory of this engine's GPUs could not be read"
        gpu = min(sized, key=lambda candidate: (candidate.total_bytes or 0) - (candidate.reserved_bytes or 0))
        total = gpu.total_bytes or 0
        measured = gpu_inputs(gpu, desktop)
        key = (ref, settings.model_dump_json(), total, gpu.name, measured.cuda_total_bytes, desktop, version)
        if key not in self._cache:
            self._cache[key] = self._predict(ref, settings, total, gpu.name, measured, version)
        return self._cache[key]

    def _predict(
        self, ref: str, settings: LaunchSettings, total: int, gpu_name: str | None, measured: MeasuredInputs,
        version: ResolvedVersion | None = None,
    ) -> Ledger | str:  # fmt: skip
        try:
            # the config the engine sized: its launch's override merged in (SGLang's --json-model-override-args)
            model = self._load_model(ref, override=launch_override(settings))
            draft = draft_model(settings, self._load_model)
            # the clean prediction: NVML's total and GPU name, CUDA's total where NVML v2 measured it, every other
            # pre-load term calibrated (docs/calibration.md)
            return calibrated_ledger(model, settings, gpu_total_bytes=total, gpu_name=gpu_name, measured=measured,
                                     draft=draft, version=version)  # fmt: skip
        except KvtopError as error:
            return f"no prediction for {ref}: {error}"


def mig_slice(gpu: GpuObservation) -> GpuObservation | str:
    """A GPU as its engine sees it: under MIG its one slice, with the MIG device's own NVML name and memory (NVML's
    'NVIDIA A100-SXM4-40GB MIG 3g.20gb' and its total, `sources.nvml` `MigInstance`), never the whole card's; a card
    split into several slices is a named state (which slice the engine runs on is not read), never the card's total."""
    if not gpu.mig_instances:
        return gpu
    if len(gpu.mig_instances) > 1:
        return (f"no prediction: GPU {gpu.index} is split into {len(gpu.mig_instances)} MIG slices and which one this "
                "engine runs on is not read; plan it with `kvtop plan --gpu-memory SIZE`, its slice's total")  # fmt: skip
    one = gpu.mig_instances[0]
    return gpu.model_copy(update={"name": one.name, "total_bytes": one.total_bytes, "used_bytes": one.used_bytes,
                                  "free_bytes": one.free_bytes, "reserved_bytes": one.reserved_bytes,
                                  "memory_api": one.memory_api})  # fmt: skip


def gpu_inputs(gpu: GpuObservation, desktop: HostDesktop | None = None) -> MeasuredInputs:
    """What a live GPU measures for a prediction before its engine's own figures: its total is NVML's (said so,
    `GpuTotalOrigin.NVML`), and the engines' total is NVML v2's less the driver's reserved where v2 answered
    (`gpu_total_origin.engine_visible_total`, measured), else the per-model fit (calibrated) stands in; a desktop the node
    showed (`desktop`) is the fact `plan --desktop` states, measured (`MeasuredInputs.desktop_seen`). What shows a
    desktop on a node is WSL2 (its kernel, `/dev/dxg`: `host_desktop`), where NVML's total is the card's whole memory
    and CUDA's too (`GpuTotalOrigin.WSL2`: the calibration's WSL2 total stands in, not NVML's reserved split)."""
    origin = GpuTotalOrigin.NVML if desktop is None else wsl2_total_origin(gpu.name, GpuTotalOrigin.NVML)
    return MeasuredInputs(
        gpu_total_origin=origin,
        cuda_total_bytes=None if origin is GpuTotalOrigin.WSL2 else engine_visible_total(gpu.total_bytes, gpu.reserved_bytes),
        desktop=desktop is not None,
        desktop_seen=desktop,
    )


def draft_model(settings: LaunchSettings, loader: Callable[[str], ModelSpec]) -> ModelSpec | None:
    """The speculative draft the launch names (`--speculative-draft-model-path`, a vLLM `model`…), read with
    the same loader as the model; None where it names none or it cannot be read (its weights are then a
    named not-modelled term of the ledger, never a guess)."""
    setup = engine_rules(settings.engine).deployment.setup(settings)
    if setup.spec_kind is not SpecKind.DRAFT_MODEL or not setup.draft_model:
        return None
    try:
        return loader(setup.draft_model)
    except KvtopError:
        return None

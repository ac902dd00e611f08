"""What `explain` is asked: one frozen value handed from the command (or the TUI's `--engine-log`) through
`kvtop.domain.explain.explain` to the engine's own explainer, so that no layer repeats eight parameters."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from kvtop.domain.calibration.terms import TermSource
from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.stated_release import stated_release
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import InputError
from kvtop.domain.gpu_total_origin import GpuTotalOrigin, total_origin
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec


class ExplainRequest(BaseModel):
    """A parsed startup log and what kvtop rebuilds it with.

    `gpu_total_bytes`/`gpu_name` (e.g. 'A100-80GB') are the GPU when known (None: not known, an estimate
    stands in), `gpu_total_origin` where that total came from (`gpu_total_source` says it measured or assumed);
    `given` holds measured figures from the command line, which fill in what the log lacks; `version` is whose rules
    apply and why (reported with the result)."""

    model_config = ConfigDict(frozen=True)

    log: EngineLog
    model: ModelSpec
    settings: LaunchSettings
    gpu_total_bytes: int | None = None
    gpu_name: str | None = None
    # where `gpu_total_bytes` came from, as its chooser said it (explain's --gpu / --gpu-memory, a live node's NVML);
    # None where no GPU was named: the ledger's total is then a stand-in, said so
    gpu_total_origin: GpuTotalOrigin | None = None
    given: MeasuredInputs = MeasuredInputs()
    load_mtp: bool = False
    version: ResolvedVersion = ResolvedVersion()

    @model_validator(mode="before")
    @classmethod
    def _one_release(cls, data: Any) -> Any:
        """The release is one value: `version`, which every explainer reads, and `settings.engine_version`, the same
        text (what `plan` and the ledger read). One given fills the other; two different ones are refused as every bad
        input is (`InputError`, naming --engine-version: one line, exit 2, no traceback), not as pydantic's
        ValidationError."""
        if not isinstance(data, dict) or data.get("settings") is None:
            return data  # no settings to read: pydantic says what is missing
        settings = LaunchSettings.model_validate(data["settings"])
        version = ResolvedVersion.model_validate(data.get("version") or {})
        stated, resolved = settings.engine_version, version.text
        if stated is not None and resolved is not None and stated != resolved:  # an InputError passes pydantic as is
            raise InputError(f"two engine releases: the settings say {stated!r}, the version resolved {resolved!r}",
                             field="--engine-version")  # fmt: skip
        if stated is not None and resolved is None:
            return {**data, "version": stated_release(settings)}
        if resolved is not None and stated is None:
            return {**data, "settings": settings.model_copy(update={"engine_version": resolved})}
        return data

    def with_settings(self, settings: LaunchSettings) -> ExplainRequest:
        """The same request with other settings (a log's KV dtype applied, a cause candidate tried); a candidate that
        names another release (vLLM's older token print) carries that release as its version: the two stay one."""
        if settings.engine_version == self.settings.engine_version:
            return self.model_copy(update={"settings": settings})
        return self.model_copy(update={"settings": settings, "version": stated_release(settings)})

    @property
    def gpu_total_source(self) -> TermSource:
        """Where the GPU total comes from: measured where it is the engine's own (the operator's --gpu-memory,
        NVML's: `GpuTotalOrigin.is_engines_total`); else assumed: the GPU table's nvidia-smi total for the model named
        (--gpu; `kvtop.domain.gpus`), which the card is taken to report, or a larger memory variant's
        (`given_total_origin`), both a total CUDA reports less of; and no total at all (a stand-in is never
        measured). A total handed in without its origin is what `gpu_total_origin.total_origin` infers, as every reader takes it."""
        if self.gpu_total_bytes is None:
            return "assumed"
        origin = total_origin(self.gpu_name, self.gpu_total_bytes, self.gpu_total_origin)
        return "measured" if origin.is_engines_total else "assumed"

    def solved_total(self, stated: int | None) -> tuple[TermSource, GpuTotalOrigin | None]:
        """Where the total an explainer solves with came from, as (source, origin): the log's own where it prints
        one (`stated`: CUDA's, which the engine measured, no chooser's origin), else this request's
        (`gpu_total_source`, `gpu_total_origin`; a stand-in assumed). One answer for every engine's `EstimateRun`,
        so that a log's total is never labelled as --gpu's table figure nor a table figure as measured."""
        if stated is not None:
            return "measured", None
        if self.gpu_total_bytes is None:  # no total: a stand-in, which no chooser's origin describes
            return "assumed", None
        return self.gpu_total_source, self.gpu_total_origin

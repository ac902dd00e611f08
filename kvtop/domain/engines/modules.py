"""An engine's rule modules that most commands never need, imported on first use.

Every engine package holds the same eight (`diagnosis`, `explain`, `span`, `calibration`, `deployment`,
`log_lines`, `demo`, `architectures`), each a module that satisfies its protocol; `plan` never imports
diagnosis, explain, its log reader or its demo behaviour.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from kvtop.domain.calibration.inputs import EngineCalibration
    from kvtop.domain.deployment import DeploymentRules
    from kvtop.domain.engine_architectures import EngineArchitectures
    from kvtop.domain.engine_simulation import EngineSimulation
    from kvtop.domain.engines.base import EngineDiagnosis, EngineExplainer
    from kvtop.domain.log_dialect import LogDialect
    from kvtop.domain.span import EngineSpanRule


class EngineModules:
    """`kvtop.domain.engines.<id>.<module>` for each rule module, imported when first asked for."""

    id: str

    def _module(self, name: str) -> ModuleType:
        return importlib.import_module(f"kvtop.domain.engines.{self.id}.{name}")

    @property
    def diagnosis(self) -> EngineDiagnosis:
        """How it prices causes and spells fixes."""
        return cast("EngineDiagnosis", self._module("diagnosis"))

    @property
    def explainer(self) -> EngineExplainer:
        """How it rebuilds a logged capacity."""
        return cast("EngineExplainer", self._module("explain"))

    @property
    def span_rule(self) -> EngineSpanRule:
        """How it spreads over nodes and pairs prefill with decode."""
        return cast("EngineSpanRule", self._module("span"))

    @property
    def calibration(self) -> EngineCalibration:
        """Its fitted pre-load terms (docs/calibration.md)."""
        return cast("EngineCalibration", self._module("calibration"))

    @property
    def deployment(self) -> DeploymentRules:
        """Its deployment beside the model: drafts, experts, LoRA, host KV."""
        return cast("DeploymentRules", self._module("deployment"))

    @property
    def log_dialect(self) -> LogDialect:
        """What its startup log looks like (its `log_lines` module's `DIALECT`)."""
        dialect: LogDialect = self._module("log_lines").DIALECT
        return dialect

    @property
    def simulation(self) -> EngineSimulation:
        """How it behaves on a demo node (its `demo` module)."""
        return cast("EngineSimulation", self._module("demo"))

    @property
    def architectures(self) -> EngineArchitectures:
        """Which model classes it registers, by release (a launch of another is refused)."""
        return cast("EngineArchitectures", self._module("architectures"))

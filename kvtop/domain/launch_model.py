"""The model a launch runs: the launch's config override (an engine's `config_override` hook, SGLang's
--json-model-override-args) read from its flags, for the model loader's `override` (`ports.ModelLoader`), which merges
it through `model_config.model_from_config` as `kvtop plan` does (no second path). One function for the live node's
prediction (`predictor.EnginePredictor`) and the planner (ui/screens/planner.py), so both size the config the engine
sized."""

from __future__ import annotations

from kvtop.domain.config_override import ConfigOverride
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import KvtopError
from kvtop.domain.launch import LaunchSettings


def stated_override(settings: LaunchSettings) -> ConfigOverride | None:
    """The override the launch's flags make of the model's config at the release it states (None: none); an
    InputError naming the flag where the engine would not read its value (`kvtop plan` says it)."""
    return engine_rules(settings.engine).config_override(settings, ResolvedVersion(text=settings.engine_version))


def launch_override(settings: LaunchSettings | None) -> ConfigOverride | None:
    """`stated_override`, None where its value is one the engine would not read (the launch's flag check says why,
    the model stays as loaded)."""
    if settings is None:
        return None
    try:
        return stated_override(settings)
    except KvtopError:
        return None

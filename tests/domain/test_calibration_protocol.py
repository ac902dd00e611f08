"""Every engine's calibration module holds every member of the protocol the corpus and a plan read it through.

`modules.EngineModules.calibration` casts the module to `inputs.EngineCalibration`, so a member an engine lacks would
be an AttributeError at the first plan that reads it, not a type error. An engine with no rule of its own re-exports
`calibration/defaults.py`'s member; shared code reads every member without asking whether it exists.
"""

from __future__ import annotations

import pytest
from typing_extensions import get_protocol_members

from kvtop.domain.calibration import defaults
from kvtop.domain.calibration.inputs import EngineCalibration
from kvtop.domain.engines.catalogue import ENGINE_IDS, engine_module

MEMBERS = get_protocol_members(EngineCalibration)
METHODS = {"terms", "context", "logged_terms", "fit_features", "fit_offset", "weights_built_ahead"}


def test_the_protocol_declares_the_members_read_by_name() -> None:
    """The members the corpus's fits and the pre-load estimate once read with getattr and a default (session 54)."""
    assert {"READS_FREE_AFTER_LOAD", "FEWER_ROWS_FEATURES", "fit_offset", "weights_built_ahead"} <= MEMBERS
    assert METHODS <= MEMBERS


@pytest.mark.parametrize("engine", ENGINE_IDS)
def test_each_engine_holds_every_member(engine: str) -> None:
    module = engine_module(engine, "calibration")
    missing = sorted(name for name in MEMBERS if not hasattr(module, name))
    assert not missing, f"{engine}'s calibration lacks {missing} (re-export calibration/defaults.py's)"
    assert all(callable(getattr(module, name)) for name in METHODS)
    assert isinstance(module.READS_FREE_AFTER_LOAD, bool)


@pytest.mark.parametrize("engine", ENGINE_IDS)
def test_fewer_rows_features_name_the_engines_fits(engine: str) -> None:
    """Each fit fitted on fewer features is one of the engine's fits, kept on indices of its own features."""
    module = engine_module(engine, "calibration")
    for key, kept in module.FEWER_ROWS_FEATURES.items():
        names = module.FIT_TERMS[key][1]
        assert kept and all(0 <= index < len(names) for index in kept), (key, kept, names)


def test_the_defaults_are_the_rules_an_engine_without_one_had() -> None:
    """What the readers' getattr defaults were: the free memory after the load read, no fewer-features fit, no offset,
    no engine built ahead."""
    assert defaults.READS_FREE_AFTER_LOAD is True and defaults.FEWER_ROWS_FEATURES == {}
    inputs = None  # neither default reads the launch
    assert defaults.fit_offset("any.key", inputs) == 0  # type: ignore[arg-type]
    assert defaults.weights_built_ahead(inputs) is False  # type: ignore[arg-type]

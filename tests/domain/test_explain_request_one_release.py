"""The release an explain request carries is one value: `ExplainRequest.version`, which every engine's explainer
reads, and `settings.engine_version`, the text `predict` reads. One given fills the other, two that differ are refused,
and a cause candidate that names another release (vLLM's print before v0.21) carries that release as its version."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.errors import InputError
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.launch import parse_flags
from kvtop.sources.engine_logs import parse_engine_log
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

MODEL = load_model(str(CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json"))
LOG = parse_engine_log("")


def test_the_flags_release_is_the_version_every_explainer_reads() -> None:
    request = ExplainRequest(log=LOG, model=MODEL, settings=parse_flags("vllm", ["--engine-version", "0.8.2"]))
    assert (request.version.text, request.version.source) == ("0.8.2", VersionSource.FLAG)


def test_a_resolved_version_is_the_settings_release() -> None:
    version = ResolvedVersion(text="0.10.1", source=VersionSource.LOG_DATES, approximate=True)
    request = ExplainRequest(log=LOG, model=MODEL, settings=parse_flags("vllm", []), version=version)
    assert request.settings.engine_version == "0.10.1" and request.version == version


def test_two_releases_are_refused_as_bad_input_naming_the_field() -> None:
    """Refused as every bad input explain is given is (`InputError`: the CLI's one line and exit 2, the TUI's
    notice), not as pydantic's ValidationError, which neither catches."""
    with pytest.raises(InputError, match="two engine releases") as refused:
        ExplainRequest(
            log=LOG, model=MODEL, settings=parse_flags("vllm", ["--engine-version", "0.8.2"]),
            version=ResolvedVersion(text="0.9.0", source=VersionSource.FLAG),
        )  # fmt: skip
    assert not isinstance(refused.value, ValidationError) and refused.value.field == "--engine-version"
    assert str(refused.value) == "--engine-version: two engine releases: the settings say '0.8.2', the version resolved '0.9.0'"


def test_a_candidate_naming_another_release_carries_it_as_its_version() -> None:
    request = ExplainRequest(log=LOG, model=MODEL, settings=parse_flags("vllm", ["--engine-version", "0.21.0"]))
    older = request.with_settings(request.settings.model_copy(update={"engine_version": "0.20"}))
    assert older.version.text == "0.20" and older.version.release is not None
    same = request.with_settings(request.settings.model_copy(update={"kv_cache_dtype": "fp8_e4m3"}))
    assert same.version == request.version

"""A model class planned at an SGLang release before the one that registers it is refused by name (class_releases.py).

Expected first releases from the wheels themselves, not kvtop: tests/data/architectures/sglang_first_releases.json,
written by benchmarks/engine_registries/sglang_first_releases.py from every SGLang wheel 0.4.0 … 0.5.23 (each
`EntryClass` of srt/models/*.py, and each wheel's transformers pin). The engine's words: srt/models/registry.py
`_raise_for_unsupported` (0.4.0, 0.4.6.post5) and srt/model_loader/utils.py `resolve_transformers_arch` (0.4.7,
0.5.3, 0.5.6.post2, 0.5.23). And the corpus: every SGLang log that names its release ran its class there.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.calibration.corpus import load
from kvtop.cli import main
from kvtop.domain.engines.sglang import architectures
from kvtop.domain.engines.sglang.class_releases import FIRST, PINS, first_release_check, pinned_transformers
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource, parse_release
from tests.data_paths import CONFIGS, DATA

READ = json.loads((DATA / "architectures" / "sglang_first_releases.json").read_text())


def _at(text: str, approximate: bool = False) -> ResolvedVersion:
    return ResolvedVersion(text=text, source=VersionSource.LOG_DATES if approximate else VersionSource.FLAG,
                           approximate=approximate)  # fmt: skip


def test_the_table_is_the_wheels() -> None:
    rows = READ["classes"]
    assert {name: (row.first, row.file) for name, row in FIRST.items()} == {
        name: (row["first"], row["file"]) for name, row in rows.items()
    }
    assert not [name for name, row in rows.items() if row["absent_after_first"]]  # none left and came back
    for release, pin in READ["transformers_pins"].items():
        key = parse_release(release)
        assert key is not None
        if key >= parse_release(PINS[0][0]):  # type: ignore[operator]
            assert pinned_transformers(key) == pin, release


@pytest.mark.parametrize(("architecture", "before", "first"), [
    ("Qwen3NextForCausalLM", "0.5.2rc2", "0.5.2"),
    ("DeepseekV32ForCausalLM", "0.5.3rc0", "0.5.3rc2"),
    ("GlmMoeDsaForCausalLM", "0.5.8.post1", "0.5.9"),
    ("Qwen3_5MoeForConditionalGeneration", "0.5.8.post1", "0.5.9"),
    ("DeepseekV4ForCausalLM", "0.5.11", "0.5.12"),
    ("KimiK3ForConditionalGeneration", "0.5.16", "0.5.17"),
])  # fmt: skip
def test_refused_before_and_registered_from_the_first_release(architecture: str, before: str, first: str) -> None:
    row = READ["classes"][architecture]
    assert (row["before"], row["first"]) == (before, first)
    refused = first_release_check(architecture, _at(before), custom_code=False)
    assert refused is not None and refused.state == "refused"
    assert refused.message.startswith(f"SGLang {before} has no {architecture} (added in {first}): pick a later "
                                      "--engine-version")  # fmt: skip
    assert refused.engine_words == (f"Cannot find model module. '{architecture}' is not a registered model in the "
                                    "Transformers library")  # fmt: skip
    registered = first_release_check(architecture, _at(first), custom_code=False)
    assert registered is not None and registered.state == "registered"


def test_before_the_transformers_backend_the_registry_words() -> None:
    """Qwen3ForCausalLM first in 0.4.5.post2; 0.4.5.post1 has no TransformersForCausalLM (first in 0.4.7)."""
    found = first_release_check("Qwen3ForCausalLM", _at("0.4.5.post1"), custom_code=False)
    assert found is not None and found.state == "refused"
    assert found.engine_words == "Model architectures ['Qwen3ForCausalLM'] are not supported for now."


def test_where_the_pinned_transformers_has_the_class_it_is_not_checked() -> None:
    """Lfm2ForCausalLM: SGLang's own from 0.5.9; transformers 4.57.1 (0.5.8's pin) defines it (modeling_lfm2.py)."""
    found = first_release_check("Lfm2ForCausalLM", _at("0.5.8"), custom_code=False)
    assert found is not None and found.state == "not_checked" and "transformers 4.57.1" in found.message


def test_remote_code_and_an_inferred_release_are_not_refused() -> None:
    assert first_release_check("GlmMoeDsaForCausalLM", _at("0.5.8"), custom_code=True).state == "custom_code"  # type: ignore[union-attr]
    inferred = first_release_check("GlmMoeDsaForCausalLM", _at("0.5.8", approximate=True), custom_code=False)
    assert inferred is not None and inferred.state == "not_checked"
    assert first_release_check("GlmMoeDsaForCausalLM", ResolvedVersion(), custom_code=False) is None


def test_every_corpus_log_naming_its_release_ran_a_registered_class() -> None:
    judged = 0
    for record in load("sglang"):
        if record.model is None or record.version.release is None:
            continue
        found = architectures.check(record.model, record.settings, record.version)
        judged += record.model.architecture in FIRST
        assert found.state != "refused", (record.id, found.message)
    assert judged >= 80


def test_plan_at_a_release_before_the_class_exits_2_with_its_name(capsys: pytest.CaptureFixture[str]) -> None:
    config = str(CONFIGS / "heldout" / "zai-org--GLM-5-FP8.json")
    args = ["plan", "--engine", "sglang", "--model", config, "--gpu", "H200", "--tp-size", "8", "--no-calibration-store"]
    assert main([*args, "--engine-version", "0.5.6.post2"]) == 2  # a release the registry lists read: its words
    err = capsys.readouterr().err
    assert err.startswith("kvtop: error: --model: SGLang 0.5.6.post2 has no GlmMoeDsaForCausalLM (added in 0.5.9): "
                          "pick a later --engine-version; it stops with \"Cannot find model module.")  # fmt: skip
    assert main([*args, "--engine-version", "0.5.8"]) == 2  # a release only class_releases.py reads
    assert "SGLang 0.5.8 has no GlmMoeDsaForCausalLM (added in 0.5.9)" in capsys.readouterr().err

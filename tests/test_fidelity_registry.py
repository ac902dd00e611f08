"""docs/fidelity_registry.md is what the kvtop under test says against the registry sweep's committed figures.

The engines' figures (tests/data/engine_diff/registry/<engine>-<version>.json) come from building each engine's
own model class on the meta device (benchmarks/engine_diff/registry_sweep.py, minutes per engine); kvtop's side
is recomputed here, so the committed doc cannot drift from the kvtop it describes. After a change to kvtop's
rules: `python benchmarks/engine_diff/registry_render.py`.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_configs import REGISTRY_DATA, planned_classes, real_configs
from benchmarks.engine_diff.registry_render import DOC, SWEPT, VERSIONS, render
from benchmarks.engine_diff.registry_sweep import TPS, load_rows

# the tests reading `rendered` (kvtop's side of every registry row, ≈ 80 s of a loaded core) run on one xdist worker
# under `--dist loadgroup` (.ci/run), so the module fixture renders once per run, not once on each worker
ONE_RENDER = pytest.mark.xdist_group("fidelity-registry-render")
REGENERATE = "rerun `python benchmarks/engine_diff/registry_render.py` and commit docs/fidelity_registry.md"


@pytest.fixture(scope="module")
def rendered() -> str:
    return render()


@ONE_RENDER
def test_the_doc_is_what_this_kvtop_says(rendered: str) -> None:
    assert DOC.read_text() == rendered, REGENERATE


def test_every_real_config_was_built_by_each_engine_at_tp_1_and_2() -> None:
    names = {c.name for c in real_configs()}
    assert len(names) >= 100
    for engine in [e for e in SWEPT if load_rows(e, VERSIONS[e])]:  # an engine not swept yet says "not run"
        seen = {(r["config"], r["tp"]) for r in load_rows(engine, VERSIONS[engine])}
        missing = sorted((n, tp) for n in names for tp in TPS if (n, tp) not in seen)
        assert not missing, f"{engine}: {len(missing)} missing, e.g. {missing[:3]}; rerun registry_sweep.py --set real"


@ONE_RENDER
def test_every_registered_class_has_a_row(rendered: str) -> None:
    for engine in SWEPT:
        for name, _, _ in planned_classes(engine):
            assert f"\n| {name} |" in rendered, name


def test_rows_keep_the_engine_figures_only() -> None:
    """A row holds what the engine said, never a kvtop figure (kvtop's side is recomputed)."""
    for engine in SWEPT:
        path = REGISTRY_DATA / f"{engine}-{VERSIONS[engine]}.json"
        if not path.exists():
            continue
        body = json.loads(path.read_text())
        assert body["engine"] == engine and body["version"] == VERSIONS[engine]
        for row in body["rows"]:
            assert not {k for k in row if "kvtop" in k}, row["config"]
            if row["status"] == "ok":
                assert row["stages"] and all(s["param_bytes"] for s in row["stages"]), row["config"]


def test_checkpoint_heads_name_real_configs_with_their_evidence() -> None:
    """vllm_runner's checkpoint-head stand-in reads tests/data/engine_diff/registry/checkpoint_heads.json: each entry
    a real config of the sweep whose text config does not tie, an lm_head tensor name and its source."""
    from benchmarks.engine_diff.registry_sweep import CHECKPOINT_HEADS

    configs = {c.name: c for c in real_configs()}
    heads = json.loads(CHECKPOINT_HEADS.read_text())["heads"]
    assert heads
    for name, head in heads.items():
        data = configs[name].data()
        assert not (data.get("text_config") or data).get("tie_word_embeddings", False), name
        assert head["tensor"].endswith("lm_head.weight") and head["source"], name


@ONE_RENDER
def test_a_generic_class_read_through_an_entry_says_which(rendered: str) -> None:
    """HfMoondream has no entry of its own, but its judged config (configs/HfMoondream.json, composed from vLLM 0.33.0's
    Moondream3Config, which registry.py:549 serves the class with) states model_type "moondream3": the plan reads it
    with that entry and says so, and the kvtop column says the same, not a bare "generic"."""
    config = json.loads((REGISTRY_DATA / "configs" / "HfMoondream.json").read_text())
    assert config["model_type"] == "moondream3"
    row = next(line for line in rendered.splitlines() if line.startswith("| HfMoondream |"))
    assert row.split(" | ")[1] == "generic: read as moondream3 by model_type"

"""docs/fidelity.md is what the kvtop under test says against the engines' committed figures.

The engines' figures (tests/data/engine_diff/<engine>-<version>.json) come from running their own
sizing code (benchmarks/engine_diff/run.py, minutes per engine); kvtop's side of the table is
recomputed here from the same inputs, so the committed table cannot drift from the kvtop it
describes. After a change to kvtop's rules: `python benchmarks/engine_diff/run.py --table-only`.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.cases import DEFAULT, FLAG_SETS, IN_PROCESS, config_names, has_experts
from benchmarks.engine_diff.engines import ENGINES, GPU_GENERATIONS, TPS
from benchmarks.engine_diff.render import render
from benchmarks.engine_diff.table import DOC, fixture_paths, load_fixtures, rows

REGENERATE = "rerun `python benchmarks/engine_diff/run.py --table-only` and commit docs/fidelity.md"


def _fixtures() -> list[dict]:
    return load_fixtures()


def test_every_engine_has_two_versions_with_figures() -> None:
    versions: dict[str, set[str]] = {}
    for fixture in _fixtures():
        versions.setdefault(fixture["engine"], set()).add(fixture["version"])
    for engine in ENGINES:
        assert len(versions.get(engine, set())) >= 2, (
            f"{engine}: fixtures for {sorted(versions.get(engine, []))}"
        )


CURRENT = {"vllm": "0.33.0", "sglang": "0.5.23"}  # the versions the flag grid runs on


def test_fixtures_cover_the_default_grid_and_name_each_harness_stand_ins() -> None:
    """The default grid (TP × KV dtype × GPU) of every config a version's default grid holds is
    complete, and every harness that produced a row names its stand-ins and packages in the head."""
    for fixture in _fixtures():
        spec = ENGINES[fixture["engine"]]
        rows = fixture["results"]
        seen = {(r["config"], r["tp"], r["kv_dtype"], r["gpu"]) for r in rows if r.get("variant", DEFAULT) == DEFAULT}
        grid_configs = {config for config, *_ in seen}
        missing = [
            (c, tp, d, g)
            for c in sorted(grid_configs)
            for tp in TPS
            for d in spec.kv_dtypes
            for g in GPU_GENERATIONS
            if (c, tp, d, g) not in seen
        ]
        assert not missing, f"{fixture['engine']} {fixture['version']}: {len(missing)} missing, e.g. {missing[:3]}"
        harnesses = {r.get("harness", IN_PROCESS) for r in rows}
        assert harnesses <= set(fixture["stand_ins"]), f"{fixture['version']}: stand-ins of {harnesses} not all named"
        assert harnesses <= set(fixture["packages"]), f"{fixture['version']}: packages of {harnesses} not all named"


def test_the_flag_sets_file_holds_one_row_a_line() -> None:
    """The flag sweep's rows are a file apart, one row a line (a rerun's diff is one line per row
    changed, not 100,000+ lines of indented JSON)."""
    for engine, version in CURRENT.items():
        _, flags = fixture_paths(engine, version)
        text = flags.read_text()
        rows = json.loads(text)["results"]
        assert len(text.splitlines()) < len(rows) + 60, f"{flags.name}: {len(text.splitlines())} lines"
        assert all(r.get("variant", DEFAULT) != DEFAULT for r in rows)


def test_the_current_versions_have_every_flag_set_on_every_config() -> None:
    """Each (config, flag set) of the current versions has a row: the engine's answer, or a named
    "not run" (a harness error, counted apart in the table)."""
    for fixture in _fixtures():
        if CURRENT.get(fixture["engine"]) != fixture["version"]:
            continue
        seen = {(r["config"], r.get("variant", "default")) for r in fixture["results"]}
        missing = [
            (c, f.name) for c in config_names() for f in FLAG_SETS
            if (c, f.name) not in seen and not (f.moe_only and not has_experts(c))
            and not (f.configs and c not in f.configs)
        ]  # fmt: skip
        assert not missing, f"{fixture['engine']} {fixture['version']}: {len(missing)} missing, e.g. {missing[:4]}"


def test_a_plain_dense_row_matches_the_engines_arithmetic() -> None:
    """Llama-3.1-8B, TP 1, bf16 KV, 40 GiB of KV memory under vLLM: 32 layers × 8 KV heads × 128 × 2 (K, V)
    × 2 B = 131,072 B per token; 40 GiB / (16 × 131,072 B) = 20,480 blocks = 327,680 tokens."""
    fixture = next(f for f in _fixtures() if f["engine"] == "vllm" and f["version"] == "0.33.0")
    row = next(
        r
        for r in fixture["results"]
        if (r["config"], r.get("variant", "default"), r["tp"], r["kv_dtype"], r["gpu"])
        == ("meta-llama--Llama-3.1-8B", "default", 1, "auto", "sm90")
    )
    assert (row["num_blocks"], row["tokens_logged"], row["bytes_per_block"]) == (
        20_480,
        327_680,
        16 * 131_072,
    )


def test_committed_table_matches_the_kvtop_it_describes() -> None:
    if not DOC.exists():
        pytest.fail(f"{DOC} is missing: {REGENERATE}")
    expected = DOC.read_text().splitlines()
    actual = render(rows()).splitlines()
    if actual == expected:
        return
    changed = [
        f"  committed: {e}\n  now:       {a}" for e, a in zip(expected, actual, strict=False) if e != a
    ][:8]
    detail = "\n".join(changed) or f"  {len(expected)} lines committed, {len(actual)} now"
    pytest.fail(f"docs/fidelity.md no longer matches kvtop ({REGENERATE}):\n{detail}")

"""The differential harness tells the truth (issue 33): what its committed answers must show.

The engines run in their own venvs (benchmarks/engine_diff/run.py, hours on a CPU machine); what
they answered is committed under tests/data/engine_diff/. These tests read those answers and the
committed files: every stand-in was checked in every forked run, two cases give the same figures in
both orders, pipeline parallelism and the flag sets are in the table with readings, and no committed
file names a path of the machine that made it.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from benchmarks.engine_diff.cases import FLAG_SETS, FORKED, config_names
from benchmarks.engine_diff.order_check import PAIR, RESULT, pair_for
from benchmarks.engine_diff.table import DOC, load_fixtures
from kvtop.domain.wording import GIB

ROOT = Path(__file__).resolve().parents[1]


def _fixtures() -> list[dict[str, Any]]:
    return load_fixtures()


def _forked(fixture: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in fixture["results"] if r.get("harness") == FORKED]


def test_every_forked_run_checked_its_shells_and_a_failed_check_is_never_a_figure() -> None:
    checked = 0
    for fixture in _fixtures():
        for row in _forked(fixture):
            if row["status"] == "ok":
                # an SGLang release before the KVCacheConfigurator runs ModelRunner.__init__ itself: no shell
                # (sglang_legacy.py: `shells` {}, its cell_size None)
                legacy = fixture["engine"] == "sglang" and row.get("shells") == {} and row.get("cell_size") is None
                assert row.get("shells") or legacy, f"{fixture['engine']} {row['config']}: no stand-in check recorded"
                failed = {label: c["not_in_class"] for label, c in row["shells"].items() if c["not_in_class"]}
                assert not failed, f"{row['config']}: a shell held fields its class never assigns: {failed}"
                checked += 1
    assert checked > 500


def test_sglang_sizes_qwen3_vl_from_its_real_model_not_a_shell_with_no_layers() -> None:
    """Issue 33: SGLang's model shell had no submodules, so Qwen3-VL's end_layer read 0 and the runner
    printed 32,768 tokens. Built on meta, the model has its 36 layers: cell = 36 layers × 8 KV heads ×
    128 × 2 (K, V) × 2 B = 147,456 B; rest 40 GiB − SGLang's 1 GiB multimodal reserve = 39 GiB;
    39 × 2^30 / 147,456 = 283,989.33 → 283,989 tokens (page 1 on sm90). The forked run is the order
    check's (tests/data/engine_diff/checks/order-check.json)."""
    check = json.loads(RESULT.read_text())["sglang-0.5.23"]
    assert check["cases"][0] == PAIR[0]  # Qwen3-VL, TP 1, KV auto, sm90, forked: run first and run second
    row = check["forked"]["a_then_b"][0]
    assert row == check["forked"]["b_then_a"][1]
    assert row["cell_size"] == 36 * 8 * 128 * 2 * 2
    assert row["max_total_num_tokens"] == 39 * GIB // (36 * 8 * 128 * 2 * 2) == 283_989
    assert row["stages"][0]["layers"] == [0, 36]


def test_two_cases_give_the_same_figures_in_both_orders_for_every_engine_version() -> None:
    checks = json.loads(RESULT.read_text())
    versions = {f"{f['engine']}-{f['version']}" for f in _fixtures() if _forked(f)}
    assert versions and versions <= set(checks), f"no order check for {sorted(versions - set(checks))}"
    for name, check in checks.items():
        engine, version = name.split("-", 1)
        assert check["cases"] == list(pair_for(engine, version)), name
        forked = check["forked"]
        assert forked["same_in_both_orders"], f"{name}: {forked}"
        a_then_b, b_then_a = forked["a_then_b"], forked["b_then_a"]
        assert a_then_b == b_then_a[::-1] and all(f["status"] == "ok" for f in a_then_b), name


def test_the_order_check_catches_the_leak_issue_33_found() -> None:
    """The control ran the same two orders with the cases in the runner's own process (the old
    harness's way): SGLang 0.5.23 gives Qwen2.5-VL 730,258 tokens after Qwen3-VL and 747,154 first,
    as issue 33 reported, so the check fails there; forked, both orders give 747,154."""
    check = json.loads(RESULT.read_text())["sglang-0.5.23"]
    control = check["in_process_control"]
    assert not control["same_in_both_orders"]
    assert control["a_then_b"][1]["max_total_num_tokens"] == 730_258
    assert control["b_then_a"][0]["max_total_num_tokens"] == 747_154
    assert check["forked"]["a_then_b"][1]["max_total_num_tokens"] == 747_154


def test_pipeline_parallel_rows_are_in_the_table_with_their_readings() -> None:
    text = DOC.read_text()
    pp_rows = [line for line in text.splitlines() if re.match(r"\| [^|]+ \| pp[24] \| \d+ \| [24] \|", line)]
    assert len(pp_rows) >= 2 * len(config_names()), f"{len(pp_rows)} PP rows"
    unread = [line for line in pp_rows if "| different |" in line and "? unexplained" in line]
    assert not unread, f"PP differences without a reading: {unread[:3]}"


def test_the_counts_state_the_inputs_they_cover_and_cover_the_flag_sweep() -> None:
    text = DOC.read_text()
    counts = [line for line in text.splitlines() if line.startswith("| vllm |") or line.startswith("| sglang |")]
    flag_rows = [line for line in counts if "| flag sets |" in line]
    assert flag_rows, "no engine version's counts cover the flag sets"
    for line in flag_rows:
        assert f"{len(FLAG_SETS)} flag sets" in line and f"{len(config_names())} configs" in line, line
    for line in counts:
        assert re.search(r"\d+ configs × .* × layouts .* × KV .* × sm\d+", line), line


# A path of a checkout of this repository (its own layout under some absolute folder), anywhere.
# (A `.venv/` alone is not one: the UI's scenarios show other users' processes run from theirs.)
CHECKOUT_PATH = re.compile(r"(?<![\w.:/])/(?:[\w.+-]+/)+?(?:\.cache/engine_diff|tests/data/|benchmarks/engine_diff)")
# Any absolute path of two or more segments, in the files the harness writes.
ANY_PATH = re.compile(r"(?<![\w.:/<>])/(?:[\w.+-]+/)+[\w.+-]+")
HARNESS_WRITES = ("tests/data/engine_diff/", "docs/fidelity.md")


def _committed() -> list[str]:
    done = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip("not a git checkout: the committed files cannot be listed")
    return [name for name in done.stdout.splitlines() if (ROOT / name).is_file()]


def test_no_committed_file_names_a_path_of_the_machine_that_made_it() -> None:
    found: list[str] = []
    for name in _committed():
        try:
            text = (ROOT / name).read_text()
        except (UnicodeDecodeError, OSError):
            continue
        hits = [str(ROOT)] if str(ROOT) in text else []
        hits += CHECKOUT_PATH.findall(text)
        if name.startswith(HARNESS_WRITES):
            hits += ANY_PATH.findall(text)
        found += [f"{name}: {hit}" for hit in hits[:3]]
    assert not found, "absolute paths committed:\n" + "\n".join(found[:20])


def test_the_path_checks_catch_what_the_old_table_held() -> None:
    """The committed table once held 104 paths like this one (issue 33); both patterns catch it."""
    # The path is put together here so that this file does not hold it whole (the check reads it too).
    old_checkout = "/" + "/".join(("work", "kvtop-engdiff", ".cache", "engine_diff", "models"))
    line = f"| not run | harness: The repository {old_checkout}/internlm--internlm-20b contains"
    assert CHECKOUT_PATH.findall(line) and ANY_PATH.findall(line)
    assert not ANY_PATH.findall("| 1,228,800 / 614,400 | B/layer/token | https://github.com/vllm-project/vllm |")

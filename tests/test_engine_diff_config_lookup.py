"""The differential harness finds a config anywhere under tests/data, and never picks one of two silently.

`--configs` may name a config kept outside the sweep's two folders (the calibration corpus's, the held-out
ones, tests/data/configs/quant/); the sweep's folders win where tests/data keeps a copy of one of theirs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.engine_diff import cases
from benchmarks.engine_diff.cases import config_names, config_path, model_dir

ROOT = Path(__file__).resolve().parents[1]
DEEP = {  # the configs the GPTQ check needs, none at the top level of the sweep's folders
    "Qwen--Qwen2.5-7B-Instruct-GPTQ-Int4.RECONSTRUCTED": "tests/data/configs/heldout/calib48",
    "Qwen--Qwen1.5-7B-Chat-GPTQ-Int4.RECONSTRUCTED": "tests/data/calibration/configs",
    "Qwen--Qwen3-30B-A3B-GPTQ-Int4": "tests/data/configs/quant",
}


@pytest.mark.parametrize("name", sorted(DEEP))
def test_a_config_kept_deeper_under_tests_data_is_found_where_it_lies(name: str) -> None:
    assert config_path(name) == ROOT / DEEP[name] / f"{name}.json"
    assert name not in config_names()  # the default sweep stays the two folders' configs


def test_the_sweep_folders_win_over_the_copies_kept_deeper() -> None:
    # Qwen3-0.6B is also kept in tests/data/calibration/configs and tests/data/configs/heldout.
    assert config_path("Qwen--Qwen3-0.6B") == ROOT / "tests/data/engine_diff/configs/Qwen--Qwen3-0.6B.json"
    # Llama-4-Scout's engine_diff/indexes stand-in shares its name and is no config.
    scout = "meta-llama--Llama-4-Scout-17B-16E-Instruct"
    assert config_path(scout) == ROOT / "tests/data/configs" / f"{scout}.json"
    assert all(config_path(name).parent in cases.CONFIG_FOLDERS for name in config_names())


def _tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: list[str]) -> None:
    data = tmp_path / "tests" / "data"
    for rel in files:
        (data / rel).parent.mkdir(parents=True, exist_ok=True)
        (data / rel).write_text(json.dumps({"model_type": "llama"}))
    monkeypatch.setattr(cases, "REPO", tmp_path)
    monkeypatch.setattr(cases, "DATA", data)
    monkeypatch.setattr(cases, "INDEXES", data / "engine_diff" / "indexes")
    monkeypatch.setattr(cases, "CONFIG_FOLDERS", (data / "configs", data / "engine_diff" / "configs"))


def test_a_name_found_twice_deeper_is_an_error_naming_both_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path, monkeypatch, ["configs/heldout/a--M.json", "calibration/configs/a--M.json"])
    with pytest.raises(ValueError, match="a--M") as err:
        config_path("a--M")
    assert "tests/data/calibration/configs/a--M.json" in str(err.value)
    assert "tests/data/configs/heldout/a--M.json" in str(err.value)


def test_a_name_in_both_sweep_folders_is_an_error_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path, monkeypatch, ["configs/a--M.json", "engine_diff/configs/a--M.json"])
    with pytest.raises(ValueError, match="tests/data/configs/a--M.json, tests/data/engine_diff/configs/a--M.json"):
        config_path("a--M")


def test_an_index_stand_in_or_a_quant_sidecar_alone_is_no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path, monkeypatch, ["engine_diff/indexes/a--M.json", "configs/quant/b--N.hf_quant_config.json"])
    with pytest.raises(FileNotFoundError, match="no config named a--M under tests/data"):
        config_path("a--M")
    with pytest.raises(FileNotFoundError):
        config_path("b--N.hf_quant_config")


def test_the_engine_folder_of_a_deeper_config_holds_that_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = "Qwen--Qwen3-30B-A3B-GPTQ-Int4"
    monkeypatch.setattr(cases, "CACHE", tmp_path)
    folder = model_dir(name)
    assert (folder / "config.json").read_bytes() == (ROOT / DEEP[name] / f"{name}.json").read_bytes()


def test_the_runner_refuses_an_unknown_config_in_one_line_before_any_venv() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/engine_diff/run.py", "--engine", "vllm", "--configs", "no--Such", "--no-table"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == "run.py: error: --configs: no config named no--Such under tests/data"
    assert "Traceback" not in done.stderr

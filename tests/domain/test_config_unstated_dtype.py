"""A config.json that states no dtype is planned as 16-bit, and says so as an assumption (session 62's operator pass).

Qwen/Qwen3-0.6B's config.json (tests/data/calibration/configs) states torch_dtype bfloat16. Without it (and without
`dtype`) the engines read float32 (vLLM `_get_and_verify_dtype`: "config.torch_dtype can be None" → torch.float32)
and `--dtype auto` serves that as 16-bit: 2 B per parameter, the same bytes as the stated bfloat16. kvtop planned
those bytes with no word and an empty `config_defaults_used`; it now says the assumption.
"""

from __future__ import annotations

import json

from kvtop.domain.config_default import DefaultKind
from kvtop.domain.model_config import model_from_config
from tests.conftest import DATA

QWEN3 = DATA / "calibration/configs/Qwen--Qwen3-0.6B.json"


def _stated() -> dict[str, object]:
    stated: dict[str, object] = json.loads(QWEN3.read_text())
    return stated


def test_a_config_without_dtype_says_its_16_bit_is_assumed() -> None:
    stated = _stated()
    assert stated["torch_dtype"] == "bfloat16" and "dtype" not in stated
    unstated = {k: v for k, v in stated.items() if k != "torch_dtype"}
    model = model_from_config(unstated, source="Qwen3-0.6B without torch_dtype")
    assert model.dtype_bytes == 2  # what vLLM's auto dtype serves float32 in
    assert [d.said for d in model.assumed_defaults] == ["torch_dtype=bfloat16 (assumed)"]
    assert model.defaults_used == ()  # no config class's default: what the engines do with the gap, assumed
    (assumed,) = model.assumed_defaults
    assert assumed.kind is DefaultKind.ENGINE_ASSUMED and "float32" in assumed.what and "16-bit" in assumed.what


def test_a_stated_dtype_is_no_assumption() -> None:
    for stated in (_stated(), {**{k: v for k, v in _stated().items() if k != "torch_dtype"}, "dtype": "float16"}):
        model = model_from_config(stated, source="Qwen3-0.6B")
        assert model.dtype_bytes == 2 and not any(d.field == "torch_dtype" for d in model.config_defaults)


def test_the_plan_says_the_assumption_in_its_json_and_notes(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from kvtop.cli import main

    config = tmp_path / "config.json"
    config.write_text(json.dumps({k: v for k, v in _stated().items() if k != "torch_dtype"}))
    base = ["plan", "--no-calibration-store", "--engine", "vllm", "--model", str(config), "--gpu", "H100"]
    assert main([*base, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["config_defaults_used"] == ["torch_dtype=bfloat16 (assumed)"]
    assert main(base) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if "torch_dtype" in line]
    assert notes == [
        "note: the config leaves out torch_dtype=bfloat16 (assumed): vLLM and SGLang read a missing dtype as float32 "
        "and --dtype auto serves that as 16-bit (vLLM bfloat16 on CUDA from v0.9.1, float16 before; SGLang float16): "
        "2 B per parameter"
    ]

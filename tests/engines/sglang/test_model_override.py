"""`--json-model-override-args`: merged into the config before kvtop reads it, as SGLang's `get_config` merges it.

The Extious Qwen3-8B YaRN starts (Extious/sglang d98a213d… `baseline-fixed-a800/logs/server_58511.log`, 6463337e…
`baseline-fixed-a100-20k/logs/server_22712.log`; tests/data/calibration/sglang.jsonl
`extious-qwen3-8b-yarn200k-dp2-{a800,a100}-hicache`) typed the override with `--context-length 200000` on the stock
Qwen3-8B config and logged '#tokens: 367685' (A800) and '#tokens: 367222' (A100 80GB) on each DP rank. The merge by
release is read in the wheels (model_override.py): `config.update` through v0.5.16, a sub-config merged from v0.5.17,
rope_scaling / rope_parameters merged at v0.5.23.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.engines.sglang.model_override import FLAG, config_override
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.launch import parse_flags
from tests.data_paths import CONFIGS, DATA

QWEN3_8B = str(CONFIGS / "Qwen--Qwen3-8B.json")
RECONSTRUCTED = str(DATA / "calibration" / "configs" / "Qwen--Qwen3-8B-yarn200k.RECONSTRUCTED.json")
OVERRIDE = json.dumps({"max_position_embeddings": 200000, "rope_theta": 1000000, "rope_scaling": {
    "rope_type": "yarn", "factor": 4.8828125, "original_max_position_embeddings": 40960, "rope_theta": 1000000}})  # fmt: skip
LAUNCH = ["--engine", "sglang", "--engine-version", "0.5.11", "--dp-size", "2", "--attention-backend", "triton",
          "--disable-overlap-schedule", "--sampling-backend", "pytorch", "--load-balance-method", "round_robin",
          "--enable-hierarchical-cache", "--hicache-size", "60", "--context-length", "200000"]  # fmt: skip


def _row(lines: list[str], head: str) -> str:
    return next(line for line in lines if line.startswith(head))


@pytest.mark.parametrize(("gpu", "logged"), [("A800", 367_685), ("A100-80GB", 367_222)])
def test_the_launch_as_typed_plans_as_the_overridden_config_and_holds_the_log(
    capsys: pytest.CaptureFixture[str], gpu: str, logged: int
) -> None:
    assert main(["plan", "--model", QWEN3_8B, "--gpu", gpu, *LAUNCH, FLAG, OVERRIDE]) == 0
    typed = capsys.readouterr().out.splitlines()
    assert main(["plan", "--model", RECONSTRUCTED, "--gpu", gpu, *LAUNCH]) == 0
    written = capsys.readouterr().out.splitlines()
    assert _row(typed, "Token capacity") == _row(written, "Token capacity")
    low, high = (int(n.replace(",", "")) for n in _row(typed, "Interval").split()[1:4:2])
    assert low <= logged <= high
    said = _row(typed, "note: config overridden by --json-model-override-args")
    assert "max_position_embeddings, rope_theta, rope_scaling" in said and "config.update" in said


def test_without_the_override_the_stated_context_is_refused_above_the_stock_positions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """SGLang checks --context-length against the overridden config: the stock one has 40,960 positions."""
    assert main(["plan", "--model", QWEN3_8B, "--gpu", "A800", *LAUNCH]) == 2
    assert "40,960 positions" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("value", "said"),
    [('{"max_position_embeddings": 2000', "is not JSON"), ("[1, 2]", "must be a JSON object")],
)
def test_a_value_json_loads_refuses_is_refused_naming_the_flag(
    capsys: pytest.CaptureFixture[str], value: str, said: str
) -> None:
    assert main(["plan", "--model", QWEN3_8B, "--gpu", "A800", "--engine", "sglang", FLAG, value]) == 2
    err = capsys.readouterr().err
    assert FLAG in err and said in err


def _merged(version: str, config: dict[str, object], override: dict[str, object]) -> dict[str, object]:
    settings = parse_flags("sglang", [FLAG, json.dumps(override)])
    found = config_override(settings, ResolvedVersion(text=version))
    assert found is not None
    return found.apply(config)


def test_the_merge_follows_the_release() -> None:
    """v0.5.16 `config.update`: a dict replaces what was there; v0.5.17: merged into a sub-config (text_config), a
    rope_scaling still replaced; v0.5.23: rope_scaling merged too ('partial overrides keep rope_theta')."""
    config: dict[str, object] = {"rope_scaling": {"rope_type": "default", "rope_theta": 10000.0},
                                 "text_config": {"num_hidden_layers": 36, "hidden_size": 4096}}  # fmt: skip
    override: dict[str, object] = {"rope_scaling": {"rope_type": "yarn", "factor": 2.0},
                                   "text_config": {"num_hidden_layers": 12}}  # fmt: skip
    assert _merged("0.5.16", config, override) == override
    assert _merged("0.5.17", config, override) == {"rope_scaling": {"rope_type": "yarn", "factor": 2.0},
                                                   "text_config": {"num_hidden_layers": 12, "hidden_size": 4096}}  # fmt: skip
    assert _merged("0.5.23", config, override)["rope_scaling"] == {"rope_type": "yarn", "factor": 2.0,
                                                                   "rope_theta": 10000.0}  # fmt: skip
    assert config["text_config"] == {"num_hidden_layers": 36, "hidden_size": 4096}  # the read config left as it was


def test_the_default_empty_object_overrides_nothing() -> None:
    """SGLang's default is "{}", and `get_config` merges only `if model_override_args:` (v0.4.0 :80, v0.5.23 :405)."""
    assert config_override(parse_flags("sglang", [FLAG, "{}"]), ResolvedVersion(text="0.5.23")) is None

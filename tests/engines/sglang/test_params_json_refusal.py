"""A Mistral-format checkpoint (params.json, no config.json) SGLang 0.5.23 reads as config.json: the refusal names
kvtop's own option, `--model`, whichever of its spellings the user typed (kvtop/commands/common.py takes `--model`
and `--model-path` for one setting), as the unregistered-class refusal does — never SGLang's `--model-path` alone.
The checkpoint: tests/data/configs/recon/recon--mistralai--Voxtral-Mini-3B-2507-params/params.json; its path names
none of mistral-large-3, mistral-small-4, leanstral (SGLang 0.5.23 mistral_utils.py is_mistral_model).
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_check import launch_refusals
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

PARAMS = CONFIGS / "recon" / "recon--mistralai--Voxtral-Mini-3B-2507-params" / "params.json"
H100 = 81_559 << 20


def test_the_refusal_names_kvtops_model_option() -> None:
    settings = parse_flags("sglang", ["--engine-version", "0.5.23"])
    ledger = predict(load_model(str(PARAMS)), settings, gpu_total_bytes=H100, gpu_name="H100")
    refusal = next(r for r in launch_refusals(ledger) if "params.json" in r.message)
    assert refusal.field == "--model"
    assert "mistral-large-3, mistral-small-4, leanstral" in refusal.message


@pytest.mark.parametrize("option", ["--model", "--model-path"])
def test_the_cli_error_names_model_whichever_spelling_was_typed(
    option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", "--engine", "sglang", option, str(PARAMS), "--gpu", "H100"]) != 0
    err = capsys.readouterr().err
    assert "kvtop: error: --model: SGLang" in err and "--model-path" not in err

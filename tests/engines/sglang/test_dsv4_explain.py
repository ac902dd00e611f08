"""`kvtop explain` of the corpus's DeepSeek-V4 SGLang log (tests/data/cases/sglang/C24) and a V4 launch with
speculative decoding: a named "not modelled" state, never a number kvtop's pool rules cannot stand behind.

C24's log (a DGX Spark start) loads `DeepseekV4ForCausalLMDSpark` after `DeepseekV4ForCausalLM` (its second
`Load weight end … type=` line): a speculative draft, whose rings SGLang's DSV4 pool sizes its own way (16 / 256
rows, the (L+1)/L inflation: DSV4PoolConfigurator with is_speculative, 0.5.23). Before this, kvtop rebuilt it
without the draft and called the gap "cause unknown" (a 2,999,808-token MISMATCH).
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.conftest import CASES, CONFIGS

FLASH = str(CONFIGS / "heldout" / "deepseek-ai--DeepSeek-V4-Flash.json")
C24 = str(CASES / "sglang" / "C24" / "engine.log")
CMD = "python -m sglang.launch_server --tp 2 --max-running-requests 4 --mem-fraction-static 0.85"


def test_c24_names_its_draft_not_modelled(capsys: pytest.CaptureFixture[str]) -> None:
    args = [
        "explain",
        C24,
        "--model",
        FLASH,
        "--gpu-memory",
        "119.7GiB",
        "--cmd",
        CMD,
        "--no-calibration-store",
    ]
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "insufficient"
    assert "speculative decoding" in out["unsolved"] and "DeepseekV4ForCausalLMDSpark" in out["unsolved"]
    assert out["logged"]["token_capacity"] == 2_999_808  # the log's figures are still read


def test_mtp_speculative_decoding_is_refused_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    """EAGLE without a draft path drafts with V4's own MTP layer (num_nextn_predict_layers 1): the book carries
    that draft layer now, and the pool refuses it as dsv4.py says."""
    cmd = "python -m sglang.launch_server --tp 2 --speculative-algorithm EAGLE"
    assert main(["plan", "--model", FLASH, "--gpu", "H200", "--cmd", cmd, "--no-calibration-store"]) != 0
    assert "speculative decoding" in capsys.readouterr().err

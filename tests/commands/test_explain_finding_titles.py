"""`kvtop explain` names a finding by its title in the text and by its id in `--json` (vllm#10517: Llama-3.1-8B on an
RTX 3090 under vLLM V0 with a bf16 KV cache, for which vLLM has FP8 KV)."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.conftest import CASES, CONFIGS

LOG = CASES / "vllm" / "vllm-10517-llama31-8b-3090-v0" / "engine.log"
MODEL = CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"


def test_the_text_reads_the_title_and_the_json_keeps_the_id(capsys: pytest.CaptureFixture[str]) -> None:
    main(["explain", str(LOG), "--model", str(MODEL), "--no-calibration-store"])
    text = capsys.readouterr().out
    assert "finding [info] 16-bit KV where the engine supports FP8 KV: --kv-cache-dtype fp8_e4m3" in text
    assert "bf16_kv_where_fp8_supported" not in text
    main(["explain", str(LOG), "--model", str(MODEL), "--no-calibration-store", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert [f["rule"] for f in out["findings"]] == ["bf16_kv_where_fp8_supported"]

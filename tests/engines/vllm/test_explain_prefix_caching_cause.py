"""`kvtop explain` tries a Mamba / GDN hybrid's prefix caching the other way when a vLLM log mismatches (#27, session
70 operator pass).

club-3090 #652 (tests/data/cases/vllm/club3090-652-…/case.json: vLLM 0.24.0, Qwen3.6-35B-A3B-NVFP4 on an RTX 5090,
fp8 KV, launched with --enable-prefix-caching) logs 6.01 GiB of KV memory and 569,878 tokens. vLLM prints neither the
flag nor mamba_cache_mode, and at v0.24.0 a hybrid's prefix caching is opt-in, so explain at the stated release
rebuilds the 'none' block (2,096 tokens, 300 blocks: 595,781) and said "cause unknown … no single change rebuilds the
logged figure (10 tried: KV dtype, TP, page size, …)", where the launch's own flag gives a MATCH: the log's figure,
with its 'Maximum concurrency for 131,072 tokens per request: 4.35x' (569,878 ÷ 131,072 = 4.348). Expected: the
flip that rebuilds it named as the cause.
"""

from __future__ import annotations

import json
import pathlib

import pytest

from kvtop.cli import main
from tests.conftest import CASES, CONFIGS

LOG = CASES / "vllm" / "club3090-652-qwen36-35b-a3b-nvfp4-5090" / "engine.log"
NVFP4 = CONFIGS / "heldout" / "nvidia--Qwen3.6-35B-A3B-NVFP4.json"
ARGS = ["explain", str(LOG), "--model", str(NVFP4), "--gpu", "RTX 5090", "--engine-version", "0.24.0",
        "--kv-cache-dtype", "fp8", "--json"]  # fmt: skip


def test_prefix_caching_is_the_cause_that_rebuilds_the_log(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")
    assert main(ARGS) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["logged"]["token_capacity"], out["predicted"]["token_capacity"]) == (569_878, 595_781)
    assert out["cause"].startswith("prefix caching on (mamba_cache_mode align): with it kvtop rebuilds the logged "
                                   "569,878 tokens")  # fmt: skip


def test_with_the_launch_s_flag_it_matches(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")
    assert main([*ARGS, "--enable-prefix-caching"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["verdict"], out["predicted"]["token_capacity"]) == ("match", 569_878)


def test_a_log_that_states_the_switch_is_not_flipped(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    """The same log with vLLM's `non-default args` line stating `'enable_prefix_caching': False` (as `vllm serve`
    prints an explicit --no-enable-prefix-caching): prefix caching on would contradict the log, so it is not offered
    as the cause."""
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")
    stated = tmp_path / "engine.log"
    stated.write_text("(APIServer pid=1) INFO 07-09 02:57:00 [utils.py:233] non-default args: {'max_model_len': 131072, "
                      "'enable_prefix_caching': False, 'kv_cache_dtype': 'fp8'}\n" + LOG.read_text())  # fmt: skip
    assert main([ARGS[0], str(stated), *ARGS[2:]]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "mismatch"
    assert "prefix caching" not in out["cause"]

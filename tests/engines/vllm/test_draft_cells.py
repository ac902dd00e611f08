"""A draft's KV beside a hybrid or sliding-window target (engines/vllm/draft_cells.py): refused by name where a draft
layer's bytes a token are not the target's full layer's, since vLLM then scales one spec's block size to the other's
page (v1/core/kv_cache_utils.py v0.24.0 unify_kv_cache_spec_page_size :1049-1094) and kvtop would average a page.

Qwen3.6-27B-FP8's full layers hold 4 KV heads × 256 × K, V × 1 B (fp8) = 2,048 B a token; a DFlash drafter of 4 KV
heads × 128 holds 1,024 B, one of 8 × 128 the same 2,048 B (z-lab's: planned, tests/engines/vllm/test_dflash.py).
gpt-oss-20b's full layers hold 8 × 64 × 2 × 2 B = 2,048 B beside its sliding ones; 8 × 128 in bf16 is 4,096 B.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.cli import main
from tests.data_paths import DATA

QWEN36 = str(DATA / "calibration" / "configs" / "Qwen--Qwen3.6-27B-FP8.RECONSTRUCTED.json")
GPT_OSS = str(DATA / "configs" / "openai--gpt-oss-20b.json")
DRAFTER = DATA / "calibration" / "configs" / "z-lab--Qwen3.6-27B-DFlash.RECONSTRUCTED.json"
SPEC = '\'{"method":"dflash","model":"d","num_speculative_tokens":7}\''


def _drafter(tmp_path: Path, kv_heads: int) -> str:
    config = json.loads(DRAFTER.read_text())
    config.update(num_key_value_heads=kv_heads, layer_types=["full_attention"] * 5)
    path = tmp_path / "drafter.json"
    path.write_text(json.dumps(config))
    return str(path)


@pytest.mark.parametrize(("target", "kv_cache", "kv_heads", "held", "targets"), [
    (QWEN36, "--kv-cache-dtype fp8_e4m3 ", 4, "1,024", "2,048"),  # a GDN hybrid, a narrower drafter
    (GPT_OSS, "", 8, "4,096", "2,048"),  # a sliding-window target, a wider drafter in bf16
])  # fmt: skip
def test_a_draft_cell_unlike_the_targets_beside_state_or_windows_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, target: str, kv_cache: str, kv_heads: int, held: str,
    targets: str,
) -> None:
    launch = f"vllm serve X {kv_cache}--max-model-len 32768 --speculative-config {SPEC}"
    args = ["plan", "--model", target, "--engine", "vllm", "--engine-version", "0.24.0", "--gpu", "H100",
            "--draft-model", _drafter(tmp_path, kv_heads), "--cmd", launch]  # fmt: skip
    assert main(args) != 0
    err = capsys.readouterr().err
    assert f"the draft's layers hold {held} B a token where the target's full-attention layers hold {targets} B" in err
    assert "Traceback" not in err


def test_an_own_spec_drafter_beside_a_hybrid_at_pp_2_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    launch = f"vllm serve X --kv-cache-dtype fp8_e4m3 --max-model-len 32768 -pp 2 --speculative-config {SPEC}"
    args = ["plan", "--model", QWEN36, "--engine", "vllm", "--engine-version", "0.24.0", "--gpu", "H100",
            "--draft-model", str(DRAFTER), "--cmd", launch]  # fmt: skip
    assert main(args) != 0
    assert "its own group kind on the last stage is not modelled" in capsys.readouterr().err

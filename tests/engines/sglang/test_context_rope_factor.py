"""SGLang's default context_len multiplies the config's positions by its rope factor (`get_context_length`, 0.4.0
srt/hf_transformers_utils.py:106-123; 0.5.23 srt/utils/hf_transformers/common.py:677-694): `int(factor × val)`,
unless the rope block states original_max_position_embeddings or its rope_type is llama3. Expected values are that
arithmetic on the real config.json files (tests/data/configs/heldout, MLC's copies of the checkpoints' configs)."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.data_paths import CONFIGS

INTERNLM25 = str(CONFIGS / "heldout" / "mlc--internlm2_5_7b.json")  # 32,768 positions, dynamic rope factor 2.0
MINICPM_2B = str(CONFIGS / "heldout" / "mlc--minicpm_2b.json")  # 65,536 positions, dynamic rope factor 4.0
LLAMA31_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")  # 131,072 positions, llama3 factor 8.0


def _plan(capsys: pytest.CaptureFixture[str], model: str, *extra: str) -> dict[str, object]:
    args = ["plan", "--json", "--no-calibration-store", "--engine", "sglang", "--model", model, "--gpu", "H100", *extra]
    assert main(args) == 0
    out: dict[str, object] = json.loads(capsys.readouterr().out)
    return out


@pytest.mark.parametrize(("model", "context"), [(INTERNLM25, 32_768 * 2), (MINICPM_2B, 65_536 * 4)])
def test_a_dynamic_rope_factor_multiplies_sglangs_default_context(
    capsys: pytest.CaptureFixture[str], model: str, context: int
) -> None:
    out = _plan(capsys, model)
    assert out["context_length"] == context
    assert "get_context_length multiplies the config's" in json.dumps(out)


def test_a_llama3_rope_factor_leaves_the_positions(capsys: pytest.CaptureFixture[str]) -> None:
    assert _plan(capsys, LLAMA31_8B)["context_length"] == 131_072  # rope_type llama3: factor taken as 1


def test_a_stated_length_below_the_scaled_one_starts(capsys: pytest.CaptureFixture[str]) -> None:
    """40,000 is above InternLM2.5's 32,768 positions but below SGLang's derived 65,536: no refusal."""
    assert _plan(capsys, INTERNLM25, "--context-length", "40000")["context_length"] == 40_000


def test_a_stated_length_above_the_scaled_one_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["plan", "--json", "--no-calibration-store", "--engine", "sglang", "--model", INTERNLM25, "--gpu", "H100",
            "--context-length", "70000"]  # fmt: skip
    assert main(args) == 2
    assert "above the model's 65,536 positions" in capsys.readouterr().err

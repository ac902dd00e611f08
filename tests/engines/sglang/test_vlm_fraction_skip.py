"""SGLang leaves its VLM factor off the automatic mem_fraction_static on an instance that runs no encoder
(sglang/vlm_fraction_skip.py): `--language-only` from 0.5.9 (`if model_config.is_multimodal and not
self.language_only`, server_args.py:1593 at 0.5.12; 0.5.8 :1036 tests is_multimodal alone).

Expected values from SGLang's arithmetic, by hand: Qwen3-VL-235B-A22B's vision_config names its depth `depth: 27`, so
`adjust_mem_fraction_for_vlm` reads num_hidden_layers' default 24 and hidden_size 1152: the tower factor is
clamp(1 − 0.1 × (24 × 1152² ÷ (24 × 1024²) − 1), 0.8, 1.05) = 1 − 0.1 × 0.265625 = 0.9734375, and the aggregated
server's automatic fraction is the language-only server's × 0.95 × 0.9734375. A given --mem-fraction-static is never
adjusted, so --language-only leaves a launch that sets one as it is.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.engines.sglang.vlm_fraction_skip import vlm_factor_skipped_by
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.launch_line import parse_launch_command
from tests.data_paths import DATA

MODEL = DATA / "calibration" / "configs" / "Qwen--Qwen3-VL-235B-A22B-Instruct-FP8.RECONSTRUCTED.json"
SERVER = "python3 -m sglang.launch_server --model-path Qwen/Qwen3-VL-235B-A22B-Instruct-FP8 --tp 4"
LANGUAGE_ONLY = "--language-only --encoder-urls http://127.0.0.1:30002"
VLM_FACTOR = 0.95 * 0.9734375


def _plan(capsys: pytest.CaptureFixture[str], version: str, command: str) -> dict[str, object]:
    assert main(["plan", "--json", "--no-calibration-store", "--model", str(MODEL), "--engine", "sglang",
                 "--engine-version", version, "--gpu", "H200", "--cmd", command]) == 0  # fmt: skip
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def _fraction(plan: dict[str, object]) -> float:
    return float(plan["memory_fraction"]["value"])  # type: ignore[index]


def test_the_language_server_takes_no_vlm_factor_from_0_5_9(capsys: pytest.CaptureFixture[str]) -> None:
    agg, lang = _plan(capsys, "0.5.12", SERVER), _plan(capsys, "0.5.12", f"{SERVER} {LANGUAGE_ONLY}")
    assert _fraction(lang) == round(_fraction(lang), 3)  # SGLang's own round(…, 3), no factor after it
    assert _fraction(agg) == pytest.approx(_fraction(lang) * VLM_FACTOR, abs=1e-9)
    assert int(lang["token_capacity"]) > int(agg["token_capacity"])  # type: ignore[call-overload]
    # 0.5.8 tests is_multimodal alone: the factor stays
    old_agg, old_lang = _plan(capsys, "0.5.8", SERVER), _plan(capsys, "0.5.8", f"{SERVER} {LANGUAGE_ONLY}")
    assert _fraction(old_lang) == _fraction(old_agg)


def test_a_given_fraction_is_not_moved(capsys: pytest.CaptureFixture[str]) -> None:
    given = f"{SERVER} --mem-fraction-static 0.86"
    assert _plan(capsys, "0.5.12", given)["token_capacity"] == _plan(capsys, "0.5.12", f"{given} {LANGUAGE_ONLY}")[
        "token_capacity"]


def test_the_decode_instance_and_the_lm_only_flag_by_release() -> None:
    decode = parse_launch_command(f"{SERVER} --disaggregation-mode decode")
    assert decode is not None
    assert vlm_factor_skipped_by(decode, ResolvedVersion(text="0.5.16")) is None
    assert vlm_factor_skipped_by(decode, ResolvedVersion(text="0.5.17")) is not None
    # --language-model-only: no such flag before 0.5.18 (its wheel's server_args.py has none), tested from 0.5.18 on
    lm_only = parse_launch_command(f"{SERVER} --language-model-only")
    assert lm_only is not None
    assert vlm_factor_skipped_by(lm_only, ResolvedVersion(text="0.5.17")) is None
    assert vlm_factor_skipped_by(lm_only, ResolvedVersion(text="0.5.18")) is not None
    # --language-only: 0.5.8.post1 still tests is_multimodal alone (server_args.py:1036), 0.5.9 skips (:1068)
    language_only = parse_launch_command(f"{SERVER} {LANGUAGE_ONLY}")
    assert language_only is not None
    assert vlm_factor_skipped_by(language_only, ResolvedVersion(text="0.5.8.post1")) is None
    assert vlm_factor_skipped_by(language_only, ResolvedVersion(text="0.5.9")) is not None

"""SGLang's E/PD flags where SGLang refuses the start (encoder_disagg.py), read in the wheels.

`--language-model-only`: 0.5.18's `_handle_language_model_only` (server_args.py:7659-7686) raises ValueError for an
architecture outside `LANGUAGE_MODEL_ONLY_ARCHITECTURES` (:7657, `("MuseGlimmerForConditionalGeneration",)`; 0.5.23
:335-340 adds DeepseekV4ForCausalLM, Cosmos3ForConditionalGeneration, Cosmos3EdgeForConditionalGeneration), with
--disaggregation-mode prefill/decode, and beside --language-only; 0.5.17 has no such flag. Expected: each refused
naming the flag, the release and SGLang's words; Muse-Glimmer at 0.5.18 and DeepSeek-V4 at 0.5.23 taken.
`--language-only` without `--encoder-urls`: 'requires at least one encoder urls to be set via --encoder-urls' (0.5.12
server_args.py:4115-4118): the plan says so; with the URLs it says nothing.
"""

from __future__ import annotations

import pytest

from kvtop.domain.engines.sglang.encoder_disagg import check_language_model_only
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS
from tests.data_paths import DATA
from tests.engines.measured_flags import plan_json

MUSE = CONFIGS / "heldout" / "wave3" / "meta-models--Muse-Glimmer-30B.json"
DSV4 = CONFIGS / "heldout" / "sgl-project--DeepSeek-V4-Flash-FP8.json"
QWEN3_VL = DATA / "calibration" / "configs" / "Qwen--Qwen3-VL-235B-A22B-Instruct-FP8.RECONSTRUCTED.json"


def _check(config: object, version: str, *flags: str) -> None:
    settings = parse_flags("sglang", ["--engine-version", version, *flags])
    check_language_model_only(load_model(str(config)), settings, ResolvedVersion(text=version))


def test_the_listed_architectures_are_taken() -> None:
    _check(MUSE, "0.5.18", "--language-model-only")
    _check(DSV4, "0.5.23", "--language-model-only")
    _check(QWEN3_VL, "0.5.18")  # without the flag nothing is checked


def test_an_unlisted_architecture_is_refused_with_sglangs_rule() -> None:
    with pytest.raises(InputError, match=r"^--language-model-only: SGLang 0\.5\.18 takes it only for "
                       r"MuseGlimmerForConditionalGeneration .*'--language-model-only does not support "
                       r"\['Qwen3VLMoeForConditionalGeneration'\]'"):  # fmt: skip
        _check(QWEN3_VL, "0.5.18", "--language-model-only")
    with pytest.raises(InputError, match="does not support \\['DeepseekV4ForCausalLM'\\]"):  # not listed at 0.5.18
        _check(DSV4, "0.5.18", "--language-model-only")


def test_pd_disaggregation_and_language_only_are_refused_beside_it() -> None:
    with pytest.raises(InputError, match=r"^--language-model-only: SGLang 0\.5\.18 refuses it with "
                       r"--disaggregation-mode prefill \('--language-model-only is incompatible"):  # fmt: skip
        _check(MUSE, "0.5.18", "--language-model-only", "--disaggregation-mode", "prefill")
    with pytest.raises(InputError, match="cannot be combined with --language-only"):
        _check(MUSE, "0.5.18", "--language-model-only", "--language-only")


def test_before_0_5_18_there_is_no_such_flag() -> None:
    with pytest.raises(InputError, match=r"^--language-model-only: SGLang 0\.5\.17 has no --language-model-only"):
        _check(MUSE, "0.5.17", "--language-model-only")


def test_language_only_without_encoder_urls_is_said(capsys: pytest.CaptureFixture[str]) -> None:
    base = ("--model", str(QWEN3_VL), "--engine", "sglang", "--engine-version", "0.5.12", "--gpu", "H200")
    server = "python3 -m sglang.launch_server --model-path x --tp 4 --kv-cache-dtype fp8_e4m3 --language-only"
    bare = plan_json(capsys, base, "--cmd", server)
    said = [n for n in bare["notes"] if n.startswith("--language-only without --encoder-urls")]
    assert said and "SGLang 0.5.12 refuses that start ('requires at least one encoder urls" in said[0]
    given = plan_json(capsys, base, "--cmd", f"{server} --encoder-urls http://10.0.0.1:30002")
    assert not [n for n in given["notes"] if "--encoder-urls" in n]
    assert given["token_capacity"] == bare["token_capacity"] == 3_058_294  # the note moves no figure

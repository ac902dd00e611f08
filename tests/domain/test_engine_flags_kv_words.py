"""Every engine's flags say what its KV dtype values mean (`EngineFlags.kv_cache_dtype_words`), and the words are the
plan's: the format after LMDeploy's policy number is the one `kvtop plan`'s header then names (one truth).

Expected meanings from LMDeploy's own source: lmdeploy/messages.py `QuantPolicy` (NONE 0, INT4 4, INT8 8, FP8 16,
FP8_E5M2 17); before v0.4.0 (PR #1377, 'Online 8/4-bit KV-cache quantization') TurboMind's only KV quantisation
was policy 4, offline int8 (kCacheKVInt8, lmdeploy/turbomind/turbomind.py ≤ v0.3.0).
"""

from __future__ import annotations

import re

import pytest

from kvtop.cli import main
from kvtop.domain.engines.catalogue import ENGINE_IDS
from kvtop.domain.launch import engine_flags
from tests.conftest import CONFIGS

LLAMA_70B = str(CONFIGS / "meta-llama--Meta-Llama-3-70B.json")


@pytest.mark.parametrize("engine", ENGINE_IDS)
def test_every_engine_words_each_value_that_is_a_bare_number(engine: str) -> None:
    flags = engine_flags(engine)  # type: ignore[arg-type]
    for version in (None, "0.1.0"):
        words = flags.kv_cache_dtype_words(version)
        assert set(words) <= set(flags.kv_cache_dtypes)  # words only for values the engine takes
        numbers = {value for value in flags.kv_cache_dtypes if value.isdigit()}
        assert numbers <= set(words)  # a number never stands alone
        assert all(word.startswith(f"{value} · ") for value, word in words.items())


def test_lmdeploy_words_are_quant_policy_s_meanings_by_release() -> None:
    flags = engine_flags("lmdeploy")
    assert dict(flags.kv_cache_dtype_words(None)) == {
        "0": "0 · none", "4": "4 · int4", "8": "8 · int8", "16": "16 · fp8_e4m3", "17": "17 · fp8_e5m2",
    }  # fmt: skip
    assert dict(flags.kv_cache_dtype_words("0.3.0")) == {
        "0": "0 · none", "4": "4 · int8", "8": "8 · not yet", "16": "16 · not yet", "17": "17 · not yet",
    }  # fmt: skip
    assert flags.kv_cache_dtype_words("0.4.0")["4"] == "4 · int4"  # the release that made 4 online int4
    assert not engine_flags("vllm").kv_cache_dtype_words(None)  # 'fp8_e4m3' says itself


@pytest.mark.parametrize(
    ("policy", "extra", "version"),
    [("8", "", None), ("4", "", None), ("4", "", "0.3.0"), ("16", " --backend pytorch", None),
     ("17", " --backend pytorch", None)],
)  # fmt: skip
def test_the_word_names_the_format_kvtop_plan_solves(
    policy: str, extra: str, version: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    command = f"lmdeploy serve api_server x --tp 4 --quant-policy {policy}{extra}"
    args = ["plan", "--engine", "lmdeploy", "--model", LLAMA_70B, "--gpu", "A100-80GB", "--cmd", command]
    args += ["--no-calibration-store", *(["--engine-version", version] if version else [])]
    assert main(args) == 0
    header = capsys.readouterr().out.splitlines()[0]
    solved = re.search(r"·  KV (\S+)  ·", header)
    assert solved is not None, header
    word = engine_flags("lmdeploy").kv_cache_dtype_words(version)[policy]
    assert word == f"{policy} · {solved.group(1)}"

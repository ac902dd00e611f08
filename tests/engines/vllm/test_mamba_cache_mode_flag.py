"""vLLM's `--mamba-cache-mode` (CacheConfig.mamba_cache_mode; engine/arg_utils.py:1436 at v0.33.0, first in v0.15.1 of
the releases read) is read by hybrid._cache_mode wherever it comes from: typed to kvtop or on a --cmd line, 'align'
(the default with prefix caching on: MambaModelConfig.verify_and_update_config; prefix caching a hybrid's default from
v0.28.0, opt-in at v0.26.0-v0.27.1, hybrid.HYBRID_PREFIX_CACHING_DEFAULT_ERAS) is planned, 'all' is refused as not
modelled, and a release without the flag refuses it as its argparse does."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_notes import ignored_flags_note
from tests.conftest import CONFIGS

QWEN3_NEXT = str(CONFIGS / "Qwen--Qwen3-Next-80B-A3B-Thinking.json")  # a hybrid: Gated DeltaNet + attention
BASE = ["plan", "--model", QWEN3_NEXT, "--engine", "vllm", "--gpu", "H200", "--tp", "2"]


def _tokens(capsys: pytest.CaptureFixture[str], *args: str) -> int:
    assert main([*BASE, "--json", *args]) == 0
    return int(json.loads(capsys.readouterr().out)["token_capacity"])


def test_typed_align_is_the_default_mode(capsys: pytest.CaptureFixture[str]) -> None:
    default = _tokens(capsys, "--engine-version", "0.30.0")
    assert _tokens(capsys, "--engine-version", "0.30.0", "--mamba-cache-mode", "align") == default


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--engine-version", "0.30.0", "--mamba-cache-mode", "all"], "mamba_cache_mode 'all' is not modelled"),
        (["--engine-version", "0.30.0", "--cmd", "vllm serve m --mamba-cache-mode all"], "'all' is not modelled"),
        (["--engine-version", "0.13.0", "--mamba-cache-mode", "align"],
         "vLLM 0.13.0 has no --mamba-cache-mode (first in v0.15.1"),
    ],
)  # fmt: skip
def test_what_is_not_modelled_or_missing_is_refused_by_the_flag(
    capsys: pytest.CaptureFixture[str], args: list[str], says: str
) -> None:
    assert main([*BASE, *args]) != 0
    err = capsys.readouterr().err
    assert "--mamba-cache-mode" in err and says in err


def test_on_a_cmd_line_it_is_read_not_named_as_ignored() -> None:
    settings = parse_flags("vllm", ["--mamba-cache-mode", "align"], strict=False, engine_line=True)
    assert settings.flags["mamba-cache-mode"] == "align" and ignored_flags_note(settings) is None

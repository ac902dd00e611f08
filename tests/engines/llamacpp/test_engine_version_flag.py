"""`--engine-version` takes what llama.cpp calls a release: a build number (session 50, #27).

llama.cpp tags its releases `b<build>` (github.com/ggml-org/llama.cpp/releases) and prints the number in its
banner (`main: build = 3673 (4084ca73)`, the log of ikawrakow/ik_llama.cpp PR #400 in test_explain_logs.py);
`kvtop plan --engine llamacpp --engine-version b6980` was refused "not a release: 'b6980'" since the check read
PEP 440 releases for every engine. The build picks llama-server's default context (common/common.h `n_ctx`):
4,096 before b6980 (PR #17046), then 0 = the trained context, Llama-3.1-8B's `max_position_embeddings` 131,072
(examples/models/llama-3.1-8b.json). Every other engine still reads PEP 440 releases, and refuses a build.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags

OLD_DEFAULT_CTX = 4_096  # common/common.h before b6980: `int32_t n_ctx = 4096`
TRAINED_CTX = 131_072  # llama-3.1-8b.json `max_position_embeddings` (`n_ctx = 0` from b6980)


def _plan(capsys: pytest.CaptureFixture[str], version: str) -> dict:
    args = ["plan", "--json", "--engine", "llamacpp", "--model", "llama-3.1-8b", "--gpu", "H100"]
    assert main([*args, "--engine-version", version]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("version", "cells"), [("b3673", OLD_DEFAULT_CTX), ("b6979", OLD_DEFAULT_CTX),
                                                ("b6980", TRAINED_CTX), ("6980", TRAINED_CTX), ("b7100", TRAINED_CTX)])  # fmt: skip
def test_a_build_is_a_release_and_picks_its_rules(capsys: pytest.CaptureFixture[str], version: str, cells: int) -> None:
    out = _plan(capsys, version)
    assert (out["engine_version"], out["version_source"], out["token_capacity"]) == (version, "flag", cells)


def test_a_pep_440_release_is_no_llama_cpp_build(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["plan", "--engine", "llamacpp", "--model", "llama-3.1-8b", "--engine-version", "0.5.9"]
    assert main(args) != 0
    err = capsys.readouterr().err
    assert err.strip() == ("kvtop: error: --engine-version: not a build: '0.5.9' (llama.cpp names its releases by "
                           "build number: write e.g. b6980, b5400 or latest)")  # fmt: skip


@pytest.mark.parametrize("engine", ["sglang", "vllm", "lmdeploy", "trtllm"])
def test_the_other_engines_refuse_a_build(engine: str) -> None:
    with pytest.raises(InputError, match=r"^--engine-version: not a release: 'b6980' \(write e.g. 0.5.9"):
        parse_flags(engine, ["--engine-version", "b6980"])


def test_latest_is_the_latest_build() -> None:
    assert parse_flags("llamacpp", ["--engine-version", "latest"]).engine_version is None

"""Every "§N" `plan` and `explain` print names its doc (docs/engines/<engine>.md §N), for each engine (session 46, B3).

TensorRT-LLM's budget printed "131,072 B per token (§1.1)" and explain "the engine rounds up (§4.1)": a section of
which doc, the reader could not tell.
"""

from __future__ import annotations

import re

import pytest

from kvtop.cli import main
from kvtop.domain.doc_refs import qualified
from kvtop.domain.engines.registry import ENGINE_IDS
from tests.conftest import CASES, CONFIGS

# a reference that names its doc: 'trtllm.md §4.1', 'docs/engines/sglang.md §2.2/§4.2', '… §1–§6'
_NAMED = re.compile(r"[\w/-]+\.md §[\d.]+(?:[/–-]§[\d.]+)*")


def _bare(text: str) -> list[str]:
    rest = _NAMED.sub("", text)
    return [line for line in rest.splitlines() if "§" in line]


@pytest.fixture(autouse=True)
def _no_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")


@pytest.mark.parametrize("engine", ENGINE_IDS)
def test_plan_names_the_doc_of_every_section(capsys: pytest.CaptureFixture[str], engine: str) -> None:
    model = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
    assert main(["plan", "--engine", engine, "--model", model, "--gpu", "H100"]) == 0
    assert _bare(capsys.readouterr().out) == []


def test_trtllm_plan_and_explain_cite_trtllm_md(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--engine", "trtllm", "--model", str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"),
                 "--gpu", "H100"]) == 0  # fmt: skip
    assert "131,072 B per token (docs/engines/trtllm.md §1.1)" in capsys.readouterr().out
    case = CASES / "trtllm" / "trtllm-dgxspark-gptoss120b-v110rc3"
    assert main(["explain", str(case / "engine.log"), "--model", str(CONFIGS / "openai--gpt-oss-120b.json")]) == 0
    out = capsys.readouterr().out
    assert "the engine rounds up (docs/engines/trtllm.md §4.1)" in out and _bare(out) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("rounds up (§4.1)", "rounds up (docs/engines/trtllm.md §4.1)"),
        ("(§2.2/§4.2)", "(docs/engines/trtllm.md §2.2/§4.2)"),
        ("§1–§6", "docs/engines/trtllm.md §1–§6"),
        ("sglang.md §6.2: nf / ns", "sglang.md §6.2: nf / ns"),
        ("docs/engines/trtllm.md §4.1", "docs/engines/trtllm.md §4.1"),
    ],
)
def test_the_formatter_qualifies_bare_references_only(text: str, expected: str) -> None:
    assert qualified(text, "trtllm") == expected
    assert _bare(expected) == []

"""`kvtop plan --compare` says the plans' notes under its table, each once (it printed none).

A `--gpu-memory` below a whole H100's is planned as a part of the card whose nvidia-smi total is assumed the figure
given (`Ledger.notes`: every engine's plan carries it, `plan` prints it); the H100's whole total is nvidia-smi's
81,559 MiB (tests/data/samples/nvidia_smi, an H100 80GB HBM3) = 79.65 GiB. Llama-2-7b-hf's config.json has no
`attention_bias` key, so transformers' LlamaConfig default (False) is read: one note, not one per engine.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS

QWEN8 = str(CONFIGS / "Qwen--Qwen3-8B.json")
LLAMA2 = CONFIGS / "meta-llama--Llama-2-7b-hf.json"
PART = ["--gpu", "H100", "--gpu-memory", "40GiB", "--no-calibration-store"]


def _notes(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("note")]


def test_the_assumed_total_is_noted_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--model", QWEN8, "--engine", "sglang", *PART]) == 0
    said = [n for n in _notes(capsys.readouterr().out) if "nvidia-smi total" in n]
    assert len(said) == 1 and "nvidia-smi's 79.65 GiB" in said[0] and "assumed the 40.00 GiB given" in said[0]

    assert main(["plan", "--model", QWEN8, "--compare", "sglang,vllm,trtllm", *PART]) == 0
    notes = _notes(capsys.readouterr().out)
    assert [n for n in notes if "nvidia-smi total" in n] == said  # the plan's words, unlabelled: every row carries it
    assert any(n.startswith("note (TensorRT-LLM): ") for n in notes)  # a note only some rows carry names them

    assert main(["plan", "--model", QWEN8, "--compare", "sglang,vllm,trtllm", *PART, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["engines"]
    assert all(said[0][len("note: ") :] in row["notes"] for row in rows) and all("not_modelled" in row for row in rows)


def test_the_config_s_default_is_noted_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert "attention_bias" not in LLAMA2.read_text()
    assert main(["plan", "--model", str(LLAMA2), "--compare", "sglang,vllm", "--no-calibration-store"]) == 0
    notes = _notes(capsys.readouterr().out)
    assert notes.count("note: the config leaves out attention_bias=False: LlamaConfig's class default") == 1
    # SGLang's plan's own note is named; vLLM's plan (its runtime a calibrated term, `plan --engine vllm`) has none
    assert any(n.startswith("note (SGLang): ") for n in notes) and not any(n.startswith("note (vLLM): ") for n in notes)

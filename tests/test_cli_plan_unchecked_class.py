"""`plan`, `plan --json` and `explain` say, from the one `ModelSpec.unchecked_class`, that a config's class was read
through another entry and never checked (#26 item 5).

Before: Qwen3-VL-8B-Instruct's config (tests/data/configs/heldout) renamed HyperCLOVAXForCausalLM /
hyperclovax (Keye-VL-1.5's class before session 47) planned 17.60 GB of weights and 147,456 B a token on vLLM with no word that the class was never checked.
147,456 B by hand from the file's text_config: 36 layers × 8 KV heads × head_dim 128 × (K + V) × 2 B (bfloat16).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.cli import main
from tests.conftest import CASES, CONFIGS
from tests.domain.test_unchecked_class import unchecked_config

NOTE = (
    "note: class HyperCLOVAXForCausalLM has no architecture entry of its own: read as qwen3_vl_text "
    "(Qwen3VLTextConfig) by its text_config.model_type 'qwen3_vl_text'; not checked against the engines' model code"
)


def test_plan_text_and_json_name_the_unchecked_class(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "keye.json"
    path.write_text(json.dumps(unchecked_config()))
    args = ["plan", "--model", str(path), "--engine", "vllm", "--gpu", "H100", "--no-calibration-store"]
    main(args)
    assert NOTE in capsys.readouterr().out.splitlines()
    main([*args, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert out["kv_bytes_per_token"] == 36 * 8 * 128 * 2 * 2 == 147_456
    chosen = out["unchecked_class"]["chosen_by"]  # JSON: the field and its value as data, the note words them
    assert (chosen["by"], chosen["field"], chosen["value"]) == ("text_section", "text_config.model_type", "qwen3_vl_text")
    assert out["unchecked_class"]["read_as"] == "qwen3_vl_text"
    assert "note: " + out["unchecked_class"]["note"] == NOTE


def test_a_checked_class_plans_without_it(capsys: pytest.CaptureFixture[str]) -> None:
    model = str(CONFIGS / "heldout" / "Qwen--Qwen3-VL-8B-Instruct.json")
    main(["plan", "--model", model, "--engine", "vllm", "--gpu", "H100", "--no-calibration-store", "--json"])
    assert json.loads(capsys.readouterr().out)["unchecked_class"] is None


def test_explain_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the llama.cpp log of tests/test_cli_explain_other_model.py; Llama-3.1-8B's config under a class no entry lists
    log = CASES / "llamacpp" / "gemma2-2b-it-q4_k_m-np-auto-unified" / "engine.log"
    config = json.loads((CONFIGS / "meta-llama--Llama-3.1-8B.json").read_text()) | {"architectures": ["FooForCausalLM"]}
    path = tmp_path / "foo.json"
    path.write_text(json.dumps(config))
    main(["explain", str(log), "--engine", "llamacpp", "--model", str(path), "--no-calibration-store"])
    note = ("  note: class FooForCausalLM has no architecture entry of its own: read as llama (LlamaConfig) by its "
            "model_type 'llama'; not checked against the engines' model code")  # fmt: skip
    assert note in capsys.readouterr().out.splitlines()

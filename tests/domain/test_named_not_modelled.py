"""A class kvtop names not modelled is refused with its reason wherever its config sends the reading (#26, session 46
task D4): the decoders' table (coverage.NOT_MODELLED) and the speech classes' (coverage.SPEECH_NOT_MODELLED) are one
lookup (coverage.NAMED_NOT_MODELLED) that the config reader's refusal reads.

Before: MiMo-V2.5-ASR's reconstructed config (tests/data/configs/recon, MiMoV2ASRForCausalLM with model_type qwen2) was
planned through the qwen2 entry, as if SGLang 0.5.23 built a Qwen2 decoder, because the refusal read NOT_MODELLED only.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.architectures.coverage import NAMED_NOT_MODELLED, NOT_MODELLED, SPEECH_NOT_MODELLED, verdict
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.model_config import model_from_config
from tests.conftest import CASES, CONFIGS

MIMO_ASR = CONFIGS / "recon" / "recon--XiaomiMiMo--MiMo-V2.5-ASR.json"
LLAMA = CONFIGS / "meta-llama--Llama-3.1-8B.json"


def test_the_lookup_holds_every_table() -> None:
    assert set(NAMED_NOT_MODELLED) == set(NOT_MODELLED) | set(SPEECH_NOT_MODELLED)
    assert len(NAMED_NOT_MODELLED) == len(NOT_MODELLED) + len(SPEECH_NOT_MODELLED)  # no class in both


@pytest.mark.parametrize("architecture", sorted(NAMED_NOT_MODELLED))
def test_each_named_class_is_refused_with_its_reason_even_where_its_model_type_has_an_entry(architecture: str) -> None:
    # Llama-3.1-8B's config (model_type llama: an entry) under the class: the engines build the class, not the type
    config = json.loads(LLAMA.read_text()) | {"architectures": [architecture]}
    with pytest.raises(UnsupportedModelError) as refused:
        model_from_config(config)
    reason = NOT_MODELLED.get(architecture) or SPEECH_NOT_MODELLED[architecture]
    assert str(refused.value) == (
        f"architectures: {architecture} (model_type 'llama') is not modelled by kvtop: {reason} (in config.json)"
    )
    assert verdict(architecture) == ("not_modelled", reason)


def test_mimo_v25_asr_is_refused_not_planned_as_qwen2() -> None:
    with pytest.raises(UnsupportedModelError) as refused:
        model_from_config(json.loads(MIMO_ASR.read_text()))
    assert str(refused.value).startswith(
        "architectures: MiMoV2ASRForCausalLM (model_type 'qwen2') is not modelled by kvtop: MiMo-V2.5-ASR: SGLang "
        "0.5.23 mimo_v2_asr.py builds"
    )
    assert "audio_tokenizer/config.json" in str(refused.value)


def test_plan_and_explain_refuse_it_with_its_reason(capsys: pytest.CaptureFixture[str]) -> None:
    reason = SPEECH_NOT_MODELLED["MiMoV2ASRForCausalLM"]
    plan = ["plan", "--model", str(MIMO_ASR), "--engine", "sglang", "--gpu", "H100", "--no-calibration-store"]
    assert main(plan) == 2
    err = capsys.readouterr().err
    assert "MiMoV2ASRForCausalLM (model_type 'qwen2') is not modelled by kvtop" in err and reason in err
    log = CASES / "llamacpp" / "gemma2-2b-it-q4_k_m-np-auto-unified" / "engine.log"
    main(["explain", str(log), "--engine", "llamacpp", "--model", str(MIMO_ASR), "--no-calibration-store"])
    verdict_line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("verdict: "))
    assert verdict_line.startswith("verdict: INSUFFICIENT — kvtop cannot rebuild this log: architectures: "
                                   "MiMoV2ASRForCausalLM (model_type 'qwen2') is not modelled by kvtop: ")
    assert reason in verdict_line


def test_a_class_no_table_names_still_plans() -> None:
    # the same Llama config under a class no table names: read by the llama entry, with the unchecked-class note
    model = model_from_config(json.loads(LLAMA.read_text()) | {"architectures": ["FooForCausalLM"]})
    assert model.unchecked_class is not None and model.unchecked_class.read_as == "llama"

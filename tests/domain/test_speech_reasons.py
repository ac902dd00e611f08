"""Speech classes that stay not modelled, each with what stops it. MiMo-V2.5-ASR (MiMoV2ASRForCausalLM), with what stops it: SGLang 0.5.23's build reads the
checkpoint's audio_tokenizer/config.json (mimo_audio.py AudioEncoderMixin.build_audio_encoder), as its registry
rows of the reconstructed config show (tests/data/configs/recon/SOURCES.md)."""

from __future__ import annotations

from benchmarks.engine_diff.registry_sweep import load_rows
from kvtop.domain.architectures.coverage import verdict

NAME = "recon--XiaomiMiMo--MiMo-V2.5-ASR"


def test_sglang_stops_on_the_checkpoints_audio_tokenizer() -> None:
    rows = [r for r in load_rows("sglang", "0.5.23") if r["config"] == NAME]
    assert sorted(r["tp"] for r in rows) == [1, 2]
    assert all(r["status"] == "harness-error" and "audio_tokenizer/config.json" in r["message"] for r in rows)


def test_the_reason_names_the_audio_tokenizer() -> None:
    kind, why = verdict("MiMoV2ASRForCausalLM")
    assert kind == "not_modelled" and "audio_tokenizer/config.json" in why


def test_nemotron_omni_names_its_radio_and_parakeet_towers() -> None:
    """Both names vLLM 0.33.0 registers (registry.py: nano_nemotron_vl.NemotronH_Nano_VL_V2) keep one reason."""
    for name in ("NemotronH_Nano_Omni_Reasoning_V3", "NemotronH_Super_Omni_Reasoning_V3"):
        kind, why = verdict(name)
        assert kind == "not_modelled" and "RADIO" in why and "Parakeet" in why

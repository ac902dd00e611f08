"""SGLang 0.5.22+ refuses an encoder whose VisionAttention splits over attention TP but all-reduces over TP
(srt/layers/dp_attention.py 0.5.23:536 reject_attn_tp_shard_with_tp_reduce, called by srt/layers/attention/vision.py
0.5.23:1220 with `shard_tp_size=self.tp_size`, `get_parallel().attn_tp_size`).

Expected figures from SGLang's arithmetic: --tp 4 --dp 2 --enable-dp-attention makes attention TP 4 ÷ 2 = 2, so
`1 < 2 < 4` raises "VisionAttention shards over the attention TP group (2 ranks) but all-reduces over the full TP
group (4 ranks), so it does not support --attn-dp-size 2 yet"; --dp 4 makes attention TP 1 (`not 1 < 1`: no
refusal). Qwen2.5-VL's tower takes --mm-enable-dp-encoder (qwen2_5_vl.py:717 use_data_parallel, VisionAttention
tp_size 1); Gemma-3's does not (gemma3_mm.py builds SiglipVisionModel without use_data_parallel). 0.5.21's
VisionAttention has no such check (read in its wheel).
"""

from __future__ import annotations

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_check import launch_refusals
from kvtop.domain.ledger import predict
from kvtop.domain.refusals import Refusal
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

H100 = 81_559 << 20
QWEN25_VL = CONFIGS / "heldout" / "Qwen--Qwen2.5-VL-7B-Instruct.json"
GEMMA3 = CONFIGS / "google--gemma-3-27b-it.json"


def _refusal(config: str, version: str, *flags: str) -> Refusal | None:
    settings = parse_flags("sglang", ["--engine-version", version, "--tp", "4", *flags])
    ledger = predict(load_model(config), settings, gpu_total_bytes=H100, gpu_name="H100")
    return next((r for r in launch_refusals(ledger) if "VisionAttention" in r.message), None)


def test_qwen25_vl_under_attention_dp_2_of_tp_4_is_refused_with_sglangs_words() -> None:
    refusal = _refusal(str(QWEN25_VL), "0.5.23", "--dp", "2", "--enable-dp-attention")
    assert refusal is not None and refusal.field == "--enable-dp-attention"
    assert ("'VisionAttention shards over the attention TP group (2 ranks) but all-reduces over the full TP group "
            "(4 ranks), so it does not support --attn-dp-size 2 yet.") in refusal.message  # fmt: skip
    assert "Qwen2_5_VLForConditionalGeneration takes --mm-enable-dp-encoder" in refusal.message
    assert "qwen2_5_vl.py:245" in refusal.source and "dp_attention.py:536" in refusal.source


@pytest.mark.parametrize(
    ("version", "flags"),
    [
        ("0.5.21", ("--dp", "2", "--enable-dp-attention")),  # no check before 0.5.22
        ("0.5.23", ("--dp", "2", "--enable-dp-attention", "--mm-enable-dp-encoder")),  # built data-parallel
        ("0.5.23", ("--dp", "4", "--enable-dp-attention")),  # attention TP 1
        ("0.5.23", ("--dp", "2")),  # no attention DP: attention TP = TP
        (
            "0.5.23",
            ("--dp", "2", "--enable-dp-attention", "--disaggregation-mode", "decode"),
        ),  # encoder not run
        # encoder not run (multimodal_encoder_runs_here); refused typed to kvtop, kept from an engine's line (`--cmd`)
        ("0.5.23", ("--dp", "2", "--enable-dp-attention", "--language-only")),
    ],
)
def test_qwen25_vl_runs(version: str, flags: tuple[str, ...]) -> None:
    assert _refusal(str(QWEN25_VL), version, *flags) is None


def test_gemma3_is_refused_at_0_5_22_even_with_the_dp_encoder_flag() -> None:
    refusal = _refusal(str(GEMMA3), "0.5.22", "--dp", "2", "--enable-dp-attention", "--mm-enable-dp-encoder")
    assert refusal is not None
    assert (
        "Gemma3ForConditionalGeneration does not hand its encoder --mm-enable-dp-encoder" in refusal.message
    )
    assert "siglip.py:114" in refusal.source and "dp_attention.py:492" in refusal.source


def test_adaptive_dispatch_keeps_the_encoder_here_so_language_only_is_still_refused() -> None:
    # multimodal_encoder_runs_here (0.5.23 dp_attention.py:512-533): `language_only and not
    # enable_adaptive_dispatch_to_encoder` is what offloads the encoder; adaptive dispatch forwards the tower here
    refusal = _refusal(str(QWEN25_VL), "0.5.23", "--dp", "2", "--enable-dp-attention", "--language-only",
                       "--enable-adaptive-dispatch-to-encoder")  # fmt: skip
    assert refusal is not None and "VisionAttention shards over the attention TP group (2 ranks)" in refusal.message
    # and says so to the operator who typed --language-only (dp_attention.py:512-533: `not enable_adaptive_…`)
    assert "--language-only does not lift it: --enable-adaptive-dispatch-to-encoder keeps the encoder" in refusal.message


def _note(config: str, *flags: str) -> str | None:
    settings = parse_flags("sglang", ["--engine-version", "0.5.23", "--tp", "4", *flags])
    ledger = predict(load_model(config), settings, gpu_total_bytes=H100, gpu_name="H100")
    return next((n for n in ledger.notes if "multimodal_encoder_runs_here" in n), None)


def test_the_plan_says_what_an_engine_line_flag_was_read_for() -> None:
    # the flag is named as ignored for memory (launch_notes.py); where it alone lifts SGLang's refusal the plan says so
    note = _note(str(GEMMA3), "--dp", "2", "--enable-dp-attention", "--language-only")
    assert note is not None and note.startswith("--language-only (from the engine's line")
    assert "Gemma3ForConditionalGeneration's encoder under attention DP (attention TP 2 of TP 4)" in note
    # --language-model-only: SGLang 0.5.23 takes it for its LANGUAGE_MODEL_ONLY_ARCHITECTURES alone (server_args.py
    # :335-340), Gemma-3 not among them: refused before any note (encoder_disagg.py, tests/engines/sglang/
    # test_encoder_disagg.py)
    with pytest.raises(InputError, match="--language-model-only does not support"):
        _note(str(GEMMA3), "--dp", "2", "--enable-dp-attention", "--language-model-only")
    assert _note(str(GEMMA3), "--dp", "4", "--enable-dp-attention", "--language-only") is None  # attention TP 1: no check
    decode = ("--dp", "2", "--enable-dp-attention", "--language-only", "--disaggregation-mode", "decode")
    assert _note(str(GEMMA3), *decode) is None  # a decode instance runs no encoder whatever the flag

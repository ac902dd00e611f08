"""The device pages TurboMind's weight tensors take beyond their bytes where each is its own cudaMalloc
(docs/engines/lmdeploy.md §15.7).

Expected values are LMDeploy v0.4.2's allocation done by hand (`LlamaDecoderLayerWeight.cc mallocWeights`, one
`deviceMalloc` = `cudaMalloc` per tensor; `LlamaWeight.cc`: the embedding and LM head whole, vocab × hidden halves),
each tensor of 2 MiB or more rounded up to a multiple of 2,097,152 B, smaller ones charged nothing.
"""

from __future__ import annotations

from kvtop.domain.engines.lmdeploy.turbomind_pages import page_rounding_bytes
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

W4_20B = CONFIGS.parent / "calibration" / "configs" / "internlm--internlm-chat-20b-w4.RECONSTRUCTED.json"
PLAIN_20B = CONFIGS / "internlm--internlm-20b.json"


def test_w4_20b_tensors_rounded_to_pages() -> None:
    """internlm-chat-20b W4 group 128 (hidden 5,120, 40 heads MHA × 128, intermediate 13,824, vocab 103,168, 60 layers):
    qkv kernel 5,120 × 15,360 / 2 = 39,321,600 B → 19 pages, 524,288 over; its scales_and_zeros 40 × 15,360 × 4 =
    2,457,600 → 2 pages, 1,736,704 over; o kernel 13,107,200 → 7 pages, 1,572,864 over (its 819,200 B of scales
    under a page: 0); w1|w3 fused kernel 5,120 × 27,648 / 2 = 70,778,880 → 34 pages, 524,288 over, scales 40 ×
    27,648 × 4 = 4,423,680 → 3 pages, 1,867,776 over; w2 kernel 35,389,440 → 17 pages, 262,144 over, scales 108 ×
    5,120 × 4 = 2,211,840 → 2 pages, 1,982,464 over. A layer: 8,470,528 B; × 60 = 508,231,680. Embedding and LM head
    103,168 × 5,120 × 2 = 1,056,440,320 → 504 pages, 524,288 over each. Total 509,280,256 B (485.7 MiB)."""
    assert page_rounding_bytes(load_model(str(W4_20B)), 1) == 509_280_256


def test_fp16_20b_tensors_rounded_to_pages() -> None:
    """The same geometry in fp16: qkv 157,286,400 B (75 pages, 0 over), o 52,428,800 (25 pages, 0 over), gate, up
    and down 141,557,760 each (67.5 pages, 1,048,576 over each): 3 MiB a layer, × 60 = 188,743,680, plus 2 × 524,288
    for the embedding and LM head = 189,792,256 B."""
    assert page_rounding_bytes(load_model(str(PLAIN_20B)), 1) == 189_792_256


def _weights_term(version: str):  # type: ignore[no-untyped-def]
    from kvtop.domain.calibration.inputs import CalibrationInputs
    from kvtop.domain.calibration.terms import Term
    from kvtop.domain.engines.lmdeploy.calibration import terms
    from kvtop.domain.engines.versions import ResolvedVersion
    from kvtop.domain.launch import LaunchSettings
    from kvtop.domain.layout import ParallelLayout

    inputs = CalibrationInputs(
        model=load_model(str(CONFIGS / "mistralai--Mixtral-8x7B-v0.1.json")),
        settings=LaunchSettings(engine="lmdeploy", engine_version=version, flags={"backend": "turbomind"}),
        layout=ParallelLayout(tp=1), gpu_name="A100-80GB", gpu_total_bytes=80 << 30,
        version=ResolvedVersion(text=version), weights_bytes=40 << 30, context_length=4096,
    )  # fmt: skip
    return next(term for term in terms(inputs) if term.term is Term.WEIGHTS)


def test_an_moe_models_pages_are_said_left_out_of_the_weights_interval() -> None:
    """Mixtral on TurboMind v0.5.3 (memory_utils.cu deviceMalloc: one cudaMalloc per weight tensor, §15.7): its MoE
    tensors are not listed, so no bound for their pages is known; the weights interval says it leaves them out, and
    adds nothing, where v0.6.0 (no per-tensor cudaMalloc) says nothing of pages."""
    old, new = _weights_term("0.5.3"), _weights_term("0.6.0")
    assert "the interval leaves out the pages each weight tensor's cudaMalloc leaves unused" in old.basis
    assert "cudaMalloc" not in new.basis
    assert old.error_bytes == new.error_bytes and old.beside_error_bytes == 0

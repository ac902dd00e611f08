"""vLLM's MXFP4 experts on SM 12.0: Marlin, the only backend there from v0.12.0; Hopper's checks before (mxfp4_sm12.py).

From vLLM 0.17.1's quantization/mxfp4.py:108-172 (`get_mxfp4_backend`: FlashInfer on 9.0 / family 100, Triton on
9.0 <= capability < 11.0, else Marlin) and Marlin's `create_weights` (:295-312: width to 128, hidden to 256). The
record's log (RTX PRO 6000, SM 12.0, v0.17.1, gpt-oss-120b, TP 1): 'Weight-only FP4 compression will be used
leveraging the Marlin kernel', 'Model loading took 65.97 GiB'. Before v0.12.0 nothing bounds Triton above 9.0:
v0.10.2 quantization/mxfp4.py:89-98 (`capability[0] < 9 or not has_triton_kernels() or torch < 2.8.0` → Marlin, else
Triton), v0.11.2 :134-145; v0.10.1 :123-135 (`_should_use_marlin`, torch 2.7.1 in the wheel → Marlin).
"""

from __future__ import annotations

import dataclasses

import pytest

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, from_flag
from kvtop.domain.engines.vllm import calibration as vllm
from kvtop.domain.engines.vllm.mxfp4_backend import MARLIN, MARLIN_ENV, MEASURED_KEY, mxfp4_backend
from kvtop.domain.engines.vllm.weights_built import mxfp4_experts
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.wording import GIB

RECORDS = {record.id: record for record in load("vllm")}
RTX_PRO = "file56696032727-gpt-oss-120b-rtxpro6000-v0171-marlin"


def test_sm12_builds_marlin_s_padded_experts() -> None:
    """gpt-oss-120b at TP 1: 128 experts, width 2,880 → 2,944 (128), hidden 2,880 → 3,072 (256)."""
    inputs = RECORDS[RTX_PRO].inputs()
    assert inputs.model is not None
    built = mxfp4_experts(inputs.model, inputs.layout, inputs.gpu_name, inputs.version)
    assert built is not None and (built.backend, built.experts, built.padded, built.padded_hidden) == (
        "marlin", 128, 2944, 3072,
    )  # fmt: skip
    chosen = mxfp4_backend(inputs.settings, inputs.gpu_name, inputs.version)
    assert chosen is not None and chosen.name == MARLIN and chosen.source == "release"


def test_the_planned_weights_meet_the_logged_marlin_weights() -> None:
    """The padding: 128 × 3 × (2,944 × 3,072 − 2,880 × 2,880) × 17/32 B = 152,911,872 B a layer, 36 layers 5.13 GiB
    over the unpadded book's 60.80 GiB: the log's 65.97 GiB within 0.1 GiB."""
    inputs = RECORDS[RTX_PRO].inputs()
    weights = next(t for t in vllm.terms(inputs) if t.term is Term.WEIGHTS)
    assert abs(weights.bytes / GIB - 65.97) < 0.1


def test_the_oracle_keeps_marlin_on_sm12_from_0_21() -> None:
    """v0.21.0 … v0.31.0: the gpt-oss priority list's TRTLLM (family 100), Triton (< 11.0) and FlashInfer CUTLASS
    (BF16 scheme on 9.0) refuse SM 12.0, so Marlin; from v0.32.0 Triton runs there but is moved after Marlin
    (oracle/mxfp4.py:413-420): the release's Marlin, padded as at v0.17.1 (the record's 65.97 GiB)."""
    for release in ("0.21.0", "0.24.0", "0.28.0", "0.31.0", "0.32.0", "0.33.0"):
        inputs = RECORDS[RTX_PRO].inputs().model_copy(update={"version": ResolvedVersion(text=release)})
        chosen = mxfp4_backend(inputs.settings, inputs.gpu_name, inputs.version)
        assert chosen is not None and (chosen.name, chosen.source) == (MARLIN, "release"), release
        assert inputs.model is not None
        built = mxfp4_experts(inputs.model, inputs.layout, inputs.gpu_name, inputs.version)
        assert built is not None and (built.backend, built.padded, built.padded_hidden) == ("marlin", 2944, 3072)


# Marlin's padding of gpt-oss-120b at TP 1, 36 layers: 128 × 3 × (2,944 × 3,072 − 2,880 × 2,880) × 17/32 B a layer
MARLIN_120B = 36 * (128 * 3 * (2944 * 3072 - 2880 * 2880) * 17 // 32)  # 5,504,827,392 B
# Triton's copies (Hopper's count: swizzled scales, rows to 256; float32 biases' extra 2 B; allocator rounding)
TRITON_120B = 36 * (128 * (5888 + 3072) * 90 + 128 * 3 * 2880 * 2) + 50_135_040  # 3,845,652,480 B


def on_sm12(release: str, **flags: str) -> CalibrationInputs:
    """The Kaggle H100 gpt-oss-120b start (TP 1, its book: Triton's layout, which pads nothing at 2,880 = 45 × 64)
    at `release` on an RTX PRO 6000 (SM 12.0): before v0.12.0 SM 12 builds the same book as Hopper."""
    record = RECORDS["huikang-gpt-oss-120b-h100-v0112"]
    version = from_flag(release, engine_rules("vllm").calendar)
    inputs = dataclasses.replace(record, version=version).inputs()
    settings = inputs.settings.model_copy(update={"flags": {**inputs.settings.flags, **flags}})
    return inputs.model_copy(update={"gpu_name": "RTXPRO6000", "settings": settings})


def test_before_0_12_sm12_takes_hoppers_checks() -> None:
    """v0.10.2 / v0.11.2: the wheel ships no triton_kernels, so Marlin is assumed and Triton is the other backend
    (the package rule); v0.10.1's wheel pins torch 2.7.1 (< 2.8.0): Marlin, the release's; v0.12.0 bounds Triton
    below 11.0: Marlin, the release's, whatever the install holds."""
    found = {text: mxfp4_backend(on_sm12(text).settings, "RTXPRO6000", on_sm12(text).version)
             for text in ("0.10.1", "0.10.2", "0.11.2", "0.12.0")}  # fmt: skip
    assert {text: (b.name, b.source, b.other) for text, b in found.items() if b is not None} == {
        "0.10.1": ("marlin", "release", None), "0.10.2": ("marlin", "assumed", "triton"),
        "0.11.2": ("marlin", "assumed", "triton"), "0.12.0": ("marlin", "release", None)}  # fmt: skip


def test_the_assumed_marlin_on_sm12_builds_marlin_and_carries_tritons_difference() -> None:
    """v0.11.2 on SM 12: Triton's book plus Marlin's padding (5,504,827,392 B) less nothing held (Marlin repacks in
    place): 65.93 GiB (the RTX PRO 6000 v0.17.1 log: 65.97); Triton's difference 5,504,827,392 − 3,845,652,480 =
    1,659,174,912 B beside it (Triton's copies counted as Hopper's: the Blackwell layout's are not modelled)."""
    inputs = on_sm12("0.11.2")
    weights = next(t for t in vllm.terms(inputs) if t.term is Term.WEIGHTS)
    assert weights.bytes - (inputs.weights_bytes + 131_072 * 64 * 4) == MARLIN_120B
    assert abs(weights.bytes / GIB - 65.97) < 0.1
    assert weights.beside_error_bytes == MARLIN_120B - TRITON_120B == 1_659_174_912


def test_a_stated_or_printed_backend_runs_before_the_sm12_rule() -> None:
    """The log's 'Using Marlin backend' is measured at v0.17.1 too; VLLM_MXFP4_USE_MARLIN=1 at v0.11.2 (mxfp4.py:136)
    and v0.17.1 (:164) is stated; a printed Triton on SM 12 (v0.11.2 with triton_kernels added) is not modelled
    (Blackwell layouts), and v0.10.1's VLLM_MXFP4_USE_MARLIN=0 (Triton's layout, mxfp4.py:123-125) is refused by name."""
    printed = on_sm12("0.17.1", **{MEASURED_KEY: "marlin"})
    backend = mxfp4_backend(printed.settings, "RTXPRO6000", printed.version)
    assert backend is not None and (backend.name, backend.source) == ("marlin", "measured")
    for release in ("0.11.2", "0.17.1"):  # v0.17.1 mxfp4.py: `envs.VLLM_MXFP4_USE_MARLIN or not …supported`
        stated = on_sm12(release, **{MARLIN_ENV: "1"})
        backend = mxfp4_backend(stated.settings, "RTXPRO6000", stated.version)
        assert backend is not None and (backend.name, backend.source) == ("marlin", "stated")
    triton = on_sm12("0.11.2", **{MEASURED_KEY: "triton"})
    assert mxfp4_backend(triton.settings, "RTXPRO6000", triton.version) is None
    zero = on_sm12("0.10.1", **{MARLIN_ENV: "0"})
    with pytest.raises(UnsupportedModelError, match="SM 12.x"):
        mxfp4_backend(zero.settings, "RTXPRO6000", zero.version)

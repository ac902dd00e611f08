"""vLLM's MXFP4 experts on SM 12.0: Marlin, the only backend there (mxfp4_sm12.py).

From vLLM 0.17.1's quantization/mxfp4.py:108-172 (`get_mxfp4_backend`: FlashInfer on 9.0 / family 100, Triton on
9.0 <= capability < 11.0, else Marlin) and Marlin's `create_weights` (:295-312: width to 128, hidden to 256). The
record's log (RTX PRO 6000, SM 12.0, v0.17.1, gpt-oss-120b, TP 1): 'Weight-only FP4 compression will be used
leveraging the Marlin kernel', 'Model loading took 65.97 GiB'.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm import calibration as vllm
from kvtop.domain.engines.vllm.mxfp4_backend import MARLIN, mxfp4_backend
from kvtop.domain.engines.vllm.weights_built import mxfp4_experts

GIB = 1 << 30
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


def test_releases_not_read_keep_no_rule() -> None:
    inputs = RECORDS[RTX_PRO].inputs().model_copy(update={"version": ResolvedVersion(text="0.21.0")})
    assert mxfp4_backend(inputs.settings, inputs.gpu_name, inputs.version) is None

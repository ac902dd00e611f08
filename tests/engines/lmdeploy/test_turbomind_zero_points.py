"""TurboMind's 16-bit zero points of a 4-bit group-quantized checkpoint (docs/engines/lmdeploy.md §15.6), and the
error LMDeploy's assumed context carries (§15.3).

Expected values are LMDeploy's own allocation done by hand: v0.4.2 `LlamaDecoderLayerWeight.cc mallocWeights`
allocates an int4 matrix's `kernel` as input × output / 8 ints and its `scales_and_zeros` as
input / group × output × 2 halves; AWQ's checkpoint stores the zero point packed in 4 bits (`qzeros`), so each
group holds 2 B − 0.5 B = 1.5 B more on the GPU than the checkpoint's tensors.
"""

from __future__ import annotations

from kvtop.domain.calibration.features import ASSUMED_CONTEXT_ERROR_GIB
from kvtop.domain.engines.lmdeploy.calibration import context
from kvtop.domain.engines.lmdeploy.turbomind_weights import zero_point_extra_bytes
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

W4_20B = CONFIGS.parent / "calibration" / "configs" / "internlm--internlm-chat-20b-w4.RECONSTRUCTED.json"
PLAIN_20B = CONFIGS / "internlm--internlm-20b.json"


def test_awq_20b_zero_points_are_held_in_16_bits() -> None:
    """internlm-chat-20b (hidden 5,120, intermediate 13,824, 60 layers, MHA 40 heads) in W4 group 128: groups per
    layer are 40 × 15,360 (qkv) + 40 × 5,120 (o) + 40 × 27,648 (w1|w3) + 108 × 5,120 (w2) = 2,478,080; × 60 × 1.5 B
    = 223,027,200 B (212.7 MiB)."""
    model = load_model(str(W4_20B))
    assert zero_point_extra_bytes(model, ParallelLayout(tp=1), None) == 223_027_200


def test_tp_2_halves_every_matrix() -> None:
    """At TP 2 each rank holds half of every matrix's groups (qkv, w1|w3 by output; o, w2 by input: 13,824 / 2 is
    54 groups of 128)."""
    model = load_model(str(W4_20B))
    assert zero_point_extra_bytes(model, ParallelLayout(tp=2), None) == 223_027_200 // 2


def test_an_unquantized_checkpoint_holds_nothing_more() -> None:
    assert zero_point_extra_bytes(load_model(str(PLAIN_20B)), ParallelLayout(tp=1), None) == 0


def test_wiring_lmdeploys_assumed_context_takes_the_shared_fitted_error() -> None:
    """A wiring check, not a check of the figure: no LMDeploy record measures the context, so it stays assumed
    (0.75 GiB at TP 1, by hand: 0.75 × 1,024 MiB = 768 MiB) and its error is whatever the calibration run fitted from
    every engine's measured contexts (features.ASSUMED_CONTEXT_ERROR_GIB, §15.3, session 46; that figure is the 90th
    percentile of 70 records, fitted and written by benchmarks/calibration/run.py --write), not the ± 2 GiB read
    off cases 3411 and 4285's own capacity misses until then."""
    from kvtop.domain.calibration.inputs import CalibrationInputs
    from kvtop.domain.engines.versions import ResolvedVersion
    from kvtop.domain.launch import LaunchSettings

    model = load_model(str(PLAIN_20B))
    inputs = CalibrationInputs(model=model, settings=LaunchSettings(engine="lmdeploy"), layout=ParallelLayout(tp=1),
                               gpu_name="A100-80GB", gpu_total_bytes=80 << 30, version=ResolvedVersion(),
                               weights_bytes=40 << 30, context_length=4096)  # fmt: skip
    term = context(inputs)
    assert term.source == "assumed"
    assert term.bytes == 768 << 20
    assert term.error_bytes == round(ASSUMED_CONTEXT_ERROR_GIB * GIB) != 2 << 30  # the shared constant, by design
    assert "how far the context the engines' logs measured fell from this assumption" in term.basis

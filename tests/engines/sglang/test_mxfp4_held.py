"""gpt-oss's MXFP4 experts on SGLang's triton_kernels runner: the checkpoint's block scales kept beside their
swizzled, padded copy on Hopper, and float32 expert biases (engines/sglang/mxfp4_held.py; quantization/mxfp4.py's
triton branch deletes the weights only, read at 0.5.3rc0 … 0.5.23).

Expected figures: openai/gpt-oss-20b's shapes (24 MoE layers of 32 experts, hidden 2,880, intermediate 2,880, biased
experts) counted by hand from the code: triton_kernels' HopperMXScaleLayout pads the scales' rows to 256 (w13 5,760
→ 5,888, w2 2,880 → 3,072) over 2,880 ÷ 32 = 90 columns; the biases [32, 5,760] and [32, 2,880] re-made in float32
hold 2 B more each. And what SGLang 0.5.10.post1 printed for that start on an H100 PCIe (tests/data/calibration/
sglang.jsonl, chiatzen…-auto: 'weight': 14.67 GiB). Never kvtop's own figures.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import Record, load
from kvtop.domain.engines.sglang.mxfp4_held import mxfp4_held, swizzled_scale_tensors
from kvtop.domain.engines.sglang.weights_held import held_beside
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from tests.corpus_records import logged_bytes

CHIATZEN = "chiatzen-gpt-oss-20b-h100pcie-sglang-v0510post1-auto"
W13_SCALES = 32 * 5_888 * 90  # 16,957,440 B a layer
W2_SCALES = 32 * 3_072 * 90  # 8,847,360 B a layer
BIASES_MORE = 32 * (5_760 + 2_880) * (4 - 2)  # 552,960 B a layer


def _record() -> Record:
    return next(record for record in load("sglang") if record.id == CHIATZEN)


def test_hopper_keeps_the_swizzled_scales_and_float32_biases() -> None:
    inputs = _record().inputs()
    assert swizzled_scale_tensors(inputs) == [W13_SCALES, W2_SCALES] * 24
    found = mxfp4_held(inputs)
    assert found is not None and found[0] == 24 * (W13_SCALES + W2_SCALES + BIASES_MORE) == 632_586_240


def test_the_weights_move_toward_the_logged_load_and_stay_under_it() -> None:
    """The book and what kvtop held before (rope cache, rounding) missed 1.63 GiB; the kept scales close 0.59 of it
    (and their rounding); ≈ 1.0 GiB stays unexplained, so the term stays under the log."""
    inputs = _record().inputs()
    logged = logged_bytes(f"{CHIATZEN}:weights")
    held = held_beside(inputs)
    assert held is not None
    with_scales = inputs.weights_bytes + held[0]
    assert 0.06 < 1 - with_scales / logged < 0.08  # 13.71 GiB against 14.67: −6.6 % (−11.1 % before)


def test_other_gpus_releases_and_layouts() -> None:
    inputs = _record().inputs()
    assert mxfp4_held(inputs.model_copy(update={"gpu_name": "B200"})) is None  # SM 10.x: flashinfer_mxfp4
    a100 = inputs.model_copy(update={"gpu_name": "A100-80GB"})  # StridedLayout: the scales' "copy" is a view
    assert swizzled_scale_tensors(a100) == []
    biases_only = mxfp4_held(a100)
    assert biases_only is not None and biases_only[0] == 24 * BIASES_MORE
    old = inputs.model_copy(update={"version": ResolvedVersion(text="0.5.0rc0", source=VersionSource.FLAG)})
    assert mxfp4_held(old) is None  # not read before 0.5.3rc0
    ep2 = inputs.model_copy(update={"layout": inputs.layout.model_copy(update={"tp": 2, "ep": 2})})
    assert mxfp4_held(ep2) is None  # triton_kernel needs EP 1; the auto runner takes another


def test_from_0519_the_scales_k_is_padded_to_128_weights_first() -> None:
    """`_pad_hopper_mxfp4_scale` (0.5.19 on): 2,880 weights → round_up(2,880, 128) ÷ 32 = 92 columns, not 90."""
    inputs = _record().inputs()
    later = inputs.model_copy(update={"version": ResolvedVersion(text="0.5.19", source=VersionSource.FLAG)})
    assert swizzled_scale_tensors(later) == [32 * 5_888 * 92, 32 * 3_072 * 92] * 24
    before = inputs.model_copy(update={"version": ResolvedVersion(text="0.5.18", source=VersionSource.FLAG)})
    assert swizzled_scale_tensors(before) == [W13_SCALES, W2_SCALES] * 24


def test_sm120_takes_triton_kernels_to_0513_whatever_the_ep_then_another_runner() -> None:
    """server_args.py's SM120 branch comes before the EP / --quantization test: triton_kernel to 0.5.13 (0.5.13
    :2196), Marlin from 0.5.14 (:3886), flashinfer_mxfp4 by 0.5.17 (arg_groups/overrides.py:922)."""
    rtx5090 = _record().inputs().model_copy(update={"gpu_name": "RTX5090"})
    ep2 = rtx5090.model_copy(update={"layout": rtx5090.layout.model_copy(update={"tp": 2, "ep": 2})})
    found = mxfp4_held(ep2)  # 16 local experts' biases, 2 B more a value; StridedLayout: no scales twice
    assert found is not None and found[0] == 24 * 16 * (5_760 + 2_880) * 2
    later = rtx5090.model_copy(update={"version": ResolvedVersion(text="0.5.14", source=VersionSource.FLAG)})
    assert mxfp4_held(later) is None


def test_a_typed_quantization_leaves_the_auto_runner_off_triton_kernels() -> None:
    """`self.quantization is None` is the auto test's (server_args.py 0.5.10.post1 :1768-1771)."""
    inputs = _record().inputs()
    settings = inputs.settings.model_copy(update={"quantization": "mxfp4"})
    assert mxfp4_held(inputs.model_copy(update={"settings": settings})) is None

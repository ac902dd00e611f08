"""Which MXFP4 backend vLLM runs on Hopper, and what the other one would hold (engines/vllm/mxfp4_backend.py,
mxfp4_weights.py; issue 27).

Expected values are vLLM's own arithmetic done by hand: `Mxfp4MoEMethod.create_weights` (quantization/mxfp4.py,
read at v0.13.0) pads the intermediate size per partition to 128 and the hidden size to 256 under Marlin, to 64
under Triton; a 4-bit weight and its E8M0 scale per 32 take 17/32 B. Triton's copies and the allocator's rounding
are the figures tests/domain/test_calibration_weights.py checks against the H100 logs (64.38 GiB printed). The
Kaggle v0.11.2 log (tests/data/calibration/SOURCES.md) printed 'Using Marlin backend' and 65.9651 GiB.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import from_flag
from kvtop.domain.engines.vllm import calibration as vllm
from kvtop.domain.engines.vllm.mxfp4_backend import MARLIN_ENV, MEASURED_KEY, mxfp4_backend
from kvtop.domain.engines.vllm.mxfp4_weights import backend_weights, marlin_over_triton
from kvtop.units import GIB

RECORDS = {record.id: record for record in load("vllm")}

# Marlin's padding, one layer: experts × (gate, up, down) × (2,944 × 3,072 − 2,880 × 2,880) weights × 17/32 B
MARLIN_120B = 36 * (128 * 3 * (2944 * 3072 - 2880 * 2880) * 17 // 32)  # 5,504,827,392 B; Triton pads none at TP 1
MARLIN_20B = 24 * (32 * 3 * (2944 * 3072 - 2880 * 2880) * 17 // 32)  # 917,471,232 B
# Triton's copies, one layer: swizzled scales (rows to 256) + float32 biases' extra 2 B; and the allocator's rounding
TRITON_120B = 36 * (128 * (5888 + 3072) * 90 + 128 * 3 * 2880 * 2) + 50_135_040
# gpt-oss-20b: w13's checkpoint scales (15.82 MiB) hold 16 MiB; nothing else rounds (under 10 MiB, or split)
TRITON_20B = 24 * (32 * (5888 + 3072) * 90 + 32 * 3 * 2880 * 2) + 24 * ((16 << 20) - 32 * 5760 * 90)


def inputs_of(record_id: str, **flags: str) -> CalibrationInputs:
    inputs = RECORDS[record_id].inputs()
    settings = inputs.settings.model_copy(update={"flags": {**inputs.settings.flags, **flags}})
    return inputs.model_copy(update={"settings": settings})


def test_hopper_from_0_10_2_to_0_11_2_assumes_the_wheels_marlin_and_names_triton() -> None:
    """The v0.11.2 wheel ships no triton_kernels and requires none (its METADATA; import_utils.py:398-400 looks for
    the package alone), so mxfp4.py:134-142 returns Marlin where only the wheel is installed: the Kaggle v0.11.2 log
    printed 'Using Marlin backend'. An install that adds the package runs Triton: the other backend."""
    for record_id in ("huikang-gpt-oss-120b-h100-v0112", "case-vllm-27508-gpt-oss-120b-h100"):
        inputs = inputs_of(record_id)
        backend = mxfp4_backend(inputs.settings, "H100", inputs.version)
        assert backend is not None and (backend.name, backend.source, backend.other) == ("marlin", "assumed", "triton")
    # llm-d's starts ran `vllm/vllm-openai:latest` of 2026-01 (resolved to v0.14.0 by date, session 51): the wheel
    # vendors triton_kernels from v0.12.0, and they printed Triton's 64.38 GiB
    inputs = inputs_of("llmd-v011-gpt-oss-120b")
    backend = mxfp4_backend(inputs.settings, "H100", inputs.version)
    assert backend is not None and (backend.name, backend.source, backend.other) == ("triton", "release", None)


def test_the_eras_follow_the_wheels() -> None:
    """v0.10.1's wheel pins torch 2.7.1, below the 2.8.0 `_should_use_marlin` (mxfp4.py:131-134) wants for Triton:
    Marlin is the release's (vllm#23278 printed 65.97 GiB at v0.10.1). v0.10.2 pins torch 2.8.0: the package decides.
    v0.12.0's wheel holds vllm/third_party/triton_kernels (import_utils.py:431-438 finds it): Triton, the release's."""
    settings = inputs_of("huikang-gpt-oss-120b-h100-v0112").settings
    found = {text: mxfp4_backend(settings, "H100", from_flag(text, engine_rules("vllm").calendar))
             for text in ("0.10.1", "0.10.1.1", "0.10.2", "0.11.2", "0.12.0")}  # fmt: skip
    assert {text: (b.name, b.source) for text, b in found.items() if b is not None} == {
        "0.10.1": ("marlin", "release"), "0.10.1.1": ("marlin", "release"), "0.10.2": ("marlin", "assumed"),
        "0.11.2": ("marlin", "assumed"), "0.12.0": ("triton", "release")}  # fmt: skip


def test_marlin_holds_more_than_triton_by_the_layouts() -> None:
    """gpt-oss-120b at TP 1: 5,504,827,392 − 3,845,652,480 = 1,659,174,912 B (1.55 GiB; the logs: 65.97 − 64.38 =
    1.59 GiB); gpt-oss-20b: 917,471,232 − 637,108,224 = 280,363,008 B."""
    assert MARLIN_120B == 5_504_827_392 and TRITON_120B == 3_845_652_480
    assert marlin_over_triton(inputs_of("huikang-gpt-oss-120b-h100-v0112")) == MARLIN_120B - TRITON_120B
    assert MARLIN_20B == 917_471_232 and TRITON_20B == 637_108_224
    assert marlin_over_triton(inputs_of("llmd-v011-gpt-oss-20b")) == MARLIN_20B - TRITON_20B == 280_363_008


def test_the_assumed_marlin_builds_its_layout_and_carries_tritons_difference() -> None:
    """The term is Marlin's 65.93 GiB (the book's 60.79 GiB, the rope's cache and 5,504,827,392 B of padding; the
    Kaggle v0.11.2 log printed 65.97) and carries Triton's difference (1.55 GiB) beside the fitted 2.3 % (root of
    squares), said once in its basis."""
    inputs = inputs_of("huikang-gpt-oss-120b-h100-v0112")
    weights = next(t for t in vllm.terms(inputs) if t.term is Term.WEIGHTS)
    assert weights.bytes - (inputs.weights_bytes + 131_072 * 64 * 4) == MARLIN_120B
    assert abs(weights.bytes / GIB - 65.97) <= 0.06
    assert weights.beside_error_bytes == MARLIN_120B - TRITON_120B
    assert weights.basis.count("marlin (assumed)") == 1 and "triton's weights less marlin's" in weights.basis
    added = backend_weights(inputs)
    assert added is not None and added[:2] == (MARLIN_120B, MARLIN_120B - TRITON_120B)


def test_a_stated_or_printed_marlin_builds_marlins_layout() -> None:
    """VLLM_MXFP4_USE_MARLIN=1, or the log's 'Using Marlin backend': the term is Marlin's, 65.92 GiB (the book's
    60.79 GiB, the rope's cache and 5,504,827,392 B of padding; the log printed 65.97), no backend error."""
    for flags in ({MARLIN_ENV: "1"}, {MEASURED_KEY: "marlin"}):
        inputs = inputs_of("huikang-gpt-oss-120b-h100-v0112", **flags)
        weights = next(t for t in vllm.terms(inputs) if t.term is Term.WEIGHTS)
        assert weights.beside_error_bytes == 0
        assert weights.bytes - (inputs.weights_bytes + 131_072 * 64 * 4) == MARLIN_120B
        assert abs(weights.bytes / GIB - 65.97) <= 0.06


def test_from_0_12_the_wheel_decides_triton() -> None:
    """v0.19.0's wheel vendors triton_kernels (vllm#28788): Triton is the release's, no backend error; the log's
    'Using Triton backend' (llm-d's v0.11.0 start printed Triton's 64.38 GiB) makes it measured at v0.11.0 too."""
    inputs = inputs_of("llmd-v019-gpt-oss-20b-tp2")
    backend = mxfp4_backend(inputs.settings, inputs.gpu_name, inputs.version)
    assert backend is not None and (backend.name, backend.source, backend.other) == ("triton", "release", None)
    assert backend_weights(inputs) is None
    printed = inputs_of("llmd-v011-gpt-oss-120b", **{MEASURED_KEY: "triton"})
    backend = mxfp4_backend(printed.settings, printed.gpu_name, printed.version)
    assert backend is not None and (backend.name, backend.source) == ("triton", "measured")
    assert backend_weights(printed) is None


def test_a_log_that_names_the_backend_reads_it_as_measured() -> None:
    """The Kaggle v0.11.2 log's line (tests/data/calibration/SOURCES.md) names Marlin; fp8.py's 'Using Marlin backend
    for FP8 MoE' is another method's and says nothing of MXFP4."""
    from kvtop.commands.explain import _decisions, settings_typed_for_log
    from kvtop.sources.engine_logs import parse_engine_log

    head = "INFO 11-28 10:00:00 [__init__.py:1] "
    log = parse_engine_log(f"{head}vLLM API server version 0.11.2\n(EngineCore_DP0 pid=1) INFO 11-28 10:00:01 "
                           "[mxfp4.py:161] Using Marlin backend\n")  # fmt: skip
    assert "mxfp4-backend=marlin" in log.decisions
    settings = settings_typed_for_log(_decisions(log.decisions), "vllm", [], "openai/gpt-oss-120b")[0]
    backend = mxfp4_backend(settings, "H100", RECORDS["huikang-gpt-oss-120b-h100-v0112"].version)
    assert backend is not None and (backend.name, backend.source) == ("marlin", "measured")
    fp8 = parse_engine_log(f"{head}vLLM API server version 0.11.2\n{head}Using Marlin backend for FP8 MoE\n")
    assert not any(decision.startswith("mxfp4-backend") for decision in fp8.decisions)


def test_a_launch_line_states_the_environment() -> None:
    """`VLLM_MXFP4_USE_MARLIN=1 vllm serve …` (envs.py: the variable read as an int): Marlin, stated."""
    from kvtop.domain.launch_line import parse_launch_command

    settings = parse_launch_command("VLLM_MXFP4_USE_MARLIN=1 vllm serve openai/gpt-oss-120b --max-model-len 98304")
    assert settings is not None and settings.flags.get(MARLIN_ENV) == "1" and settings.unknown_flags == ()
    backend = mxfp4_backend(settings, "H100", RECORDS["huikang-gpt-oss-120b-h100-v0112"].version)
    assert backend is not None and (backend.name, backend.source) == ("marlin", "stated")

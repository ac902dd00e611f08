"""The forward's MLP transient by the architecture's MLP: an ungated fc1 → activation → fc2 holds two intermediates,
a gated gate-up → activation three (features.mlp_transient_gib)."""

from __future__ import annotations

from kvtop.domain.calibration.features import mlp_transient_gib
from kvtop.domain.engines.vllm.v0_profile import held_forward_bytes
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS

OPT_27B = CONFIGS.parent / "calibration" / "configs" / "facebook--opt-2.7b.RECONSTRUCTED.json"  # hidden 2,560, ffn 10,240
QWEN3_06B = CONFIGS.parent / "calibration" / "configs" / "Qwen--Qwen3-0.6B.json"  # hidden 1,024, intermediate 3,072


def test_opt_s_ungated_mlp_holds_fc1_and_its_activation() -> None:
    """OPT's decoder layer runs fc1 → activation_fn → fc2 (vLLM opt.py `OPTDecoderLayer.forward`): at TP 4 and 8,192
    tokens fc1's output and the activation's are 8,192 × 10,240 ÷ 4 × 2 B each, beside one hidden row:
    8,192 × (2 × 2,560 + 2,560) × 2 = 125,829,120 B (a gated count, 3 × 2,560, would say 167,772,160)."""
    model = load_config_file(OPT_27B)
    assert not model.mlp_gated
    assert round(mlp_transient_gib(model, ParallelLayout(tp=4), 8192) * GIB) == 125_829_120


def test_opt_s_forward_count_stays_below_its_logged_peak() -> None:
    """The forward as counted (the transient and two held rows of 8,192 × 2,560 × 2 B: 209,715,200 B, 0.195 GiB) is
    below the 0.22 GiB torch peak OPT-2.7B's TP-4 start on A30s logged at vLLM 0.11.1.dev12 (the corpus record
    file34802511869-opt-2.7b-4xa30-tp4-v0111dev), where the native sampler's copies would hold about 0.46 GiB."""
    counted = held_forward_bytes(load_config_file(OPT_27B), ParallelLayout(tp=4), 8192)
    assert counted == 209_715_200
    assert counted < 0.22 * GIB


def test_a_gated_mlp_holds_gate_up_and_its_activation() -> None:
    """Qwen3's gate_up output (2 × 3,072) and the activation's (3,072) beside one hidden row at 8,192 tokens, TP 1:
    8,192 × (3 × 3,072 + 1,024) × 2 = 167,772,160 B (qwen3.py / qwen2.py `Qwen2MLP.forward`)."""
    model = load_config_file(QWEN3_06B)
    assert model.mlp_gated
    assert round(mlp_transient_gib(model, ParallelLayout(tp=1), 8192) * GIB) == 167_772_160

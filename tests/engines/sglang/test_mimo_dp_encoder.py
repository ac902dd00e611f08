"""MiMo-V2.5's towers under SGLang's `--mm-enable-dp-encoder` (engines/sglang/architectures.py DATA_PARALLEL_ENCODER;
docs/engines/sglang.md §4.6).

Oracle: SGLang's code. 0.5.12 … 0.5.23 mimo_vl.py (`MiMoVisionTransformer`: `use_data_parallel =
server_args.mm_enable_dp_encoder`, 0.5.15 :255, 0.5.23 :262) hands the flag to every block's VisionAttention and
Qwen2_5_VLMLP and to the Qwen2_5_VisionPatchMerger, which then build "replicated", as at TP 1; mimo_audio.py's
encoder is plain nn.Linear, whole on every rank either way. So with the flag each rank holds the TP-1 build, the
tower's parameters, with the
merger biases qwen2_5_vl.py's Qwen2_5_VisionPatchMerger builds (bias=True), × 2 B (bf16, the towers are left out of
the FP8 quantization); and the engine's pool for the two
DP-attention starts (tests/data/calibration/sglang.jsonl: 678,837 and 678,149 tokens).
"""

from __future__ import annotations

import json

import pytest

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.gpus import gpu_key, gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from kvtop.domain.tower_spec import TOWER_KINDS
from tests.data_paths import DATA

MIMO = DATA / "configs" / "heldout" / "wave5" / "XiaomiMiMo--MiMo-V2.5.json"
LAUNCH = ["--tp", "8", "--dp", "2", "--enable-dp-attention", "--engine-version", "0.5.15.post1"]


def _tower(flags: list[str]) -> tuple[int, int]:
    model = model_from_config(json.loads(MIMO.read_text()))
    ledger = predict(
        model, parse_flags("sglang", flags), gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100"
    )
    (row,) = [row for row in ledger.ranks[0].weights.rows if row.component in TOWER_KINDS]
    return row.bytes, row.shards


def test_the_flag_builds_the_towers_whole_on_every_rank() -> None:
    """The TP-1 build worked by hand in test_mimo_audio_whole.py: audio 416,709,632 + vision whole 2,111,488 + vision
    split 726,482,944 + the merger's biases 9,216 = 1,145,313,280 parameters, × 2 B = 2,290,626,560 B on every rank."""
    model = model_from_config(json.loads(MIMO.read_text()))
    assert model.tower is not None and model.architecture == "MiMoV2ForCausalLM"
    whole, shards = _tower([*LAUNCH, "--mm-enable-dp-encoder"])
    # the merger's two biases SGLang builds: width × merge² = 5,120, out_hidden 4,096
    assert (whole, shards) == ((416_709_632 + 2_111_488 + 726_482_944 + 5_120 + 4_096) * 2, 1) == (2_290_626_560, 1)
    split, shards = _tower(LAUNCH)
    assert shards == 8 and split < whole


@pytest.mark.parametrize(("record", "tokens"), [
    ("file63058095959-mimo-v2.5-fp8-8xh100-tp8-dp2-ctx17408-v0515", 678_837),
    ("file62800163858-mimo-v2.5-fp8-8xh100-tp8-dp2-ctx34816-v0515", 678_149),
])  # fmt: skip
def test_the_dp2_starts_land_near_their_logs(record: str, tokens: int) -> None:
    """Blind, with the towers split over TP, kvtop had 723,605 (+6.6 %, +6.7 %)."""
    found = next(r for r in load("sglang") if r.id == record)
    assert found.model is not None and found.gpu_total_bytes is not None
    plan = planned_capacity(found.model, found.settings, gpu_total_bytes=found.gpu_total_bytes,
                            gpu_name=gpu_key(found.gpu), measured=MeasuredInputs())  # fmt: skip
    assert abs(plan.ledger.token_capacity / tokens - 1) < 0.05

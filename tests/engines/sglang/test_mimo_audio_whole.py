"""MiMo-V2.5's towers at TP 8 without --mm-enable-dp-encoder (SGLang 0.5.15.post1): the audio encoder whole on every
rank, the vision tower's Column/Row matrices split (architectures.TOWER_SPLIT, towers_mimo.py).

Expected figures: SGLang's build worked by hand from its code, never kvtop's. MiMo-V2.5's config
(tests/data/configs/heldout/wave5/XiaomiMiMo--MiMo-V2.5.json), SGLang 0.5.15/0.5.23 models/:

- audio (mimo_audio.py AudioEncoderMixin.build_audio_encoder: transformers Qwen2Model, nn.Embedding, nn.Linear: all
  whole): the local Qwen2Model (width 1024, 6 layers, 16 heads, ffn 4096, Qwen2Config's 151,936-row table, the post
  norm) 151,936 × 1,024 + 6 × (3 × (1,024² + 1,024) + 1,024² + 3 × 1,024 × 4,096 + 2 × 1,024) + 1,024 = 256,277,504;
  20 speech embeddings of 1,280 × 1,024 = 26,214,400; AudioProjection 4,096 → 16,384 → 4,096, no biases,
  134,217,728: 416,709,632 whole.
- vision (mimo_vl.py: MiMoVLVisionConfig's qk_channels = kv_channels = 64 where the config has none, :50-51, the
  blocks' head_dim :300): per block qkv 1,280 × (32 + 2 × 8) × 64 + its bias 3,072, proj 2,048 × 1,280, gate|up
  2 × (1,280 × 4,608 + 4,608), down 4,608 × 1,280 = 24,260,608 split, × 28 = 679,297,024; the merger 5,120² +
  5,120 × 4,096 = 47,185,920 split: 726,482,944 split. Whole: the Conv3d 3 × 2 × 16² × 1,280 = 1,966,080 (no bias),
  28 × (2 norms + proj's and down's biases) × 1,280 = 143,360, 24 windowed blocks' sinks × 32 = 768, ln_q 1,280:
  2,111,488.
- the merger's two biases SGLang builds (qwen2_5_vl.py Qwen2_5_VisionPatchMerger bias=True; vLLM's build has none):
  5,120 split, 4,096 whole.
A rank: 416,709,632 + 2,111,488 + 4,096 + (726,482,944 + 5,120) ÷ 8 = 509,636,224.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.gpus import gpu_key

AUDIO_WHOLE = 256_277_504 + 26_214_400 + 134_217_728
VISION_WHOLE = 1_966_080 + 143_360 + 768 + 1_280 + 4_096
VISION_SPLIT = 28 * 24_260_608 + 47_185_920 + 5_120


def test_the_audio_encoder_is_whole_and_the_vision_matrices_split() -> None:
    record = next(r for r in load("sglang") if r.id.startswith("file63058095959"))
    assert record.model is not None and record.gpu_total_bytes is not None
    flags = {k: v for k, v in record.settings.flags.items() if k != "mm-enable-dp-encoder"}
    settings = record.settings.model_copy(update={"dp": 1, "enable_dp_attention": False, "flags": flags})
    plan = planned_capacity(record.model, settings, gpu_total_bytes=record.gpu_total_bytes,
                            gpu_name=gpu_key(record.gpu), measured=MeasuredInputs())  # fmt: skip
    row = next(x for x in plan.ledger.ranks[0].weights.rows if x.component == "vision_audio")
    assert VISION_SPLIT == 726_488_064
    assert row.params == AUDIO_WHOLE + VISION_WHOLE + VISION_SPLIT // 8 == 509_636_224

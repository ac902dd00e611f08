"""DeepSeek-V4's hyper-connections' head mixer per pipeline stage, as vLLM 0.33.0 and SGLang 0.5.23 build it.

vLLM 0.33.0 models/deepseek_v4/nvidia/model.py DeepseekV4Model.__init__ builds hc_head_fn [hc_mult, hc_mult × hidden],
hc_head_base [hc_mult] and hc_head_scale [1], fp32, with no is_last_rank guard (lines 883-903; the norm at 878 and
lm_head at 1344 are guarded); SGLang 0.5.23 srt/models/deepseek_v4.py DeepseekV4Model builds them only
`if self.pp_group.is_last_rank and not self.hc_pre_from_prev_sublayer` (line 3846).

Expected figures: the engines' own meta builds of deepseek-ai--DeepSeek-V4-Flash (tests/data/configs/heldout) at
TP1×PP2, through benchmarks/engine_diff/param_shapes_runner.py (registry_sweep's case for the config, tp 1, plus
`--pipeline-parallel-size 2` / `--pp-size 2`). vLLM stage 0: `model` 79,772,993,444 B holding model.hc_head_fn
[4, 16384] fp32 262,144 B, hc_head_base [4] 16 B, hc_head_scale [1] 4 B, embed_tokens [129280, 4096] bf16, no
norm; stage 1: `model` 75,174,596,940 B + `lm_head` 1,059,061,760 B, the three again with norm [4096]. SGLang stage
0: no hc_head_* parameter; stage 1: the three, norm and lm_head. Never kvtop's own figures.
"""

from __future__ import annotations

import json

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.layout import ParallelLayout, StageParts
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import CONFIGS

FLASH = "deepseek-ai--DeepSeek-V4-Flash"
# hc_mult 4, hidden_size 4096 (the config): fn 4 × (4 × 4096) + base 4 + scale 1 = 65,541 fp32 parameters
HEAD_MIXER_BYTES = (4 * 4 * 4096 + 4 + 1) * 4
# vLLM's get_pp_indices over 43 layers at PP 2: 21 each, the remainder on partition [-2] (stage 0)
VLLM_STAGES = {0: range(0, 22), 1: range(22, 43)}
VLLM_ENGINE_BYTES = {0: 79_772_993_444, 1: 75_174_596_940 + 1_059_061_760}


def _model() -> ModelSpec:
    return model_from_config(json.loads((CONFIGS / "heldout" / f"{FLASH}.json").read_text()), source=FLASH)


def _parts(engine: str, version: str, stage: int, model: ModelSpec) -> StageParts:
    return engine_rules(engine).stage_parts(model, stage, 2, ResolvedVersion(text=version, source=VersionSource.FLAG))


def _bytes(model: ModelSpec, stage: int, parts: StageParts) -> int:
    book = weights_book(model, ParallelLayout(tp=1, pp=2), VLLM_STAGES[stage], first_stage=stage == 0,
                        last_stage=stage == 1, parts=parts)  # fmt: skip
    return book.total_bytes


def test_head_mixer_bytes_by_hand() -> None:
    """The engine's listing: 262,144 + 16 + 4 B."""
    assert HEAD_MIXER_BYTES == 262_144 + 16 + 4 == 262_164


def test_vllm_builds_the_head_mixer_on_every_stage() -> None:
    """Both stages equal the meta build; stage 0 was 262,164 B short while kvtop kept the mixer with the norm."""
    model = _model()
    assert model.body.hc_streams == 4 and model.hidden_size == 4096 and model.num_layers == 43
    for stage in (0, 1):
        parts = _parts("vllm", "0.33.0", stage, model)
        assert parts.head_mixer is True
        assert _bytes(model, stage, parts) == VLLM_ENGINE_BYTES[stage]
    first = _parts("vllm", "0.33.0", 0, model)
    assert first.final_norm is False
    guarded = first.model_copy(update={"head_mixer": None})
    assert _bytes(model, 0, first) - _bytes(model, 0, guarded) == HEAD_MIXER_BYTES


def test_sglang_keeps_the_head_mixer_on_the_last_stage() -> None:
    """SGLang's stage 0 holds no hc_head_* (its meta build); its last stage holds them with the norm."""
    model = _model()
    first, last = (_parts("sglang", "0.5.23", stage, model) for stage in (0, 1))
    assert first.head_mixer is None and first.final_norm is False
    assert last.head_mixer is None and last.final_norm is True

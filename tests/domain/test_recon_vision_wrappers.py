"""Reconstructed vision wrappers (issue 26) against the engines' meta builds: MiniCPM-V 2.6 (model_type minicpmv,
class MiniCPMV) and Skywork-R1V-38B (skywork_chat, SkyworkR1VChatModel), tests/data/configs/recon (SOURCES.md there).

Oracles, independent of kvtop:
- MiniCPM-V 2.6: the language model's shapes as transformers printed the real checkpoint (GitHub viitrix/vt-transformer
  models/minicpm2.6/dump_from_huggingface.py: Embedding(151666, 3584), 28 Qwen2 layers with q/k/v biases, k/v
  [512, 3584], MLP 18944, untied lm_head), vocabulary padded to 64 as vLLM's VocabParallelEmbedding does; the
  registry sweep recorded vLLM 0.33.0 and SGLang 0.5.23 alike: llm 15,225,728,000 B (TP 1) / 7,613,068,288 B (TP 2),
  vpm 835,584,480 / 424,304,496 B, resampler 137,238,528 B.
- Skywork-R1V-38B: its language model is DeepSeek-R1-Distill-Qwen-32B, 32,763,876,352 BF16 parameters by the Hub's
  safetensors count (GitHub daniel-p-green/alain-ai-learning-platform, sources/huggingface/model.json); vLLM 0.33.0
  built language_model 65,527,752,704 B (TP 1) / 32,764,536,832 B (TP 2), vision_model 11,072,992,000 /
  7,386,016,000 B and mlp1 183,572,480 B.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT as SGLANG_SPLIT
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_SPLIT
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

RECON = DATA / "configs" / "recon"
MINICPM_V = RECON / "recon--openbmb--MiniCPM-V-2_6.json"
SKYWORK = RECON / "recon--Skywork--Skywork-R1V-38B.json"
BF16 = 2


def _load(path: object, **changes: object) -> dict[str, object]:
    return {**json.loads(path.read_text()), **changes}  # type: ignore[attr-defined]


def _book(config: dict[str, object], tp: int) -> tuple[int, int]:
    """(the language model's bytes, the vision row's bytes) of the first rank at TP `tp`."""
    model = model_from_config(config)
    book = weights_book(model, ParallelLayout(tp=tp), range(model.num_layers), first_stage=True, last_stage=True)
    vision = sum(int(row.bytes) for row in book.rows if row.component == "vision")
    return int(book.total_bytes) - vision, vision


def test_minicpm_v_2_6_language_model_is_the_printed_checkpoint() -> None:
    """Per layer: q [3584, 3584] + [3584], k and v [512, 3584] + [512], o [3584, 3584], gate/up/down 3 × 3584 × 18944,
    two norms [3584]; embed_tokens and lm_head [151680, 3584] (151,666 padded to 64); the final norm."""
    hidden = 3584
    layer = hidden * hidden + hidden + 2 * (512 * hidden + 512) + hidden * hidden + 3 * hidden * 18944 + 2 * hidden
    expected = (28 * layer + 2 * 151_680 * hidden + hidden) * BF16
    assert expected == 15_225_728_000
    assert _book(_load(MINICPM_V), 1)[0] == expected
    assert _book(_load(MINICPM_V), 2)[0] == 7_613_068_288


@pytest.mark.parametrize("tp", [1, 2])
def test_minicpm_v_2_6_tower_is_the_engines_vpm_and_resampler(tp: int) -> None:
    engine = {1: 835_584_480, 2: 424_304_496}[tp] + 137_238_528
    assert _book(_load(MINICPM_V), tp)[1] == engine
    model = model_from_config(_load(MINICPM_V))
    assert model.tower is not None
    for split in (VLLM_SPLIT, SGLANG_SPLIT):
        assert BF16 * model.tower.params_per_rank(tp, split) == engine
    assert not any("vision tower" in note for note in model.not_modelled)


@pytest.mark.parametrize("version", [None, 2.5, 4.5])
def test_other_minicpm_v_versions_are_refused_by_name(version: float | None) -> None:
    """The engines pick MiniCPM-V's language model by `version` (absent: 2.0 or 2.5, MiniCPM / Llama-3; 4.x Qwen3):
    vLLM 0.33.0 minicpmv.py MiniCPMV.__new__. The entry describes 2.6's Qwen2 only."""
    config = _load(MINICPM_V)
    if version is None:
        del config["version"]
    else:
        config["version"] = version
    with pytest.raises(UnsupportedModelError) as err:
        model_from_config(config)
    assert "version" in str(err.value)


@pytest.mark.parametrize("tp", [1, 2])
def test_skywork_r1v_38b_is_the_engines_build(tp: int) -> None:
    """The language model: the Hub's 32,763,876,352 parameters × 2 B at TP 1; InternViT-6B (45 blocks) and mlp1
    as InternVL's (vision_model + mlp1 per rank as vLLM 0.33.0 built them)."""
    language, vision = _book(_load(SKYWORK), tp)
    assert language == {1: 32_763_876_352 * BF16, 2: 32_764_536_832}[tp]
    assert vision == {1: 11_072_992_000, 2: 7_386_016_000}[tp] + 183_572_480

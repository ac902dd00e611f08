"""Reconstructed vision wrappers of session 44 (issue 26) against vLLM 0.33.0's meta builds: H2OVL-Mississippi-2B
(model_type h2ovl_chat, class H2OVLChatModel) and Phi-4-reasoning-vision-15B (phi4-siglip, Phi4ForCausalLMV),
tests/data/configs/recon (SOURCES.md there). SGLang 0.5.23 registers neither class.

Oracles, independent of kvtop: the shapes each engine module builds, by hand in each test's docstring, and the
registry sweep's rows (tests/data/engine_diff/registry/vllm-0.33.0.json, `registry_sweep.py --engine vllm --set
real --only recon--h2oai--h2ovl-mississippi-2b,recon--microsoft--Phi-4-reasoning-vision-15B`):
- H2OVL-Mississippi-2B: language_model 3,662,402,560 / 1,831,326,720 B (TP 1 / 2), vision_model 608,024,576 /
  305,862,656 B, mlp1 34,105,344 B; 2,152,266,240 parameters in all (H2O.ai: "a robust 2.1 billion parameter
  model").
- Phi-4-reasoning-vision-15B: language_model 29,319,014,400 / 14,659,921,920 B, vision_tower 794,815,808 /
  398,768,416 B, multi_modal_projector 64,245,760 / 32,128,000 B.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_SPLIT
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

RECON = DATA / "configs" / "recon"
H2OVL = "recon--h2oai--h2ovl-mississippi-2b"
PHI4V = "recon--microsoft--Phi-4-reasoning-vision-15B"
BF16 = 2


def _load(name: str) -> dict[str, object]:
    return dict(json.loads((RECON / f"{name}.json").read_text()))


def _book(name: str, tp: int) -> tuple[int, int]:
    """(the language model's bytes, the vision row's bytes) of the first rank at TP `tp`, vLLM's tower split."""
    model = model_from_config(_load(name))
    book = weights_book(model, ParallelLayout(tp=tp), range(model.num_layers), first_stage=True, last_stage=True,
                        tower_split=VLLM_SPLIT)  # fmt: skip
    vision = sum(int(row.bytes) for row in book.rows if row.component == "vision")
    return int(book.total_bytes) - vision, vision


def _engine(name: str, tp: int) -> dict[str, int]:
    row = row_of("vllm", "0.33.0", name, tp)
    return dict(row["stages"][0]["param_bytes"])


def test_h2ovl_2b_language_model_is_danube2_by_hand() -> None:
    """H2O-Danube2-1.8B (Mistral layers, 32 heads of 80, 8 KV heads): per layer q and o [2560, 2560], k and v
    [640, 2560], gate/up/down 3 × 2560 × 6912, two RMSNorms [2560]; embed_tokens and lm_head [32000, 2560]
    (untied); the final norm."""
    hidden = 2560
    layer = 2 * hidden * hidden + 2 * 640 * hidden + 3 * hidden * 6912 + 2 * hidden
    expected = (24 * layer + 2 * 32_000 * hidden + hidden) * BF16
    assert expected == _engine(H2OVL, 1)["language_model"] == 3_662_402_560
    assert _book(H2OVL, 1)[0] == expected
    assert _book(H2OVL, 2)[0] == _engine(H2OVL, 2)["language_model"]


@pytest.mark.parametrize("tp", [1, 2])
def test_h2ovl_2b_tower_is_internvits_and_mlp1(tp: int) -> None:
    """InternViT-300M (24 blocks, 1024 wide, MLP 4096, LayerNorm, qkv bias) and InternVL's mlp1 (LayerNorm over
    4096 = 1024 × (1 / 0.5)², 4096 → 2560 → 2560 with biases): at TP 1, mlp1 (4096 × 2 + 4096 × 2560 + 2560 +
    2560 × 2560 + 2560) × 2 B = 34,105,344 B."""
    assert (4096 * 2 + 4096 * 2560 + 2560 + 2560 * 2560 + 2560) * BF16 == 34_105_344
    engine = _engine(H2OVL, tp)
    assert _book(H2OVL, tp)[1] == engine["vision_model"] + engine["mlp1"]


def test_phi4_siglip_tower_is_its_parts_by_hand() -> None:
    """vLLM phi4siglip.py: SigLIP2 so400m to layer -2 (26 of 27 blocks) without its post-LayerNorm — a biased patch
    Linear 768 → 1152 and a 256-row table (whole); per block two LayerNorms, qkv, out, fc1 4304 and fc2 with biases
    (out's and fc2's biases whole) — and the projector 1152 → 5120 → 5120, biased (linear_1 Column, linear_2 Row:
    its bias whole)."""
    width, mlp = 1152, 4304
    embed = 3 * 16 * 16 * width + width + 256 * width
    block_whole = 2 * 2 * width + width + width
    block_split = 3 * width * width + 3 * width + width * width + width * mlp + mlp + mlp * width
    projector_split = 1152 * 5120 + 5120 + 5120 * 5120
    tp1, tp2 = _engine(PHI4V, 1), _engine(PHI4V, 2)
    assert 2 * (embed + 26 * (block_whole + block_split)) == tp1["vision_tower"] == 794_815_808
    assert 2 * (embed + 26 * block_whole + 26 * block_split // 2) == tp2["vision_tower"] == 398_768_416
    assert 2 * (projector_split + 5120) == tp1["multi_modal_projector"] == 64_245_760
    assert 2 * (projector_split // 2 + 5120) == tp2["multi_modal_projector"] == 32_128_000


@pytest.mark.parametrize("tp", [1, 2])
def test_phi4_reasoning_vision_is_vllms_build(tp: int) -> None:
    """The language model is Phi-4's (read generically: 40 layers, 5120 wide, 40 heads, 10 KV heads, MLP 17920,
    vocabulary 100,352, untied), the tower and projector towers_phi4_siglip's."""
    engine = _engine(PHI4V, tp)
    assert _book(PHI4V, tp) == (engine["language_model"], engine["vision_tower"] + engine["multi_modal_projector"])


def test_phi4_siglip_without_mm_hidden_size_names_the_tower_not_modelled() -> None:
    """vLLM reads config.mm_hidden_size by attribute (no default): without it kvtop books no tower and says so."""
    config = _load(PHI4V)
    del config["mm_hidden_size"]
    model = model_from_config(config)
    assert model.tower is None
    assert any("vision tower" in note for note in model.not_modelled)

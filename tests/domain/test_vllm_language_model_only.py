"""vLLM's `--language-model-only`: the tower of a class read is not built, and the profile runs no encoder (text_only.py).

Expected values from a start's log, not from kvtop: Qwen/Qwen3.5-35B-A3B bf16 through vLLM 0.20.0's `LLM` class
(`language_model_only=True`, eager, 0.90, max_model_len 4096) on one RTX PRO 6000 Blackwell Server Edition logged
'Model loading took 64.69 GiB' and 209,088 KV tokens (16.03 GiB; search-index id 67603003401,
tests/data/calibration/SOURCES.md). The engine's code gives the mechanism: `get_limit_per_prompt` is 0 for every
modality (v0.19.0 config/multimodal.py:264-265) and `_mark_tower_model` then builds `self.visual` as
`StageMissingLayer` (models/interfaces.py:285, qwen3_5.py:821).
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.calibration.estimate import calibrated_ledger, planned_capacity
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from tests.data_paths import CONFIGS

LOGGED_WEIGHTS_GIB, LOGGED_TOKENS = 64.69, 209088
LAUNCH = ["--enforce-eager", "--gpu-memory-utilization", "0.90", "--max-model-len", "4096", "--llm-class"]
RTX_PRO_6000_MIB = 97887  # nvidia-smi's total of the card (kvtop/domain/gpus.py)


def _model(name: str, folder: str = "heldout") -> ModelSpec:
    return model_from_config(json.loads((CONFIGS / folder / name).read_text()), source=name)


def _plan(model: ModelSpec, *flags: str, release: str = "0.20.0") -> Ledger:
    settings = parse_flags("vllm", [*LAUNCH, *flags, "--engine-version", release])
    return calibrated_ledger(model, settings, gpu_total_bytes=RTX_PRO_6000_MIB * 2**20, gpu_name="RTXPRO6000")


def test_the_text_only_start_loads_the_logged_weights_without_its_tower() -> None:
    model = _model("Qwen--Qwen3.5-35B-A3B.json")
    assert model.tower is not None
    whole, text_only = _plan(model), _plan(model, "--language-model-only")
    # the logged load, printed to 0.01 GiB; kvtop's book less the tower (and the loader's calibrated bytes beyond
    # the checkpoint, 0.12 GiB) lands on it, where the whole book is 0.83 GiB over
    assert abs(text_only.ranks[0].weights_bytes - LOGGED_WEIGHTS_GIB * GIB) < 0.05 * GIB
    assert whole.ranks[0].weights_bytes - text_only.ranks[0].weights_bytes > 0.8 * GIB  # the tower left out
    # within 5 % of the logged pool; the whole model's book would charge the tower's bytes to it
    assert abs(text_only.ranks[0].token_capacity / LOGGED_TOKENS - 1) < 0.05
    assert text_only.ranks[0].token_capacity > whole.ranks[0].token_capacity


def test_no_encoder_term_for_a_model_served_text_only() -> None:
    model = _model("Qwen--Qwen3.5-35B-A3B.json")
    labels = [term.label for term in _plan(model, "--language-model-only").ranks[0].terms]
    assert not any("encoder" in label for label in labels)
    assert any("encoder" in term.label for term in _plan(model).ranks[0].terms)


def test_a_class_not_read_is_refused() -> None:
    with pytest.raises(
        UnsupportedModelError, match="--language-model-only.*LlavaNextForConditionalGeneration"
    ):
        _plan(_model("llava-hf--llava-v1.6-mistral-7b-hf.json"), "--language-model-only")


# Qwen3.5-35B-A3B's tower from its config's vision_config alone (vLLM's Qwen3_VisionTransformer, bf16, with biases):
# patch_embed Conv3d 3·2·16·16·1152 + 1152; pos_embed 2304·1152; 27 blocks of two LayerNorms (4·1152), qkv
# 1152·3456 + 3456, proj 1152·1152 + 1152, fc1 1152·4304 + 4304, fc2 4304·1152 + 1152; merger LayerNorm 2·1152,
# fc1 4608·4608 + 4608, fc2 4608·2048 + 2048 = 446,571,248 parameters × 2 B
TOWER_BYTES = 2 * (
    3 * 2 * 16 * 16 * 1152 + 1152 + 2304 * 1152
    + 27 * (4 * 1152 + 1152 * 3456 + 3456 + 1152 * 1152 + 1152 + 1152 * 4304 + 4304 + 4304 * 1152 + 1152)
    + 2 * 1152 + 4608 * 4608 + 4608 + 4608 * 2048 + 2048
)  # fmt: skip


@pytest.mark.parametrize("release", ["0.17.0", "0.18.0"])
def test_the_tower_leaves_the_book_from_the_flags_first_release(release: str) -> None:
    # v0.17.0 - v0.18.0: get_limit_per_prompt answers 0 under the flag (config/multimodal.py:258-259) and qwen3_5.py
    # builds self.visual inside _mark_tower_model (:864 at v0.17.x, :891 at v0.18.0; interfaces.py:261 / :280)
    model = _model("Qwen--Qwen3.5-35B-A3B.json")
    whole, text_only = _plan(model, release=release), _plan(model, "--language-model-only", release=release)
    assert TOWER_BYTES == 893_142_496
    assert whole.ranks[0].weights_bytes - text_only.ranks[0].weights_bytes == TOWER_BYTES


def test_a_release_before_the_flag_is_refused() -> None:
    # v0.16.0's engine/arg_utils.py has no --language-model-only (first in v0.17.0, :1029)
    with pytest.raises(UnsupportedModelError, match="vLLM 0.16.0 has no such flag"):
        _plan(_model("Qwen--Qwen3.5-35B-A3B.json"), "--language-model-only", release="0.16.0")


def test_a_text_model_is_unchanged() -> None:
    # no multimodal config: the flag has nothing to turn off
    model = _model("Qwen--Qwen3-8B.json", folder="")
    plain, flagged = _plan(model), _plan(model, "--language-model-only")
    assert flagged.ranks[0].token_capacity == plain.ranks[0].token_capacity
    assert flagged.ranks[0].weights_bytes == plain.ranks[0].weights_bytes


# A bool field of MultiModalConfig: argparse's BooleanOptionalAction (engine/arg_utils.py get_kwargs :297-299 at
# v0.17.0, :384-386 at v0.33.0) takes `--no-language-model-only`, and `LLM(language_model_only=False)` (a false word)
# leaves it unset: the tower is built and profiled as without the flag.
UNSET = [["--no-language-model-only"], ["--language-model-only", "false"], ["--language-model-only", "0"]]


@pytest.mark.parametrize("unset", UNSET)
def test_the_switch_unset_builds_the_tower(unset: list[str]) -> None:
    model = _model("Qwen--Qwen3.5-35B-A3B.json")
    whole, unset_plan = _plan(model), _plan(model, *unset)
    assert unset_plan.ranks[0].weights_bytes == whole.ranks[0].weights_bytes
    assert unset_plan.ranks[0].token_capacity == whole.ranks[0].token_capacity
    assert any("encoder" in term.label for term in unset_plan.ranks[0].terms)


# Gemma-3-27B on an H100 at vLLM 0.19.0, max_model_len 8,192: no logged start read, so the switch is judged against
# the flag-free launch (the tower built, its encoder profiled): every unset spelling plans it exactly, and the set
# flag plans more tokens (its SigLIP tower and projector left out, no encoder profile).
def _gemma3_tokens(*flags: str) -> int:
    model = _model("google--gemma-3-27b-it.json", folder="")
    settings = parse_flags("vllm", ["--engine-version", "0.19.0", "--max-model-len", "8192", *flags])
    plan = planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100")
    return plan.ledger.engine.token_capacity


@pytest.mark.parametrize("unset", UNSET)
def test_gemma3_plans_by_the_switch(unset: list[str]) -> None:
    profiled = _gemma3_tokens()
    assert _gemma3_tokens(*unset) == profiled
    assert _gemma3_tokens("--language-model-only") > profiled

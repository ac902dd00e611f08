"""vLLM's `--limit-mm-per-prompt` with every modality of a class's tower at 0: the tower is not built and no encoder
profiled (kvtop/domain/engines/vllm/tower_limits.py), read in the v0.10.2 – v0.19.0, v0.33.0 and v0.34.0 wheels.

Expected values from a start's log, not from kvtop: `get_limit_per_prompt` answers 0 for a modality set at 0 as it
does for every modality under `--language-model-only` (v0.19.0 config/multimodal.py:259-273), and `_mark_tower_model`
reads only that answer (models/interfaces.py:285), so `{"image": 0, "video": 0}` builds Qwen3.5 as the logged
`language_model_only=True` start did: Qwen/Qwen3.5-35B-A3B bf16, vLLM 0.20.0, eager, 0.90, max_model_len 4096, one RTX
PRO 6000 Blackwell Server Edition, 'Model loading took 64.69 GiB' and 209,088 KV tokens (search-index id 67603003401,
tests/data/calibration/SOURCES.md).
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.calibration.estimate import calibrated_ledger
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.tower_limits import TOWERS
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.launch import check_parallel, parse_flags
from kvtop.domain.ledger import Ledger
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from tests.data_paths import CONFIGS

LOGGED_WEIGHTS_GIB, LOGGED_TOKENS = 64.69, 209088
LAUNCH = ["--enforce-eager", "--gpu-memory-utilization", "0.90", "--max-model-len", "4096", "--llm-class"]
RTX_PRO_6000_MIB = 97887  # nvidia-smi's total of the card (kvtop/domain/gpus.py)
FLAG = "--limit-mm-per-prompt"
OFF = '{"image": 0, "video": 0}'


def _model(name: str, folder: str = "heldout") -> ModelSpec:
    return model_from_config(json.loads((CONFIGS / folder / name).read_text()), source=name)


def _plan(model: ModelSpec, *flags: str, release: str = "0.20.0") -> Ledger:
    settings = parse_flags("vllm", [*LAUNCH, *flags, "--engine-version", release])
    return calibrated_ledger(model, settings, gpu_total_bytes=RTX_PRO_6000_MIB * 2**20, gpu_name="RTXPRO6000")


def _unbuilt(architecture: str, limits: str, release: str) -> bool:
    return TOWERS.builds_no_tower(architecture, {"limit-mm-per-prompt": limits}, ResolvedVersion(text=release))


def test_every_modality_at_0_plans_the_logged_text_only_start() -> None:
    model = _model("Qwen--Qwen3.5-35B-A3B.json")
    off, whole = _plan(model, FLAG, OFF), _plan(model)
    assert abs(off.ranks[0].weights_bytes - LOGGED_WEIGHTS_GIB * GIB) < 0.05 * GIB  # the logged load, 0.01 GiB print
    assert abs(off.ranks[0].token_capacity / LOGGED_TOKENS - 1) < 0.05
    assert whole.ranks[0].weights_bytes - off.ranks[0].weights_bytes > 0.8 * GIB  # the tower, 0.83 GiB, left out
    assert not any("encoder" in term.label for term in off.ranks[0].terms)  # no encoder profiled


@pytest.mark.parametrize("limits", ['{"image": 0}', '{"image": 0, "video": 1}', '{"video": {"count": 0}}'])
def test_a_modality_left_on_keeps_the_tower(limits: str) -> None:
    """Qwen's tower is marked for image and video (qwen3_5.py:821 at v0.19.0): one left on (a modality left out counts
    999) builds it, so the whole model's weights."""
    model = _model("Qwen--Qwen3.5-35B-A3B.json")
    assert _plan(model, FLAG, limits).ranks[0].weights_bytes == _plan(model).ranks[0].weights_bytes


@pytest.mark.parametrize(("architecture", "limits", "release", "unbuilt"), [
    # each class's own test before _mark_tower_model (v0.11.0 qwen3_vl.py:1129-1131, mistral3.py:440-457)
    ("Qwen3VLForConditionalGeneration", OFF, "0.12.0", True),
    ("Qwen2_5_VLForConditionalGeneration", OFF, "0.10.2", True),
    ("Mistral3ForConditionalGeneration", '{"image": 0}', "0.13.0", True),  # image its only modality
    ("Gemma3ForConditionalGeneration", '{"image": 0}', "0.14.1", False),  # built whatever (gemma3_mm.py:525-530)
    ("Gemma3ForConditionalGeneration", '{"image": 0}', "0.15.0", True),  # _mark_tower_model(…, "image")
    ("Qwen3_5MoeForConditionalGeneration", OFF, "0.16.0", False),  # the class first in the v0.17.1 wheel
    ("Qwen3_5MoeForConditionalGeneration", OFF, "0.34.0", True),
    ("Qwen2VLForConditionalGeneration", OFF, "0.10.1", False),  # the flag's form not read before v0.10.2
    ("LlavaNextForConditionalGeneration", OFF, "0.19.0", False),  # a class not read
])  # fmt: skip
def test_the_classes_and_releases_read(architecture: str, limits: str, release: str, unbuilt: bool) -> None:
    assert _unbuilt(architecture, limits, release) is unbuilt


def _vision_bytes(ledger: Ledger) -> int:
    return sum(row.bytes for row in ledger.ranks[0].weights.rows if row.component == "vision")


def test_qwen3_vl_at_v0_12_0_drops_its_vision_transformer() -> None:
    """Qwen3-VL-30B-A3B's tower by its config's arithmetic (HF Qwen3VLMoeVisionModel): 27 blocks of 1,152 wide
    (qkv and proj with biases, fc1 / fc2 through 4,304, two LayerNorms), the patch embed 3 × 2 × 16² × 1,152 + bias,
    2,304 position rows, and four 4,608 → 4,608 → 2,048 mergers (the main one's norm over 1,152, the three deepstack
    ones' over 4,608): 538,631,408 parameters in bf16, all gone where `self.visual = None` (qwen3_vl.py:1129-1131)."""
    block = 3 * 1152 * 1152 + 3 * 1152 + 1152 * 1152 + 1152 + 2 * 1152 * 4304 + 4304 + 1152 + 4 * 1152
    mergers = 4 * (4608 * 4608 + 4608 + 4608 * 2048 + 2048) + 2 * 1152 + 3 * 2 * 4608
    params = 27 * block + 3 * 2 * 16 * 16 * 1152 + 1152 + 2304 * 1152 + mergers
    model = _model("Qwen--Qwen3-VL-30B-A3B-Instruct.json")
    off, whole = _plan(model, FLAG, OFF, release="0.12.0"), _plan(model, release="0.12.0")
    assert (_vision_bytes(whole), _vision_bytes(off)) == (2 * params, 0)
    assert off.ranks[0].token_capacity > whole.ranks[0].token_capacity


def test_gemma3_before_v0_15_0_is_refused_by_name() -> None:
    """Text-only (no encoder profiled: multimodal/registry.py:98-122) while the tower is built: not modelled."""
    with pytest.raises(UnsupportedModelError, match="still built"):
        _plan(_model("google--gemma-3-27b-it.json", folder=""), FLAG, '{"image": 0}', release="0.13.0")


def test_the_value_is_judged_where_its_form_is_read() -> None:
    # count ≥ 0 (v0.19.0 config/multimodal.py BaseDummyOptions.count Field(999, ge=0))
    with pytest.raises(InputError, match="whole number"):
        check_parallel(parse_flags("vllm", [FLAG, '{"image": -1}', "--engine-version", "0.19.0"]))

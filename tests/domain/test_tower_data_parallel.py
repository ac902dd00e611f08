"""A data-parallel vision encoder (vLLM `--mm-encoder-tp-mode data`, SGLang `--mm-enable-dp-encoder`): the tower is
built whole on every TP rank, as at TP 1, for the classes the engine applies the flag to (each engine's
`architectures.TOWER_SPLIT.data_parallel`); other classes ignore it (vLLM: ModelConfig turns it back to "weights").

Oracle: the engines' own meta builds. Qwen2.5-VL-7B at TP 2 with the flag: the flag sweep's "mm-dp" rows
(benchmarks/engine_diff/run.py --configs Qwen--Qwen2.5-VL-7B-Instruct --variants mm-dp, session 43:
tests/data/engine_diff/vllm-0.33.0.flags.json, sglang-0.5.23.flags.json, `param_bytes.visual`). The other towers:
the registry rows (tests/data/engine_diff/registry/*.json) at TP 1, which the registry sweep builds without flags —
with the flag vLLM's is_vit_use_data_parallel() builds every linear of the tower `disable_tp=True` (qwen2_5_vl.py,
qwen3_vl.py, glm4_1v.py: blocks and merger), SGLang's its parallel_group "replicated" (and Qwen3-VL's pos_embed
enable_tp=False): the modules a TP-1 build holds (the Qwen2.5-VL rows: TP-1 registry row = "mm-dp" row).
By hand, bf16 (2 B a parameter), Qwen2.5-VL-7B's tower (transformers' classes: 676,550,144 parameters, of them
674,876,160 the split matrices and column biases): whole 676,550,144 × 2 = 1,353,100,288 B (vLLM visual at TP 1);
at TP 2 (676,550,144 − 674,876,160 + 674,876,160 ÷ 2) × 2 = 678,224,128 B (vLLM visual at TP 2), so a plan that
ignored the flag under-counted each rank by 674,876,160 B = (1 − 1/2) × the split part. SGLang pads the 3,420-wide
MLP to 3,424: 4 units × 32 layers × (2 × 1,281 + 1,280) = 491,776 parameters more, whole 1,354,083,840 B.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_sweep import load_rows
from benchmarks.engine_diff.table import read_fixture
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_check import launch_refusals
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model_config import model_from_config
from kvtop.domain.tower_spec import TOWER_KINDS
from tests.data_paths import DATA

QWEN25_VL = DATA / "engine_diff" / "configs" / "Qwen--Qwen2.5-VL-7B-Instruct.json"
QWEN3_VL = DATA / "configs" / "heldout" / "Qwen--Qwen3-VL-2B-Instruct.json"
GLM45V = DATA / "configs" / "heldout" / "wave5" / "zai-org--GLM-4.5V.json"
QWEN35 = DATA / "engine_diff" / "configs" / "Qwen--Qwen3.5-27B.json"
GLM_ASR = DATA / "engine_diff" / "registry" / "configs" / "GlmAsrForConditionalGeneration.json"
FLAG = {"vllm": ["--mm-encoder-tp-mode", "data"], "sglang": ["--mm-enable-dp-encoder"]}
RELEASE = {"vllm": "0.33.0", "sglang": "0.5.23"}


def _plan(engine: str, path: Any, flags: list[str]) -> Ledger:
    model = model_from_config(json.loads(path.read_text()))
    return predict(model, parse_flags(engine, flags), gpu_total_bytes=gpu_total_bytes("H200"), gpu_name="H200")


def _tower(ledger: Ledger) -> tuple[int, int]:
    """The one tower row's bytes and shards: rows are named by the tower's kind (vision, audio, vision_audio)."""
    (row,) = [row for row in ledger.ranks[0].weights.rows if row.component in TOWER_KINDS]
    return row.bytes, row.shards


def _engine_bytes(engine: str, config: str, tp: int, child: str = "visual") -> int:
    (row,) = [r for r in load_rows(engine, RELEASE[engine]) if r["config"] == config and r["tp"] == tp]
    return int(row["stages"][0]["param_bytes"][child])


def _flag_row_bytes(engine: str, variant: str) -> int:
    (row,) = [r for r in read_fixture(engine, RELEASE[engine])["results"]
              if r["config"] == QWEN25_VL.stem and r.get("variant") == variant and r["tp"] == 2]  # fmt: skip
    return int(row["stages"][0]["param_bytes"]["visual"])


def test_qwen25_vl_tower_whole_a_rank_with_the_flag_at_tp2() -> None:
    for engine, whole in (("vllm", 1_353_100_288), ("sglang", 1_354_083_840)):
        assert _flag_row_bytes(engine, "mm-dp") == _engine_bytes(engine, QWEN25_VL.stem, 1) == whole
        assert _flag_row_bytes(engine, "ctx4k") == _engine_bytes(engine, QWEN25_VL.stem, 2)  # no flag
        split = _engine_bytes(engine, QWEN25_VL.stem, 2)
        assert _tower(_plan(engine, QWEN25_VL, ["--tp", "2"])) == (split, 2)
        with_flag = _plan(engine, QWEN25_VL, ["--tp", "2", *FLAG[engine]])
        assert _tower(with_flag) == (whole, 1)
        assert not with_flag.settings.unknown_flags  # read, not named as ignored
    assert 1_353_100_288 - _engine_bytes("vllm", QWEN25_VL.stem, 2) == 674_876_160


def test_vllm_weights_mode_keeps_the_split() -> None:
    ledger = _plan("vllm", QWEN25_VL, ["--tp", "2", "--mm-encoder-tp-mode", "weights"])
    assert _tower(ledger) == (678_224_128, 2)


def test_qwen3_vl_and_glm45v_whole_with_the_flag() -> None:
    """Qwen3-VL-2B and Qwen3.5-27B at TP 2 (merger and deepstack mergers whole too) and GLM-4.5V at TP 8, which vLLM cannot split
    (12 heads: "12 is not divisible by 8") but builds whole with the flag: each engine's TP-1 visual."""
    for engine in ("vllm", "sglang"):
        ledger = _plan(engine, QWEN3_VL, ["--tp", "2", *FLAG[engine]])
        assert _tower(ledger) == (_engine_bytes(engine, QWEN3_VL.stem, 1), 1) == (813_914_112, 1)
        ledger = _plan(engine, QWEN35, ["--tp", "2", *FLAG[engine]])  # Qwen3.5: Qwen3VL's __init__
        assert _tower(ledger) == (_engine_bytes(engine, QWEN35.stem, 1), 1) == (921_460_192, 1)
        ledger = _plan(engine, GLM45V, ["--tp", "8", *FLAG[engine]])
        assert _tower(ledger)[0] == _engine_bytes(engine, GLM45V.stem, 1)
        assert not launch_refusals(ledger)
    assert _engine_bytes("vllm", GLM45V.stem, 1) == 1_717_363_712
    assert _engine_bytes("sglang", GLM45V.stem, 1) == 1_717_380_096


def test_a_class_without_the_flag_ignores_it() -> None:
    """GLM-ASR's class has no supports_encoder_tp_data (vLLM 0.33.0 glmasr.py): vLLM turns the flag back to
    "weights", its encoder still splits and TP 8 still stops ("20 is not divisible by 8", registry row refused)."""
    plain = _plan("vllm", GLM_ASR, ["--tp", "4"])
    flagged = _plan("vllm", GLM_ASR, ["--tp", "4", "--mm-encoder-tp-mode", "data"])
    assert _tower(flagged) == _tower(plain) and _tower(plain)[1] == 4  # the audio row, still split over TP 4
    refused = _plan("vllm", GLM_ASR, ["--tp", "8", "--mm-encoder-tp-mode", "data"])
    assert "--tensor-parallel-size" in [refusal.field for refusal in launch_refusals(refused)]


INTERN = DATA / "engine_diff" / "configs" / "OpenGVLab--InternVL3-1B-InternViT-6B.RECONSTRUCTED.json"


def test_a_class_that_takes_the_flag_unmodelled_says_so() -> None:
    """InternVLChatModel takes the flag (vLLM 0.33.0 internvl.py supports_encoder_tp_data = True; SGLang 0.5.23
    internvl.py reads mm_enable_dp_encoder), its data-parallel build not modelled: the vision row names it."""
    for engine in ("vllm", "sglang"):
        row_note = [row.note for row in _plan(engine, INTERN, ["--tp", "2", *FLAG[engine]]).ranks[0].weights.rows
                    if row.component == "vision"]  # fmt: skip
        assert row_note and f"{FLAG[engine][0]}" in row_note[0] and "not modelled for InternVLChatModel" in row_note[0]
        plain = [row.note for row in _plan(engine, INTERN, ["--tp", "2"]).ranks[0].weights.rows
                 if row.component == "vision"]  # fmt: skip
        assert "not modelled" not in plain[0]


QWEN2_VL = DATA / "engine_diff" / "registry" / "configs" / "Qwen2VLForConditionalGeneration.json"


def _plan_at(path: Any, flags: list[str], version: str) -> Ledger:
    """vLLM's plan of `path` at `version`."""
    return _plan("vllm", path, [*flags, "--engine-version", version])


def test_vllm_takes_the_flag_by_release() -> None:
    """`supports_encoder_tp_data = True` read in each wheel: Qwen2.5-VL's class from v0.10.2 (qwen2_5_vl.py:910),
    Qwen2-VL's only from v0.11.0 (qwen2_vl.py:1137; v0.10.2's qwen2_vl.py has none, ModelConfig turns the flag back
    to "weights": config/__init__.py:872-877): the tower split at TP 2 at v0.10.2, whole from v0.11.0."""
    flags = ["--tp", "2", "--mm-encoder-tp-mode", "data"]
    split = _tower(_plan_at(QWEN2_VL, ["--tp", "2"], "0.10.2"))
    assert split[1] == 2
    assert _tower(_plan_at(QWEN2_VL, flags, "0.10.2")) == split
    whole = _tower(_plan_at(QWEN2_VL, flags, "0.11.0"))
    assert whole[1] == 1 and whole == _tower(_plan_at(QWEN2_VL, ["--tp", "1"], "0.11.0"))
    assert _tower(_plan_at(QWEN25_VL, flags, "0.10.2"))[1] == 1


def test_vllm_before_v0102_has_no_such_flag() -> None:
    """engine/arg_utils.py declares --mm-encoder-tp-mode from v0.10.2 (:786); v0.10.1's has no mm_encoder_tp_mode:
    argparse stops the launch."""
    with pytest.raises(InputError, match="mm-encoder-tp-mode"):
        _plan_at(QWEN25_VL, ["--tp", "2", "--mm-encoder-tp-mode", "data"], "0.10.1")

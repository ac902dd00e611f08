"""Every weights row a view shows reads in words, never the book's key (the trial: 'calibrated_beyond_book')."""

import json
import re
from pathlib import Path

from kvtop.commands.render_ledger import ledger_text
from kvtop.domain.deployment import Feature
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.registry import ENGINE_IDS, engine_rules
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import CALIBRATED_WEIGHTS_ROW, predict
from kvtop.domain.ledger_words import COMPONENT_WORDS, FEATURE_WORDS, component_words
from kvtop.domain.model_config import model_from_config
from kvtop.domain.node import REPORTED_WEIGHTS_ROW
from kvtop.domain.weights import COMPONENT_ORDER
from kvtop.domain.wording import GIB


def test_every_generic_row_and_the_ledgers_own_rows_read_in_words() -> None:
    for key in (*COMPONENT_ORDER, CALIBRATED_WEIGHTS_ROW, REPORTED_WEIGHTS_ROW):
        assert "_" not in component_words(key), key
    assert component_words(CALIBRATED_WEIGHTS_ROW) == "held beyond the checkpoint (calibrated)"
    assert component_words("lm_head") == "LM head" and component_words("routed_experts") == "routed experts"
    assert component_words("some_new_row") == "some new row"  # a key without an entry: spaces, not underscores


def test_every_deployment_feature_reads_in_words() -> None:
    assert set(FEATURE_WORDS) == set(Feature)  # a new feature names its words, or this fails
    assert not [words for words in FEATURE_WORDS.values() if "_" in words]


# the row keys each engine package builds, read from its source (`component="…"`, `_row("…"`): the independent list
_BUILT_KEY = re.compile(r'(?:component=|_row\()"([a-z0-9_]+)"')
_ENGINES_DIR = Path(__file__).resolve().parents[2] / "kvtop" / "domain" / "engines"


def _built_keys(engine: str) -> set[str]:
    return {key for path in (_ENGINES_DIR / engine).glob("*.py") for key in _BUILT_KEY.findall(path.read_text())}


def test_every_row_an_engine_builds_is_worded_by_that_engine_and_only_there() -> None:
    built = {engine: _built_keys(engine) for engine in ENGINE_IDS}
    assert {"fp32_lm_head", "gptq_marlin"} <= built["sglang"] and {"gptq_zero_points", "expert_padding"} <= built["vllm"]
    for engine, keys in built.items():
        words = engine_rules(engine).weight_row_words
        assert set(words) == keys, engine  # each row it builds, and no other, reads in its own words
        assert not [key for key in keys if key in COMPONENT_WORDS], engine  # the shared table names no engine's row
        assert not [text for text in words.values() if "_" in text.replace("wo_a", "")], engine


def test_an_engines_row_reads_in_its_words_in_the_plan_text() -> None:
    """SGLang 0.5.23's untied Ring-V2.5 head is fp32 (bailing_moe_linear.py `params_dtype=torch.float32`): the row
    of 157,184 × 2,048 × (4 − 2) B = 643,825,664 B beside the book reads 'FP32 LM head' in `kvtop plan`."""
    config = Path(__file__).resolve().parents[1] / "data" / "configs" / "recon" / "recon--inclusionAI--Ring-V2.5-class.json"
    model = model_from_config({**json.loads(config.read_text()), "tie_word_embeddings": False}, source="ring-v2.5")
    settings = parse_flags("sglang", ["--tp", "1", "--engine-version", "0.5.23", "--max-model-len", "8192"])
    budget = MeasuredInputs(free_before_load_bytes=80 * GIB, free_after_load_bytes=60 * GIB)
    ledger = predict(model, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100", measured=budget)
    row = next(line for line in ledger_text(ledger).splitlines() if line.lstrip().startswith("FP32 LM head"))
    assert "0.64 GB (0.60 GiB)" in row  # 643,825,664 B: 0.644 GB, 0.600 GiB
    assert "fp32_lm_head" not in ledger_text(ledger)
    assert component_words("fp32_lm_head", "vllm") == "fp32 lm head"  # another engine's ledger never has this row

"""Issue 26: a held-out set of 129 real configs of the architectures served today (tests/data/configs/heldout,
sources in its SOURCES.md) is planned ≥ 95 %, with KV per token and weights equal to independent figures.

- KV per token (TP 1, bf16): `heldout_expectations.kv_bytes_per_token`, derived from the raw JSON by the
  engines' per-layer KV rules (see that module), against kvtop's KV book.
- Weights (TP 1): the parameter count of transformers' own model class built on the meta device
  (`transformers_params.json`, `benchmarks/architectures/transformers_params.py`), plus the rows the engines
  pad the vocabulary to (a multiple of 64: `VocabParallelEmbedding`), against kvtop's weights book. Configs
  transformers has no class for (remote code) have no oracle here and are listed as such.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.kv import KvStorage, kv_book
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.quant import NO_QUANT
from kvtop.domain.weights import weights_book
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS
from tests.domain.heldout_expectations import kv_bytes_per_token

HELDOUT = CONFIGS / "heldout"
FILES = sorted(p for p in HELDOUT.glob("*.json") if not p.name.endswith(".hf_quant_config.json")
               and p.name != "transformers_params.json")  # fmt: skip
PARAMS = json.loads((HELDOUT / "transformers_params.json").read_text())

# What kvtop refuses, and the field that stops it (each a named "not modelled", never a wrong number).
# DeepSeek-V4's class is named "not modelled" (compressed attention, a ratio per layer: coverage.NOT_MODELLED).
REFUSED = {
    "deepseek-ai--DeepSeek-V4-Flash": "architectures",
    "deepseek-ai--DeepSeek-V4-Pro": "architectures",
    "nvidia--DeepSeek-V4-Flash-NVFP4": "architectures",
    "nvidia--DeepSeek-V4-Pro-NVFP4": "architectures",
    "sgl-project--DeepSeek-V4-Flash-FP8": "architectures",
    "sgl-project--DeepSeek-V4-Pro-FP8": "architectures",
}
# Where kvtop's weights differ from transformers' class on purpose, and why.
WEIGHTS_DIFFER = {
    # the TensorRT-LLM fixture states no tie_word_embeddings: transformers v5.24's Mistral3Config then ties,
    # MistralConfig (the text model every engine builds) does not; the 24B checkpoint has its own lm_head
    "mistralai--Mistral-Small-3.1-24B-Instruct-2503": 131_072 * 5_120,
}
# No oracle: AIConfigurator trimmed the file to the fields it reads (Step-3.7's head-wise gates and its sliding
# layers' own head counts are not in it), so transformers builds it from class defaults kvtop does not read.
NO_WEIGHTS_ORACLE = {"stepfun-ai--Step-3.7-Flash", "stepfun-ai--Step-3.7-Flash-FP8"}


def read(path: Path) -> ModelSpec:
    return load_model(str(path))


def test_at_least_95_percent_of_the_held_out_set_is_planned() -> None:
    planned, refused = 0, {}
    for path in FILES:
        try:
            read(path)
            planned += 1
        except UnsupportedModelError as err:
            refused[path.stem] = err.field
    assert len(FILES) >= 100
    assert refused == REFUSED
    assert planned / len(FILES) >= 0.95, f"{planned} of {len(FILES)}"


@pytest.mark.parametrize("path", [p for p in FILES if p.stem not in REFUSED], ids=lambda p: p.stem)
def test_kv_per_token_is_the_engines_per_layer_sum(path: Path) -> None:
    model = read(path)
    book = kv_book(model, ParallelLayout(), range(model.num_layers), "bf16", KvStorage())
    kvtop = sum(pool.bytes_per_token for pool in book.pools if pool.name in ("full", "swa", "dsa_index"))
    assert kvtop == kv_bytes_per_token(json.loads(path.read_text()))


def _weights_params(model: ModelSpec) -> int:
    """kvtop's TP 1 language-model parameters (its vision tower apart: tests/domain/test_vision_towers.py), less
    the rows the engines pad the vocabulary with (the checkpoint has none)."""
    model = model.model_copy(update={"quant": NO_QUANT})
    book = weights_book(model, ParallelLayout(), range(model.num_layers), first_stage=True, last_stage=True)
    pad = math.ceil(model.vocab_size / 64) * 64 - model.vocab_size
    matrices = 1 if model.tie_word_embeddings else 2
    tower = sum(row.params for row in book.rows if row.component == "vision")
    return book.total_params - tower - pad * model.hidden_size * matrices - (pad if model.body.lm_head_bias else 0)


WITH_ORACLE = [p for p in FILES if "language_params" in PARAMS.get(p.stem, {})
               and p.stem not in NO_WEIGHTS_ORACLE and p.stem not in REFUSED]  # fmt: skip


@pytest.mark.parametrize("path", WITH_ORACLE, ids=lambda p: p.stem)
def test_weights_are_transformers_parameters(path: Path) -> None:
    assert _weights_params(read(path)) - PARAMS[path.stem]["language_params"] == WEIGHTS_DIFFER.get(
        path.stem, 0
    )


def test_every_config_is_compared_or_says_why_not() -> None:
    """The configs without a weights oracle are exactly those transformers has no class for, and the named ones."""
    planned = {p.stem for p in FILES if p.stem not in REFUSED}
    compared = {p.stem for p in WITH_ORACLE} & planned
    skipped = {
        stem: PARAMS[stem].get("skipped", "") for stem in planned - compared if stem not in NO_WEIGHTS_ORACLE
    }
    assert all(
        "has no config class" in why or "Unrecognized configuration class" in why for why in skipped.values()
    )
    assert len(compared) >= 90

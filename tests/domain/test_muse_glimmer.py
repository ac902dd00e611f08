"""Muse-Glimmer (meta-models, held-out wave 3): Llama's qkv with its own output gate per channel, four norms a layer.

Expected bytes are the engines' meta builds of meta-models/Muse-Glimmer-30B: vLLM 0.33.0 at TP 1
(`registry_sweep.py --params meta-models--Muse-Glimmer-30B --engine vllm`, models/muse_glimmer.py), written out
per tensor below, and both engines' language-model children at TP 1 and 2 as the registry sweep recorded them
(tests/data/engine_diff/registry/<engine>-<version>.json: `model` + `lm_head`); kvtop's book is recomputed from
the config.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import CONFIGS

MUSE = "meta-models--Muse-Glimmer-30B"
BF16 = 2
# vLLM 0.33.0 meta build, TP 1, bf16, each of the 52 layers:
#   qkv_proj [4608, 6656] (32 + 2 × 2 heads of 128), o_proj [6656, 4096], output_gate_proj [4096, 6656]
ATTENTION = 52 * (4608 * 6656 + 6656 * 4096 + 4096 * 6656) * BF16
#   gate_up_proj [39936, 6656], down_proj [6656, 19968]
MLP = 52 * (39936 * 6656 + 6656 * 19968) * BF16
#   input_layernorm, post_attention_layernorm, pre_feedforward_layernorm, post_feedforward_layernorm [6656] each;
#   model.norm [6656] (the embedding's and q/k norms hold no weight)
NORMS = (52 * 4 * 6656 + 6656) * BF16
EMBEDDING = LM_HEAD = 202048 * 6656 * BF16


def _model() -> ModelSpec:
    config: dict[str, Any] = json.loads((CONFIGS / "heldout" / "wave3" / f"{MUSE}.json").read_text())
    return model_from_config(config, source=MUSE)


def _engine_language_bytes(engine: str, version: str, tp: int) -> int:
    row = row_of(engine, version, MUSE, tp)
    children = row["stages"][0]["param_bytes"]
    return int(children["model"]) + int(children["lm_head"])


def test_muse_glimmer_book_is_vllms_meta_build_tensor_by_tensor() -> None:
    model = _model()
    assert model.body.output_gate_proj and model.body.norms_per_layer == 4
    book = weights_book(model, ParallelLayout(), range(model.num_layers), first_stage=True, last_stage=True)
    rows = {row.component: row.bytes for row in book.rows}
    assert rows["attention"] == ATTENTION == 8_860_467_200
    assert rows["mlp"] == MLP == 41_466_986_496
    assert rows["norms"] == NORMS == 2_782_208
    assert rows["embedding"] == EMBEDDING and rows["lm_head"] == LM_HEAD == 2_689_662_976


def test_muse_glimmer_sliding_layers_from_layer_types() -> None:
    model = _model()
    kinds = [kind.value for kind in model.layer_attention]
    # the config's layer_types: three sliding (window 2,048) then one full, 13 times; vLLM 0.33.0 builds a
    # SlidingWindowSpec for model.layers.0-2 and a FullAttentionSpec for model.layers.3 (the sweep's KV specs)
    assert kinds[:4] == ["sliding", "sliding", "sliding", "full"]
    assert kinds.count("full") == 13 and model.sliding_window == 2048


@pytest.mark.parametrize(("tp", "engine_bytes"), [(1, 55_709_561_856), (2, 27_856_172_032)])
def test_muse_glimmer_language_model_per_rank_is_vllms(tp: int, engine_bytes: int) -> None:
    assert _engine_language_bytes("vllm", "0.33.0", tp) == engine_bytes
    model = _model()
    rules = engine_rules("vllm")
    book = weights_book(
        model, ParallelLayout(tp=tp), range(model.num_layers), first_stage=True, last_stage=True
    )
    built = rules.weights_built(model, ParallelLayout(tp=tp), range(model.num_layers), "H100",
                                ResolvedVersion(text="0.33.0", source=VersionSource.FLAG))  # fmt: skip
    tower = sum(row.bytes for row in book.rows if row.component == "vision")  # tests/domain/test_towers_muse.py
    assert book.total_bytes - tower + sum(row.bytes for row in built) == engine_bytes


@pytest.mark.parametrize(("tp", "padded_rows"), [(1, 64), (2, 32)])
def test_sglang_pads_muse_glimmers_head_to_128_rows(tp: int, padded_rows: int) -> None:
    # SGLang 0.5.23 muse_glimmer.py ParallelLMHead(padding_size=128): lm_head.weight [202112, 6656] at TP 1 and
    # [101056, 6656] at TP 2 in the sweep's meta build, where the 64-row padding of 202,048 gives 202,048 / 101,024
    row = row_of("sglang", "0.5.23", MUSE, tp)
    assert row["stages"][0]["param_bytes"]["lm_head"] == (202112 // tp) * 6656 * BF16
    model = _model()
    rows = engine_rules("sglang").weights_built(model, ParallelLayout(tp=tp), range(model.num_layers), "H100",
                                                ResolvedVersion(text="0.5.23", source=VersionSource.FLAG))  # fmt: skip
    padding = {row.component: row.bytes for row in rows}["lm_head_padding"]
    assert padding == padded_rows * 6656 * BF16

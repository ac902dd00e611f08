"""DeepSeek-VL2 (SGLang's DeepseekVL2ForCausalLM, vLLM's DeepseekVLV2ForCausalLM, model_type deepseek_vl_v2) over
the composed configs of tests/data/engine_diff/registry/configs (SOURCES.md: each engine's own config classes'
defaults). Both engines build the SigLIP with timm, which the harness installs --no-deps since session 47
(benchmarks/engine_diff/engines.py TIMM): SGLang builds its default, vLLM refuses its own (grouped top-k without
num_expert_group), as kvtop does. kvtop reads the language section through the wrapper (`deepseek_v2` entry) and the
tower as towers_deepseek_vl2 (tests/domain/test_towers_deepseek_vl2.py: 883,730,560 B, whole in SGLang).

SGLang's DeepseekV2Config defaults n_routed_experts to None, which both engines' deepseek_v2.py build as a dense MLP
on every layer (SGLang 0.5.23 `_is_layer_sparse`, vLLM 0.33.0 `is_moe_layer`: `n_routed_experts is not None`): the
same DeepseekV2ForCausalLM over the same DeepseekV2Config values as dots.vlm1's composed config, whose SGLang meta
build is language_model 12,137,889,792 B at TP 1 and 6,328,778,752 B at TP 2 (test_dots_vlm_tower.language: the
arithmetic by hand).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model import MlpKind
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from tests.conftest import DATA
from tests.domain.test_dots_vlm_tower import language

REGISTRY = DATA / "engine_diff" / "registry"
BUDGET = MeasuredInputs(free_before_load_bytes=140 * GIB, free_after_load_bytes=120 * GIB)


def config(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REGISTRY / "configs" / f"{name}.json").read_text())
    return data


@pytest.mark.parametrize("tp", [1, 2])
def test_sglang_language_dense_where_the_experts_are_null(tp: int) -> None:
    m = model_from_config(config("DeepseekVL2ForCausalLM"), source="deepseek-vl2-composed")
    assert m.moe is None and m.layer_mlp == (MlpKind.DENSE,) * 30
    assert not any("vision tower" in note for note in m.not_modelled)
    settings = parse_flags(
        "sglang", ["--tp", str(tp), "--engine-version", "0.5.23", "--context-length", "2048"]
    )
    rank = predict(
        m, settings, gpu_total_bytes=gpu_total_bytes("H200"), gpu_name="H200", measured=BUDGET
    ).ranks[0]
    assert language(tp) == {1: 12_137_889_792, 2: 6_328_778_752}[tp]
    assert rank.weights.total_bytes == language(tp) + 883_730_560  # the tower, whole (SGLang's meta build)
    assert rank.kv.full_bytes_per_token == 30 * (512 + 64) * 2


def test_vllm_language_refused_by_its_null_top_k() -> None:
    """transformers 5.20.2's DeepseekV2Config (vLLM's DeepseekVLV2TextConfig) defaults 64 routed experts and
    num_experts_per_tok None: kvtop names the field rather than guess a top-k."""
    with pytest.raises(InputError) as refused:
        model_from_config(config("DeepseekVLV2ForCausalLM"), source="deepseek-vl2-composed")
    assert refused.value.field == "language_config.num_experts_per_tok"


@pytest.mark.parametrize(("engine", "name", "status"), [("sglang-0.5.23", "DeepseekVL2ForCausalLM", "ok"),
                                                        ("vllm-0.33.0", "DeepseekVLV2ForCausalLM", "refused")])  # fmt: skip
def test_both_engines_build_with_timm(engine: str, name: str, status: str) -> None:
    """With timm there, SGLang builds its default; vLLM's own default it refuses (num_expert_group and topk_group
    must be provided when use_grouped_topk is True), as kvtop refuses it (test_vllm_language_refused_by_its_null_top_k)."""
    rows = [r for r in json.loads((REGISTRY / f"{engine}.json").read_text())["rows"]
            if r["config"] == f"default--{name}"]  # fmt: skip
    assert sorted(r["tp"] for r in rows) == [1, 2]
    assert all(r["status"] == status for r in rows)

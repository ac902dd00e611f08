"""Classes the registry sweep "could not build" until the harness read them as a launch does (issue #26):

- InternLM3ForCausalLM (internlm/internlm3-8b-instruct, model_type `internlm3`): its configuration class is the
  checkpoint's own configuration_internlm3.py; checkpoint_configs.py now stands it in.
- Gemma3nForCausalLM on vLLM: GeluAndMulSparse (layers/activation.py, 0.33.0) reads its own icdf back with
  `.item()`; vllm_standins.HOST_VALUE_CLASSES runs its __init__ on the host (it holds no parameter).
- LongcatFlashForCausalLM: the default states what the checkpoint's configuration_longcat_flash.py keeps
  (mla_scale_q_lora / mla_scale_kv_lora, zero_expert_type; published_fields.DERIVED_FIELDS), which vLLM reads.
- SGLang 0.5.23's LongCat-Flash and Hunyuan-V3 failures are its own on any device (sglang_config_failures.py):
  both refuse, as kvtop's sglang/config_checks.py says.
- MiniCPMO (openbmb/MiniCPM-o-2_6, model_type `minicpmo`): the checkpoint's MiniCPMOConfig(Qwen2Config) stood in
  (checkpoint_configs.py, its four sub-configs built); first judged "different" by 258,048 B (kvtop's generic
  reading had no q/k/v biases), now kvtop's `minicpmo` entry plans its Qwen2 language model and, since its tower
  kind (towers_minicpm.minicpm_o, tests/domain/test_towers_minicpmo.py), the towers too: equal.

Engine figures: tests/data/engine_diff/registry/{vllm-0.33.0,sglang-0.5.23}.json, written by `registry_sweep.py
--engine vllm|sglang --set real --only internlm--internlm3-8b-instruct` and `--set classes --only
default--Gemma3nForCausalLM,default--LongcatFlashForCausalLM,default--HYV3ForCausalLM` (meta builds). The expected
bytes below are the configs' own arithmetic, checked equal to those builds; never kvtop's figures.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_configs import DEFAULT_CONFIGS
from benchmarks.engine_diff.registry_judge import BOTH_REFUSE, EQUAL, judge
from benchmarks.engine_diff.registry_sweep import row_of

BF16 = 2
VERSIONS = {"vllm": "0.33.0", "sglang": "0.5.23"}
INTERNLM3 = "internlm--internlm3-8b-instruct"
BLOCK = 16  # vLLM's tokens a page for these specs


def _row(engine: str, config: str, tp: int) -> dict[str, Any]:
    return row_of(engine, VERSIONS[engine], config, tp)


def _internlm3_bytes(tp: int) -> int:
    """internlm3-8b-instruct's config.json: vocab 128,512, hidden 4,096, intermediate 10,240, 48 layers, 32 heads
    and 2 KV heads of 128, untied head, no bias; q/k/v/o, the MLP and both embeddings split over TP, norms whole."""
    hidden, vocab, inter, layers, kv = 4096, 128_512, 10_240, 48, 2 * 128
    split = 2 * hidden * hidden + 2 * hidden * kv + 3 * hidden * inter
    per_rank = layers * (split // tp + 2 * hidden) + 2 * vocab * hidden // tp + hidden
    return per_rank * BF16


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
@pytest.mark.parametrize("tp", [1, 2])
def test_internlm3_builds_with_its_stand_in_and_kvtop_plans_it_equal(engine: str, tp: int) -> None:
    row = _row(engine, INTERNLM3, tp)
    assert row["status"] == "ok"
    (stage,) = row["stages"]
    assert sum(stage["param_bytes"].values()) == _internlm3_bytes(tp)  # 17,608,482,816 B at TP 1 in both
    if engine == "vllm":  # 48 layers, K and V of 2 KV heads × 128 a rank (1 at TP 2), bf16
        (spec,) = stage["layer_specs"]
        assert (spec["layers"], spec["page_size_bytes"]) == (48, BLOCK * 2 * (2 // tp) * 128 * BF16)
    else:
        assert row["cell_size"] == 48 * 2 * (2 // tp) * 128 * BF16
    assert judge(engine, VERSIONS[engine], row).verdict == EQUAL


@pytest.mark.parametrize("tp", [1, 2])
def test_vllm_builds_gemma3n_text_with_its_sparse_activation_on_the_host(tp: int) -> None:
    config = json.loads((DEFAULT_CONFIGS / "Gemma3nForCausalLM.json").read_text())
    assert (
        0.0 < config["activation_sparsity_pattern"][0] < 1.0
    )  # GeluAndMulSparse builds only with a sparsity
    row = _row("vllm", "default--Gemma3nForCausalLM", tp)
    assert row["status"] == "ok"
    page = BLOCK * 2 * (config["num_key_value_heads"] // tp) * config["head_dim"] * BF16  # 2 KV heads of 256
    assert {spec["page_size_bytes"] for spec in row["stages"][0]["layer_specs"]} == {page}
    assert judge("vllm", "0.33.0", row).verdict == EQUAL


@pytest.mark.parametrize("tp", [1, 2])
def test_vllm_builds_longcat_flash_with_the_published_mla_fields(tp: int) -> None:
    config = json.loads((DEFAULT_CONFIGS / "LongcatFlashForCausalLM.json").read_text())
    assert config["mla_scale_q_lora"] is config["mla_scale_kv_lora"] is True
    row = _row("vllm", "default--LongcatFlashForCausalLM", tp)
    assert row["status"] == "ok"
    (spec,) = row["stages"][0]["layer_specs"]  # two MLA attentions a layer; the latent is whole on every rank
    latent = (config["kv_lora_rank"] + config["qk_rope_head_dim"]) * BF16
    assert (spec["layers"], spec["page_size_bytes"]) == (2 * config["num_layers"], BLOCK * latent)
    assert judge("vllm", "0.33.0", row).verdict == EQUAL


@pytest.mark.parametrize(("name", "words"), [
    ("LongcatFlashForCausalLM", "'rope_theta' in config.rope_parameters"),
    ("HYV3ForCausalLM", "config.route_norm"),
])  # fmt: skip
def test_sglang_fails_on_longcat_and_hunyuan_v3_as_kvtop_refuses(name: str, words: str) -> None:
    config = json.loads((DEFAULT_CONFIGS / f"{name}.json").read_text())
    assert "route_norm" not in config and "rope_theta" not in (
        config.get("rope_scaling") or {}
    )  # the premises
    for tp in (1, 2):
        row = _row("sglang", f"default--{name}", tp)
        assert row["status"] == "refused" and words in row["message"], row["message"][:200]
        assert judge("sglang", "0.5.23", row).verdict == BOTH_REFUSE


MINICPM_O = "openbmb--MiniCPM-o-2_6"
MINICPM_O_LLM = {1: 15_226_645_504, 2: 7_613_527_040}  # both engines' meta builds, the `llm` child


def _qwen2_7b_llm_bytes(tp: int) -> int:
    """MiniCPM-o-2_6's config.json (Qwen2's fields): hidden 3,584, intermediate 18,944, 28 layers, 28 heads and 4 KV
    heads of 128, q/k/v biases, vocab 151,700 padded to 151,744 (a multiple of 64) for the embedding and the untied
    head; split over TP but the norms."""
    hidden, inter, layers, kv = 3584, 18_944, 28, 4 * 128
    split = 2 * hidden * hidden + 2 * hidden * kv + hidden + 2 * kv + 3 * hidden * inter
    return (layers * (split // tp + 2 * hidden) + 2 * 151_744 * hidden // tp + hidden) * BF16


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
@pytest.mark.parametrize("tp", [1, 2])
def test_minicpm_o_builds_its_qwen2_language_model_and_kvtop_counts_its_towers(engine: str, tp: int) -> None:
    row = _row(engine, MINICPM_O, tp)
    assert row["status"] == "ok"
    built = row["stages"][0]["param_bytes"]
    assert built["llm"] == MINICPM_O_LLM[tp] == _qwen2_7b_llm_bytes(tp)
    assert {"vpm", "resampler", "apm", "audio_projection_layer"} <= set(
        built
    )  # towers kvtop counts (towers_minicpm.minicpm_o)
    assert judge(engine, VERSIONS[engine], row).verdict == EQUAL


@pytest.mark.parametrize("tp", [1, 2])
def test_sglang_builds_step3p7_whose_language_model_is_step3p5s(tp: int) -> None:
    """Step-3.7's default states its text_config in the published form SGLang's step3p5.py reads (moe_layers_enum a
    string, as Step3p5ForCausalLM's default): SGLang 0.5.23 builds it, its language model the same bytes and cell as
    its Step3p5ForCausalLM build of the same text config; kvtop counts the vision tower (towers_step: equal)."""
    text = json.loads((DEFAULT_CONFIGS / "Step3p7ForConditionalGeneration.json").read_text())["text_config"]
    assert isinstance(text["moe_layers_enum"], str)
    row, text_only = (_row("sglang", f"default--{name}", tp) for name in ("Step3p7ForConditionalGeneration",
                                                                          "Step3p5ForCausalLM"))  # fmt: skip
    assert row["status"] == text_only["status"] == "ok"
    built, alone = row["stages"][0]["param_bytes"], text_only["stages"][0]["param_bytes"]
    assert built["language_model"] == alone["model"] + alone["lm_head"]  # 391,664,400,128 B at TP 1
    assert row["cell_size"] == text_only["cell_size"]
    assert {"vision_model", "vit_large_projector"} <= set(built)
    assert judge("sglang", "0.5.23", row).verdict == EQUAL

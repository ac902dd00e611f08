"""vLLM's Qwen3-Next/3.5 MTP layer is asked its format under the names the predictor gives it (`mtp.layers.0.*`:
qwen3_5_mtp.py v0.34.0 :124/:237, qwen3_next_mtp.py v0.11.0 :72/:232), not the target's last layer's: NVIDIA's NVFP4
checkpoints exclude `mtp*` (hf_quant_config ignore, matched by fnmatch in modelopt.py is_layer_excluded v0.34.0 :230;
a MIXED_PRECISION checkpoint's quantized_layers list no `mtp.` module), so vLLM builds the whole layer bf16 while the
target's last layer is NVFP4. The expected bytes are the config's arithmetic, bf16 (2 B) per parameter at TP 1: the
last (full-attention) layer with the gated q_proj (2 × heads × head_dim rows), k, v, o, the q/k norms (2 × head_dim),
its MLP, `fc` (hidden × 2 hidden: bf16 for ModelOpt NVFP4 from v0.20.0, qwen3_5_mtp.py :95) and five hidden norms."""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.quant_spec import module_from_layers
from kvtop.domain.weights import weights_book
from tests.conftest import DATA


def _attention(hidden: int, heads: int, kv_heads: int, head_dim: int) -> int:
    return (2 * heads * head_dim * hidden + 2 * kv_heads * head_dim * hidden + hidden * heads * head_dim
            + 2 * head_dim)  # fmt: skip


def _tail(hidden: int) -> int:
    return hidden * 2 * hidden + 5 * hidden  # fc and the five norms


# Qwen3.6-27B: hidden 5,120, 24 heads, 4 KV heads, head_dim 256, a dense MLP of 17,408 (MIXED_PRECISION)
DENSE_27B = _attention(5120, 24, 4, 256) + 3 * 5120 * 17408 + _tail(5120)
# Qwen3.6-35B-A3B: hidden 2,048, 16 / 2 heads of 256; 256 experts of 512, a shared expert of 512 and its gate, the
# router (MIXED_PRECISION)
MOE_35B = (_attention(2048, 16, 2, 256) + 256 * 3 * 2048 * 512 + 3 * 2048 * 512 + 2048 + 256 * 2048
           + _tail(2048))  # fmt: skip
# Qwen3.5-122B-A10B: hidden 3,072, 32 / 2 heads of 256; 256 experts of 1,024, a shared expert of 1,024 (NVFP4,
# exclude `mtp*` and `mtp.layers.0*`)
MOE_122B = (_attention(3072, 32, 2, 256) + 256 * 3 * 3072 * 1024 + 3 * 3072 * 1024 + 3072 + 256 * 3072
            + _tail(3072))  # fmt: skip


@pytest.mark.parametrize(
    ("config", "params"),
    [
        ("nvidia--Qwen3.6-27B-NVFP4.json", DENSE_27B),
        ("nvidia--Qwen3.6-35B-A3B-NVFP4.json", MOE_35B),
        ("nvidia--Qwen3.5-122B-A10B-NVFP4.json", MOE_122B),
    ],
)
def test_vllm_builds_the_nvfp4_checkpoints_excluded_mtp_layer_in_bf16(config: str, params: int) -> None:
    path = DATA / "configs/heldout" / config
    model = model_from_config(json.loads(path.read_text()), source=path.name)
    assert model.mtp_layers == 1 and model.quant.scheme == "modelopt"
    parts = engine_rules("vllm").stage_parts(model, 0, 1, ResolvedVersion(text="0.34.0"))
    book = weights_book(model, ParallelLayout(tp=1), range(model.num_layers), first_stage=True, last_stage=True,
                        load_mtp=True, parts=parts)  # fmt: skip
    assert next(row.bytes for row in book.rows if row.component == "mtp") == 2 * params


def test_an_mtp_module_is_never_read_as_the_targets_layer_0() -> None:
    assert module_from_layers("mtp.layers.0.mlp.gate_proj") == "mtp.layers.0.mlp.gate_proj"
    assert module_from_layers("model.language_model.layers.0.mlp.gate_proj") == "layers.0.mlp.gate_proj"


def test_vllm_builds_deepseeks_excluded_nextn_layer_in_bf16() -> None:
    """deepseek_mtp.py (v0.10.2 :95 – v0.34.0 :155) names DeepSeek-V3.1's MTP layer `model.layers.61`, which the NVFP4
    checkpoint excludes whole (`model.layers.61*`), while layer 60's experts are NVFP4. The layer by hand (hidden 7,168):
    MLA q_a 7,168 × 1,536 and its norm, q_b 1,536 × 128 × 192, kv_a 7,168 × 576 and its norm 512, kv_b 512 × 128 × 256,
    o 128 × 128 × 7,168; 256 experts and a shared one of 2,048; the router 256 × 7,168 (and its fp32 bias of 256);
    eh_proj 14,336 × 7,168 and five norms: bf16."""
    path = DATA / "configs/heldout/nvidia--DeepSeek-V3.1-NVFP4.json"
    quant = json.loads(path.with_name("nvidia--DeepSeek-V3.1-NVFP4.hf_quant_config.json").read_text())
    model = model_from_config(json.loads(path.read_text()), source=path.name, hf_quant_config=quant)
    assert (model.num_layers, model.mtp_layers, model.quant.method) == (61, 1, "nvfp4")
    h = 7168
    attention = h * 1536 + 1536 + 1536 * 128 * 192 + h * 576 + 512 + 512 * 128 * 256 + 128 * 128 * h
    moe = 256 * 3 * h * 2048 + 3 * h * 2048 + 256 * h
    params = attention + moe + 2 * h * h + 5 * h
    parts = engine_rules("vllm").stage_parts(model, 0, 1, ResolvedVersion(text="0.34.0"))
    book = weights_book(model, ParallelLayout(tp=1), range(model.num_layers), first_stage=True, last_stage=True,
                        load_mtp=True, parts=parts)  # fmt: skip
    assert next(row.bytes for row in book.rows if row.component == "mtp") == 2 * params + 256 * 4 == 23_220_136_960


def test_glm_4_5s_draft_named_its_layer_0_until_v0_14_0() -> None:
    """speculative.py set the GLM-4.5 draft's num_hidden_layers to 0 (v0.10.2 config/__init__.py :2012, v0.11.0 :171,
    v0.13.0 :202), so glm4_moe_mtp.py's `model.layers.{mtp_start_layer_idx + i}` was `model.layers.0`; v0.14.0 keeps
    it (:198-206): GLM-4.5-Air's 46 → `model.layers.46`. MiMo's draft is still pinned to 0 (v0.33.0 :800)."""
    air = model_from_config(json.loads((DATA / "configs/heldout/zai-org--GLM-4.5-Air.json").read_text()), source="air")
    assert (air.num_layers, air.mtp_layers) == (46, 1)
    mimo = model_from_config(json.loads((DATA / "configs/heldout/XiaomiMiMo--MiMo-7B-Base.json").read_text()),
                             source="mimo")  # fmt: skip
    names = {(model.architecture, version): engine_rules("vllm").stage_parts(model, 0, 1, ResolvedVersion(text=version))
             .mtp_names.format(index=0, layer=model.num_layers)
             for model in (air, mimo) for version in ("0.13.0", "0.14.0", "0.33.0")}  # fmt: skip
    assert names == {("Glm4MoeForCausalLM", "0.13.0"): "model.layers.0.", ("Glm4MoeForCausalLM", "0.14.0"):
                     "model.layers.46.", ("Glm4MoeForCausalLM", "0.33.0"): "model.layers.46.",
                     ("MiMoForCausalLM", "0.13.0"): "model.layers.0.", ("MiMoForCausalLM", "0.14.0"): "model.layers.0.",
                     ("MiMoForCausalLM", "0.33.0"): "model.layers.0."}  # fmt: skip

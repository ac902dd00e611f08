"""Issue 26 item 4: every weight format's bytes as the engine's loader creates them, by hand for Llama-3.1-8B's
attention (per layer q 4,096 × 4,096, k and v 1,024 × 4,096, o 4,096 × 4,096 = 41,943,040 parameters).

The `quantization_config` blocks are those the exporters write (AutoAWQ, AutoGPTQ, bitsandbytes through
transformers, llm-compressor's compressed-tensors schemes). The loaders: vLLM 0.33.0
`model_executor/layers/quantization/compressed_tensors/schemes/*` and the marlin kernels
(`kernels/linear/mixed_precision/marlin.py`: zero points only for asymmetric formats;
`base_config.get_checkpoint_weight_mapper` drops GPTQ's g_idx), SGLang 0.5.23 `quantization/bitsandbytes.py`.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.conftest import CONFIGS

LAYERS = 32
MATRICES = ((4_096, 4_096), (1_024, 4_096), (1_024, 4_096), (4_096, 4_096))  # (out rows, in cols): q, k, v, o
PARAMS = sum(r * c for r, c in MATRICES)  # 41,943,040 a layer
ROWS = sum(r for r, _ in MATRICES)  # 10,240


def attention_bytes(quantization_config: dict[str, Any]) -> int:
    cfg = json.loads((CONFIGS / "meta-llama--Llama-3.1-8B.json").read_text())
    model = model_from_config({**cfg, "quantization_config": quantization_config}, source="llama")
    book = weights_book(model, ParallelLayout(), range(model.num_layers), first_stage=True, last_stage=True)
    return next(row.bytes for row in book.rows if row.component == "attention")


def groups(size: int) -> int:
    """Scales of a grouped format: one per output row per `size` inputs."""
    return sum(r * (c // size) for r, c in MATRICES)


AWQ = {"bits": 4, "group_size": 128, "quant_method": "awq", "version": "gemm", "zero_point": True}
GPTQ = {"bits": 4, "group_size": 128, "desc_act": False, "sym": True, "quant_method": "gptq"}
BNB4 = {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4",
        "bnb_4bit_use_double_quant": True, "bnb_4bit_compute_dtype": "bfloat16"}  # fmt: skip
BNB8 = {"quant_method": "bitsandbytes", "load_in_8bit": True}


def ct(weights: dict[str, Any]) -> dict[str, Any]:
    return {"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["lm_head"],
            "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights}}}  # fmt: skip


CASES = {
    # packed int4, an fp16 scale per group of 128 and output, and a packed int4 zero per group and output
    "awq": (AWQ, PARAMS // 2 + groups(128) * 2 + groups(128) // 2),
    # symmetric GPTQ: the marlin layout keeps no zeros, vLLM drops g_idx
    "gptq-sym": (GPTQ, PARAMS // 2 + groups(128) * 2),
    "gptq-asym": ({**GPTQ, "sym": False}, PARAMS // 2 + groups(128) * 2 + groups(128) // 2),
    # nf4 double quant: a uint8 absmax per 64, an fp32 over each 256 of those, and each matrix's QuantState codes
    # and offset on the GPU (QuantState.from_dict: quant_map fp32 [16], nested_quant_map fp32 [256], nested_offset)
    "bnb-nf4": (BNB4, PARAMS // 2 + groups(64) + sum(r * c // 64 // 256 for r, c in MATRICES) * 4
                + len(MATRICES) * (16 + 256 + 1) * 4),
    "bnb-int8": (BNB8, PARAMS + ROWS * 4),  # int8 and an fp32 SCB per row
    # W8A8 int8 channel-wise: ChannelQuantScaleParameter (rows, 1) fp32
    "ct-w8a8-int8": (ct({"num_bits": 8, "type": "int", "strategy": "channel", "symmetric": True}), PARAMS + ROWS * 4),
    # FP8 dynamic (channel) and static per-tensor: PerTensorScaleParameter, one fp32 per checkpoint matrix
    "ct-fp8-channel": (ct({"num_bits": 8, "type": "float", "strategy": "channel"}), PARAMS + ROWS * 4),
    "ct-fp8-tensor": (ct({"num_bits": 8, "type": "float", "strategy": "tensor"}), PARAMS + 4 * 4),
    # FP8 block (DeepSeek-style 128 × 128): an fp32 per block
    "ct-fp8-block": (ct({"num_bits": 8, "type": "float", "strategy": "block", "block_structure": [128, 128]}),
                     PARAMS + sum((r // 128) * (c // 128) for r, c in MATRICES) * 4),
    # W4A16: packed int4, a bf16 scale per group of 128, symmetric (no zeros)
    "ct-w4a16": (ct({"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "symmetric": True}),
                 PARAMS // 2 + groups(128) * 2),
    # NVFP4: packed FP4 and an FP8 scale per 16, and an fp32 weight_global_scale per q, k, v and o partition (this
    # weight-only group: CompressedTensorsW4A4Fp4(use_a16=True).create_weights, PerTensorScaleParameter of
    # len(output_partition_sizes), no input_global_scale); MXFP4: an E8M0 scale per 32
    "ct-nvfp4": (ct({"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16}),
                 PARAMS // 2 + groups(16) + 4 * 4),
    "ct-mxfp4": (ct({"num_bits": 4, "type": "float", "strategy": "group", "group_size": 32}),
                 PARAMS // 2 + groups(32)),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_weight_format_bytes_are_the_loaders(case: str) -> None:
    config, per_layer = CASES[case]
    assert attention_bytes(config) == LAYERS * per_layer


def test_two_four_sparse_weights_are_named_not_modelled() -> None:
    config = {**ct({"num_bits": 8, "type": "float", "strategy": "channel"}),
              "sparsity_config": {"format": "sparse-24-bitmask", "sparsity_structure": "2:4"}}  # fmt: skip
    with pytest.raises(
        InputError, match=r"^quantization_config.sparsity_config: sparse-24-bitmask sparse weights"
    ):
        attention_bytes(config)


def test_mixed_precision_gives_each_module_its_own_format() -> None:
    """Qwen3.6-27B-NVFP4 (ModelOpt MIXED_PRECISION): attention and linear attention FP8 (fp32 per-tensor weight
    and input scales), the MLP and the LM head W4A16_NVFP4 (FP4, an FP8 scale per 16 and an fp32 weight_scale_2
    per matrix: vLLM modelopt.py KNvfp4Static, W4A4 and W4A16 alike; an input_scale though the activations stay
    bf16, in the model dtype by default (vLLM 0.33.0's meta build: mlp.gate_up_proj.input_scale [2] and
    lm_head.input_scale [1] bfloat16); quantized_layers lists lm_head), the embedding unquantized."""
    cfg = json.loads((CONFIGS / "heldout" / "nvidia--Qwen3.6-27B-NVFP4.json").read_text())
    model = model_from_config(cfg, source="qwen3.6")
    book = weights_book(model, ParallelLayout(), range(model.num_layers), first_stage=True, last_stage=True)
    rows = {row.component: row for row in book.rows}
    mlp_params = rows["mlp"].params
    width = model.intermediate_size * model.hidden_size  # each of gate, up, down
    assert mlp_params == 64 * 3 * width
    assert rows["mlp"].bytes == 64 * 3 * (width // 2 + width // 16 + 4 + 2)
    assert rows["embedding"].bytes_per_param == 2.0
    head = 248_320 * model.hidden_size  # vocab 248,320 (a multiple of 64)
    assert rows["lm_head"].bytes == head // 2 + head // 16 + 4 + 2
    assert 1.0 < rows["attention"].bytes_per_param < 1.001  # FP8 and its fp32 scales


def test_vllm_refuses_gptq_in_activation_order() -> None:
    """vLLM 0.33.0 gptq_utils.normalize_and_validate_gptq_desc_act: desc_act with groups is refused; SGLang plans it."""
    from kvtop.domain.launch import parse_flags
    from kvtop.domain.ledger import predict

    cfg = json.loads((CONFIGS / "meta-llama--Llama-3.1-8B.json").read_text())
    model = model_from_config({**cfg, "quantization_config": {**GPTQ, "desc_act": True}}, source="llama")
    with pytest.raises(InputError, match=r"^quantization_config.desc_act: vLLM .* refuses GPTQ"):
        predict(model, parse_flags("vllm", ["--engine-version", "0.33.0"]), gpu_total_bytes=80 << 30)
    assert predict(model, parse_flags("sglang", []), gpu_total_bytes=80 << 30).token_capacity > 0


@pytest.mark.parametrize("block", [BNB4, BNB8], ids=["nf4", "int8"])
def test_vllm_refuses_bitsandbytes_checkpoints(block: dict[str, Any]) -> None:
    """vLLM 0.33.0's QuantizationMethods has no "bitsandbytes" (config/model.py _verify_quantization: "Unknown
    quantization method"); an older vLLM and SGLang (quantization/bitsandbytes.py) load it."""
    from kvtop.domain.launch import parse_flags
    from kvtop.domain.ledger import predict

    cfg = json.loads((CONFIGS / "meta-llama--Llama-3.1-8B.json").read_text())
    model = model_from_config({**cfg, "quantization_config": block}, source="llama")
    with pytest.raises(InputError, match=r"^quantization_config.quant_method: vLLM 0.33.0 has no bitsandbytes"):
        predict(model, parse_flags("vllm", ["--engine-version", "0.33.0"]), gpu_total_bytes=80 << 30)
    assert predict(model, parse_flags("vllm", ["--engine-version", "0.21.0"]), gpu_total_bytes=80 << 30).token_capacity > 0
    assert predict(model, parse_flags("sglang", []), gpu_total_bytes=80 << 30).token_capacity > 0


def test_the_checkpoint_kv_dtype_is_read_where_vllm_reads_it() -> None:
    """vLLM utils/torch_utils.get_kv_cache_quant_algo_string reads kv_cache_scheme / kv_cache_quant_algo only
    for a block whose quant_method is modelopt* (transformers_utils model_arch_config_convertor sets it from
    ModelOpt's producer and `quantization` section); config.json's block wins over hf_quant_config.json
    (transformers_utils/config.py). Qwen3-32B-FP8-Static-PerTensor's config.json block has neither, so
    `--kv-cache-dtype auto` stays bf16 though its hf_quant_config.json says FP8 KV; Gemma-4-31B-NVFP4's
    modelopt block carries kv_cache_scheme {num_bits 8, type float}: FP8."""
    from kvtop.domain.launch import parse_flags
    from kvtop.domain.ledger import predict
    from kvtop.sources.hub import load_model

    heldout = CONFIGS / "heldout"
    static = load_model(
        str(heldout / "Qwen--Qwen3-32B-FP8-Static-PerTensor.json")
    )  # with its sibling quant file
    assert static.quant.method == "fp8" and static.quant.kv_cache_quant_algo is None
    flags = parse_flags("vllm", ["--engine-version", "0.33.0"])
    ledger = predict(static, flags, gpu_total_bytes=80 << 30)
    assert ledger.kv_bytes_per_token == 64 * 8 * 128 * 2 * 2  # 64 layers × 8 KV heads × 128 × (K, V) × bf16
    gemma = load_model(str(heldout / "nvidia--Gemma-4-31B-IT-NVFP4.json"))
    assert gemma.quant.kv_cache_quant_algo == "FP8"

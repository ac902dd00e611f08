"""SGLang's MLA up-projection split: `w_kc` and `w_vc`, held beside `kv_b_proj` after the load (docs/engines/sglang.md
§20.3; the calibration's weights term adds them to the book through weights_held.py).

What the code does. DeepSeek's MLA classes run `post_load_weights` at the end of `load_weights` (inside the load's
measure, `Load weight end … mem usage`): each layer's `kv_b_proj` weight, heads × (qk_nope + v_head) rows of
kv_lora_rank, is unflattened by head and split into W_UK and W_UV, and both are copied (`w_kc.transpose(1, 2)
.contiguous()`, `w_vc.contiguous()`) onto the attention module as `self_attn.w_kc` / `self_attn.w_vc`, while
`kv_b_proj` stays registered (the prefill's MHA path runs it). The copies are in the dtype of `w` at the split:
- the checkpoint's dtype where kv_b_proj is not quantized (an NVFP4 checkpoint that spares it: bf16);
- a block-FP8 kv_b_proj: re-quantized to per-tensor FP8 (`block_quant_to_tensor_quant`, 1 B) through 0.4.6; from
  0.4.6.post5, with 128 × 128 blocks on CUDA, dequantized to bf16 (`block_quant_dequant`, 2 B) unless
  `SGL_USE_DEEPGEMM_BMM` is set (an environment variable, off by default, which keeps the FP8 block scales
  instead: not on a launch line, not modelled);
- channel or tensor FP8: per-tensor FP8 (`channel_quant_to_tensor_quant`, 1 B); AWQ and block INT8: dequantized to
  16 bits (2 B). Another format of kv_b_proj (NVFP4, MXFP4, GPTQ) is not read: nothing is added.
Read in models/deepseek_v2.py `DeepseekV2ForCausalLM.post_load_weights` at 0.3.6 (:842), 0.4.0 (:834), 0.4.3.post4
(:1217-1221), 0.4.6.post5 (:1539-1553, the bf16 dequant), 0.4.10.post1 (:2182-2270), and in
models/deepseek_common/deepseek_weight_loader.py `post_load_weights` at 0.5.15.post1 (:472-651) and 0.5.23 (:762-781).

The classes: DeepseekV2/V3/V32ForCausalLM and their subclasses in models/deepseek_v2.py (MistralLarge3ForCausalLM,
GlmMoeDsaForCausalLM at 0.5.15.post1), the classes whose MLA kvtop reads as DeepSeek's. Each rank holds its attention
heads' share (the heads ÷ attention TP), on every layer of its stage (the MTP layer only where it is loaded: not
counted here).

DeepSeek-R1 (block FP8) at TP 8 from 0.4.6.post5: 61 layers × 16 heads × (128 + 128) × 512 × 2 B = 244 MiB a rank; at
TP 16 (8 heads) 122 MiB, where SGLang 0.5.8.post1 on 16 × H100 printed 40.62 GiB of weights against the book's 40.40
(tests/data/calibration/sglang.jsonl, slurmv4-deepseek-r1-16xh100-tp16-2nodes-pd-prefill-v058).
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.sglang.pp_split import PP_SPLIT_ERAS
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.layout import largest_stage_layers
from kvtop.domain.wording import mib

# the model classes whose `post_load_weights` splits kv_b_proj (models/deepseek_v2.py and its subclasses)
SPLIT_CLASSES = frozenset({
    "DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "MistralLarge3ForCausalLM",
    "GlmMoeDsaForCausalLM",
})  # fmt: skip
BLOCK_DEQUANT = (128, 128)  # the block shape SGLang dequantizes to bf16 on CUDA from 0.4.6.post5

# whether a block-FP8 kv_b_proj's copies are dequantized to bf16 (True) or re-quantized to per-tensor FP8 (False);
# None: the split not read
BLOCK_FP8_TO_BF16: Eras[bool | None] = Eras((
    Era("", None, "before 0.3.6: post_load_weights not read"),
    Era("0.3.6", False, "models/deepseek_v2.py post_load_weights: w_kc/w_vc copies; block FP8 re-quantized "
                        "per tensor (block_quant_to_tensor_quant; read at 0.3.6, 0.4.0, 0.4.3.post4, 0.4.6)"),
    Era("0.4.6.post5", True, "models/deepseek_v2.py post_load_weights: 128 x 128 block FP8 on CUDA dequantized to "
                             "bf16 (block_quant_dequant; read at 0.4.6.post5, 0.4.10.post1, 0.5.15.post1, 0.5.23)"),
))  # fmt: skip


def _element_bytes(inputs: CalibrationInputs, layer: int, block_to_bf16: bool) -> int | None:
    """The bytes of one element of the copies on `layer`, by kv_b_proj's format; None: a format not read."""
    model = inputs.model
    assert model is not None
    fmt = model.quant.format_of((f"model.layers.{layer}.self_attn.kv_b_proj",))
    if fmt is None:
        return model.dtype_bytes
    if fmt.method == "fp8":
        return 2 if fmt.block == BLOCK_DEQUANT and block_to_bf16 else 1
    if fmt.method == "int4" and fmt.scheme == "awq":
        return 2
    if fmt.method == "int8" and fmt.block is not None:
        return 2
    return None


def split_tensors(inputs: CalibrationInputs) -> tuple[int, ...]:
    """The bytes of each w_kc and w_vc copy the largest rank holds (two a layer); () where SGLang's release or the
    model class makes none kvtop reads."""
    model = inputs.model
    if model is None or model.mla is None or model.architecture not in SPLIT_CLASSES:
        return ()
    block_to_bf16 = BLOCK_FP8_TO_BF16.at(inputs.version)
    if block_to_bf16 is None:
        return ()
    mla, layout = model.mla, inputs.layout
    heads = max(model.num_attention_heads // max(layout.attn_tp, 1), 1)
    layers = range(largest_stage_layers(model.num_layers, layout.pp, PP_SPLIT_ERAS.at(inputs.version)))
    tensors: list[int] = []
    for layer in layers:
        element = _element_bytes(inputs, layer, block_to_bf16)
        if element is None:
            continue
        tensors += [heads * mla.qk_nope_head_dim * mla.kv_lora_rank * element,
                    heads * mla.v_head_dim * mla.kv_lora_rank * element]  # fmt: skip
    return tuple(tensors)


def split_copies(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """(bytes, why) of the w_kc / w_vc copies on the largest rank; None where there are none kvtop reads."""
    tensors = split_tensors(inputs)
    if not tensors:
        return None
    size = sum(tensors)
    return size, (
        f"MLA's w_kc and w_vc, copied from kv_b_proj at the load ({len(tensors) // 2} layers, {mib(size)}: "
        "post_load_weights in models/deepseek_v2.py, kv_b_proj kept beside them)"
    )

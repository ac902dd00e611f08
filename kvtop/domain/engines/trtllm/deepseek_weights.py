"""What TensorRT-LLM's PyTorch backend holds in torch for a DeepSeek-V3-class model beyond the checkpoint's tensors
(docs/engines/trtllm.md §25).

Read at the stored copies of tensorrt_llm/_torch (no release wheel is on the local mirror; the public file index
keeps a file at the commits that changed it: modeling_deepseekv3.py ids 53161961507 and 227015512, the latter
registering DeepseekV32ForCausalLM beside DeepseekV3ForCausalLM; modules/attention.py ids 26175533973 (older,
`get_sm_version() == 100`), 57454759589 and 56895967506 (newer, `is_sm_100f()`)):
- the vocab embedding is whole on every rank: `DeepseekV3Model.__init__` builds
  `Embedding(config.vocab_size, config.hidden_size, dtype=config.torch_dtype)` with no mapping (tp 1), in both
  copies; the LM head stays split over TP (`DecoderModelForCausalLM`'s column-parallel LMHead);
- MLA keeps a transposed copy of kv_b_proj's K half: `MLA.create_weights` registers `k_b_proj_trans`
  [heads per rank, kv_lora_rank, qk_nope_head_dim] as `mla_weight_dtype = torch.float8_e4m3fn if has_fp8_block_scales
  else self.dtype`: FP8 where kv_b_proj has FP8 block scales, the model dtype otherwise (NVFP4, an unquantized
  kv_b_proj, any other method), filled by `load_kv_b_proj_and_k_b_proj_trans` (`.transpose(2, 1).contiguous()`: a
  copy); `v_b_proj` is re-pointed at a view of kv_b_proj's weight (no memory);
- with FP8 block scales, an fp32 `k_b_proj_trans_scale` [heads, kv_lora_rank / 128, qk_nope_head_dim / 128], and on
  the sm_100 family (B200, B300; the older copy asks `get_sm_version() == 100`, B300's sm_103 assumed alike) BF16
  dequantized copies `k_b_proj_trans_dequant` [heads, kv_lora_rank, qk_nope_head_dim] and `v_b_proj_dequant`
  [heads, v_head_dim, kv_lora_rank], unless the LLM API's `use_cute_dsl_blockscaling_bmm` (default False) runs the FP8
  BMM natively (`if is_sm_100f() and not self.use_cute_dsl_blockscaling_bmm`, ids 56895967506, 57454759589; read from
  the launch's YAML key). The copies came with NVIDIA/TensorRT-LLM PR #6486 ("Deepseek R1 FP8 Support on Blackwell",
  merged 2025-08-01, commit 7bb0a78631de, which added `load_kv_b_proj_and_k_b_proj_trans_dequant`: PR histories ids
  70508067214, 70070372726; the 1.0 release notes list it, id 683127886): `DEQUANTIZED_COPY_ERAS`, from 1.0.0rc5, the
  first release after the merge (assumed: its tree is not read; 0.21.0's notes of the same day list the feature too,
  a branch release planned without the copies).
Applied to the classes whose TensorRT-LLM model is `DeepseekV3ForCausalLM` (`DEEPSEEK_V3_CLASSES`): DeepseekV3 and
DeepseekV32 (its own registrations), MistralLarge3ForCausalLM (modeling_mistral_large3.py subclasses it, id
4150540201) and KimiK25ForConditionalGeneration (modeling_kimi_k25.py builds `self.llm = DeepseekV3ForCausalLM(
text_model_config)`, id 56469164267). GlmMoeDsaForCausalLM is registered on the same class in a 2026 tree only as a
blog quotes it (id 62555053007), not in a stored modeling file: not applied.
Checked on zufayu/ClaudeSkillsE2EPerf's DeepSeek-R1-0528 starts (tests/data/calibration/trtllm.jsonl): these take
1.5–1.8 GiB of the 2.5–2.6 GiB the log holds in torch above the book at TP 4 and 8; the rest (0.8–1.0 GiB there,
3.3 GiB on the TP 2 CUTLASS start) is not found and stays in the weights term's error (§25).
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.deployment_flags import flag_set
from kvtop.domain.engines.trtllm.eras import PP_REMAINDER
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.gpus import compute_capability
from kvtop.domain.layout import ParallelLayout, largest_stage_layers
from kvtop.domain.model import ModelSpec
from kvtop.domain.weights import embedding_tp
from kvtop.domain.wording import gib

DEEPSEEK_V3_CLASSES = frozenset({
    "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "MistralLarge3ForCausalLM", "KimiK25ForConditionalGeneration",
})  # fmt: skip
SCALE_BLOCK = 128  # FP8 block scales' granularity (the stored copies' `// 128`)
BF16_BYTES = 2
FP32_BYTES = 4
NATIVE_FP8_BMM_FLAG = "use_cute_dsl_blockscaling_bmm"  # the LLM API's option (the YAML's key), default False
# whether an FP8 block-scaled kv_b_proj keeps BF16 dequantized K and V copies on the sm_100 family
DEQUANTIZED_COPY_ERAS: Eras[bool] = Eras((
    Era("", False, "before PR #6486: no k_b_proj_trans_dequant / v_b_proj_dequant"),
    Era("1.0.0rc5", True, "PR #6486 (merged 2025-08-01, 7bb0a78631de): 1.0.0rc5, the first release after it, assumed"),
))  # fmt: skip


def embedding_whole_bytes(model: ModelSpec, layout: ParallelLayout) -> int:
    """The vocab embedding's bytes the rank holds beyond the book's share of it (the book splits it over TP)."""
    whole = model.vocab_size * model.hidden_size * model.dtype_bytes
    shards = embedding_tp(layout)
    return whole - whole // shards if shards > 1 else 0


def mla_copies_bytes(inputs: CalibrationInputs) -> tuple[int, str]:
    """(bytes, what) of MLA's k_b_proj_trans (and its scale and BF16 dequantized copies) on one rank."""
    model, layout = inputs.model, inputs.layout
    mla = model.mla if model is not None else None
    if model is None or mla is None:
        return 0, ""
    heads = max(model.num_attention_heads // max(layout.attn_tp, 1), 1)
    layers = largest_stage_layers(model.num_layers, layout.pp, PP_REMAINDER)
    fmt = model.quant.format_of(("model.layers.0.self_attn.kv_b_proj",))
    block_fp8 = fmt is not None and fmt.method == "fp8" and fmt.block is not None
    k_elements = heads * mla.kv_lora_rank * mla.qk_nope_head_dim
    per_layer = k_elements * (1 if block_fp8 else model.dtype_bytes)
    if not block_fp8:
        return layers * per_layer, "k_b_proj_trans in the model dtype (kv_b_proj has no FP8 block scales)"
    per_layer += heads * (mla.kv_lora_rank // SCALE_BLOCK) * (mla.qk_nope_head_dim // SCALE_BLOCK) * FP32_BYTES
    capability = compute_capability(inputs.gpu_name)
    if capability is None or capability[0] != 10:
        return layers * per_layer, "FP8 k_b_proj_trans and its scale"
    if not DEQUANTIZED_COPY_ERAS.at(inputs.version):
        return layers * per_layer, "FP8 k_b_proj_trans and its scale (no BF16 copies before PR #6486, 1.0.0rc5 assumed)"
    if flag_set(inputs.settings, NATIVE_FP8_BMM_FLAG):
        return layers * per_layer, "FP8 k_b_proj_trans and its scale (use_cute_dsl_blockscaling_bmm: no BF16 copies)"
    per_layer += (k_elements + heads * mla.v_head_dim * mla.kv_lora_rank) * BF16_BYTES
    return layers * per_layer, ("FP8 k_b_proj_trans with BF16 dequantized K and V copies (sm_100 family, PR #6486 "
                                "on; unless use_cute_dsl_blockscaling_bmm)")  # fmt: skip


def held_beside(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """(bytes, why) a DeepSeek-V3-class model holds in torch beyond the book, for `weights_estimate(extra=…)`."""
    model = inputs.model
    if model is None or model.architecture not in DEEPSEEK_V3_CLASSES:
        return None
    embedding = embedding_whole_bytes(model, inputs.layout)
    copies, what = mla_copies_bytes(inputs)
    if embedding + copies <= 0:
        return None
    return embedding + copies, (
        f"{gib(embedding + copies)} DeepseekV3Model holds beside the book: the vocab embedding whole on "
        f"every rank {gib(embedding)} more, MLA's {what} {gib(copies)} "
        "(modeling_deepseekv3.py, modules/attention.py create_weights, §25)"
    )

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
  [heads per rank, kv_lora_rank, qk_nope_head_dim] in kv_b_proj's dtype (float8_e4m3fn where kv_b_proj has FP8
  block scales, else the model dtype), filled by `load_kv_b_proj_and_k_b_proj_trans` (`.transpose(2, 1)
  .contiguous()`: a copy); `v_b_proj` is re-pointed at a view of kv_b_proj's weight (no memory);
- with FP8 block scales, an fp32 `k_b_proj_trans_scale` [heads, kv_lora_rank / 128, qk_nope_head_dim / 128], and on
  the sm_100 family (B200, B300; the older copy asks `get_sm_version() == 100`, B300's sm_103 assumed alike) BF16
  dequantized copies `k_b_proj_trans_dequant` [heads, kv_lora_rank, qk_nope_head_dim] and `v_b_proj_dequant`
  [heads, v_head_dim, kv_lora_rank].
Checked on zufayu/ClaudeSkillsE2EPerf's DeepSeek-R1-0528 starts (tests/data/calibration/trtllm.jsonl): these take
1.5–1.8 GiB of the 2.5–2.6 GiB the log holds in torch above the book at TP 4 and 8; the rest (0.8–1.0 GiB there,
3.3 GiB on the TP 2 CUTLASS start) is not found and stays in the weights term's error (§25).
"""

from __future__ import annotations

from kvtop.domain.gpus import compute_capability
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.weights import embedding_tp

DEEPSEEK_V3_CLASSES = frozenset({"DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM"})
SCALE_BLOCK = 128  # FP8 block scales' granularity (the stored copies' `// 128`)
BF16_BYTES = 2
FP32_BYTES = 4


def embedding_whole_bytes(model: ModelSpec, layout: ParallelLayout) -> int:
    """The vocab embedding's bytes the rank holds beyond the book's share of it (the book splits it over TP)."""
    whole = model.vocab_size * model.hidden_size * model.dtype_bytes
    shards = embedding_tp(model, layout)
    return whole - whole // shards if shards > 1 else 0


def mla_copies_bytes(model: ModelSpec, layout: ParallelLayout, gpu_name: str | None) -> tuple[int, bool]:
    """(bytes, dequantized) of MLA's k_b_proj_trans (and its scale and BF16 dequantized copies) on one rank."""
    mla = model.mla
    if mla is None:
        return 0, False
    heads = max(model.num_attention_heads // max(layout.attn_tp, 1), 1)
    layers = -(-model.num_layers // max(layout.pp, 1))
    fmt = model.quant.format_of(("model.layers.0.self_attn.kv_b_proj",))
    block_fp8 = fmt is not None and fmt.method == "fp8" and fmt.block is not None
    k_elements = heads * mla.kv_lora_rank * mla.qk_nope_head_dim
    per_layer = k_elements * (1 if block_fp8 else model.dtype_bytes)
    capability = compute_capability(gpu_name)
    dequantized = block_fp8 and capability is not None and capability[0] == 10
    if block_fp8:
        per_layer += heads * (mla.kv_lora_rank // SCALE_BLOCK) * (mla.qk_nope_head_dim // SCALE_BLOCK) * FP32_BYTES
    if dequantized:
        per_layer += (k_elements + heads * mla.v_head_dim * mla.kv_lora_rank) * BF16_BYTES
    return layers * per_layer, dequantized


def held_beside(model: ModelSpec | None, layout: ParallelLayout, gpu_name: str | None) -> tuple[int, str] | None:
    """(bytes, why) a DeepSeek-V3-class model holds in torch beyond the book, for `weights_estimate(extra=…)`."""
    if model is None or model.architecture not in DEEPSEEK_V3_CLASSES:
        return None
    embedding = embedding_whole_bytes(model, layout)
    copies, dequantized = mla_copies_bytes(model, layout, gpu_name)
    if embedding + copies <= 0:
        return None
    what = "k_b_proj_trans with BF16 dequantized K and V copies (sm_100 family)" if dequantized else "k_b_proj_trans"
    return embedding + copies, (
        f"{(embedding + copies) / 2**30:.2f} GiB DeepseekV3Model holds beside the book: the vocab embedding whole on "
        f"every rank {embedding / 2**30:.2f} GiB more, MLA's {what} {copies / 2**30:.2f} GiB "
        "(modeling_deepseekv3.py, modules/attention.py create_weights, §25)"
    )

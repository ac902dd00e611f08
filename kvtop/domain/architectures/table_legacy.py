"""Older families the engines still register, each with a module shape of its own: Persimmon's per-head
LayerNorms over a fused QKV, Mllama's cross-attention layers, Zamba2's shared blocks, Grok-1/2's four norms and fp32
router, Phi-3-small's biases everywhere (task E of issue 26).

Sources: the engines' model files (SGLang 0.5.23 `srt/models/<family>.py`, vLLM 0.33.0
`model_executor/models/<family>.py`) for what they build, and transformers 5.20.2's config classes for the defaults
(defaults_legacy.py; Grok-1's and Phi-3-small's, which no library ships, from the engine's own reads).
"""

from __future__ import annotations

from kvtop.domain.architectures import defaults_legacy as d
from kvtop.domain.architectures.description import Architecture, Attention, Geometry, SharedBlocks
from kvtop.domain.architectures.layer_rules import HybridBlockWords
from kvtop.domain.architectures.moe_rules import Moe, Shared
from kvtop.domain.architectures.state_rules import Mamba2State
from kvtop.domain.model import BodyShape, LayerKind, MlpKind

# Zamba2's layers_block_type: "hybrid" a shared transformer block and a Mamba2 mixer, the rest a Mamba2 mixer only
# ("mamba" in older files, which transformers' remap_legacy_layer_types reads as linear_attention)
_ZAMBA2_WORDS = {
    "hybrid": (LayerKind.FULL, MlpKind.DENSE),
    "linear_attention": (LayerKind.LINEAR, MlpKind.NONE),
    "mamba": (LayerKind.LINEAR, MlpKind.NONE),
}

A = Architecture
_SGLANG = "SGLang 0.5.23 srt/models/{}.py"

LEGACY: tuple[Architecture, ...] = (
    # Persimmon (SGLang 0.5.23 persimmon.py): query_key_value (every head its own K and V) and dense, both biased;
    # q_layernorm / k_layernorm nn.LayerNorm(head_dim) (weight and bias, whole on every rank) where qk_layernorm;
    # dense_h_to_4h / dense_4h_to_h ungated (relu²) with biases; two LayerNorms a layer and a final one; the LM head
    # its own (ParallelLMHead, no bias)
    A("persimmon", "PersimmonConfig", _SGLANG.format("persimmon"), d.PERSIMMON, ("PersimmonForCausalLM",),
      geometry=Geometry(kv_heads=None, head_dim=None), attention=Attention(qkv_bias=True, qk_norm_field="qk_layernorm"),
      mlp_gated=False, body=BodyShape(norm_bias=True, mlp_bias=True, o_bias=True, qk_norm_bias=True)),
    # Llama-3.2-Vision's language model (SGLang 0.5.23 mllama.py MllamaTextModel): Llama decoder layers (no
    # attention bias) but on `cross_attention_layers`, where MllamaCrossAttentionDecoderLayer holds the same
    # qkv_proj / o_proj / MLP / two norms plus q_norm and k_norm RMSNorm(head_dim) and two one-element tanh gates;
    # embed_tokens vocab_size + 8 rows, an untied lm_head of vocab_size. The cross-attention layers' RadixAttention
    # (is_cross_attention) keeps its KV in the one token pool with the rest, a slot holding every layer: SGLang's
    # cell is layers × 2 × KV heads × head_dim as a dense model's, and an image takes num_tiles ×
    # ((image_size ÷ patch_size)² + 1) slots of it (pad_input_ids: 4 × 1,601 for a 560-px, 4-tile image), text
    # tokens the rest (a request's demand, as every VLM's image tokens: kvtop's capacity counts slots). The vision
    # model and projector: towers_mllama (towers_catalog.BY_OUTER_TYPE["mllama"])
    A("mllama_text_model", "MllamaTextConfig", _SGLANG.format("mllama"), d.MLLAMA_TEXT,
      ("MllamaForConditionalGeneration",), cross_attention_field="cross_attention_layers",
      body=BodyShape(embedding_extra_rows=8)),
    # Zamba2 (vLLM 0.33.0 zamba2.py): every layer a Mamba2 mixer (n_mamba_heads of mamba_headdim, mamba_ngroups,
    # mamba_d_state, conv mamba_d_conv) with one input RMSNorm; the "hybrid" layers also run one of num_mem_blocks
    # shared transformer blocks (weight_shared.py: attention over 2 × hidden, every head its own K and V of
    # 2 × hidden ÷ heads, a gelu-gated MLP 4 × hidden by default), each hybrid layer with its own KV cache (an
    # Attention per layer), LoRA adapters and projection; the LM head tied by default
    A("zamba2", "Zamba2Config", "vLLM 0.33.0 model_executor/models/zamba2.py", d.ZAMBA2, ("Zamba2ForCausalLM",),
      geometry=Geometry(kv_heads=None, head_dim=None, intermediate_default_factor=4),
      layers=HybridBlockWords(words=_ZAMBA2_WORDS), attention=Attention(bias_fields=()),
      shared_blocks=SharedBlocks(), parallel_state=True,
      state=Mamba2State(heads_field="n_mamba_heads", head_dim_field="mamba_headdim", groups_field="mamba_ngroups",
                        state_field="mamba_d_state"),
      body=BodyShape(norms_per_layer=1),
      refused_when=(("add_bias_linear", "Zamba2's biased linear layers (add_bias_linear)"),)),
    # Grok-1 (SGLang 0.5.23 grok.py, which builds it whatever model_type the config names: nesting.CLASS_TEXT):
    # qkv_proj / o_proj without biases (head_dim 128 unless stated); every layer Grok1MoE — a ReplicatedLinear
    # router in fp32 and num_local_experts gated experts (FusedMoE w13 / w2) of moe_intermediate_size, else
    # intermediate_size; under residual_moe (Grok-2) Grok1MLP of intermediate_size beside them (a shared expert
    # without a gate); four RMSNorms a layer (pre/post attention, pre/post MoE); its own LM head. Its attention,
    # embedding and output multipliers scale activations, no weights. The replicated embedding / LM head are
    # refused: no config of theirs is at hand to check them against the engine
    A("grok-1", "Grok1Config (remote code; none in transformers or the engines)", _SGLANG.format("grok"), d.GROK1,
      ("Grok1ForCausalLM", "Grok1ModelForCausalLM"), attention=Attention(bias_fields=()),
      moe=Moe("num_local_experts", aliases=(("moe_intermediate_size", ("intermediate_size",)),), router_fp32=True,
              shared=Shared(size_field="intermediate_size", when_field="residual_moe")),
      body=BodyShape(norms_per_layer=4),
      refused_when=(("replicate_embedding", "an embedding whole on every rank (replicate_embedding)"),
                    ("replicate_lm_head", "an LM head whole on every rank (replicate_lm_head)"))),
    # Phi-3-small (SGLang 0.5.23 phi3_small.py): query_key_value (GQA) and dense with biases; RadixAttention with
    # plain KV on every layer (the block-sparse parameters it computes are never passed on); up_proj (gate and up
    # of ff_intermediate_size, gegelu) and down_proj with biases; LayerNorms with biases; the LM head tied unless the
    # config says otherwise; muP multipliers scale activations, no weights
    A("phi3small", "Phi3SmallConfig (remote code)", _SGLANG.format("phi3_small"), d.PHI3_SMALL,
      ("Phi3SmallForCausalLM",), geometry=Geometry(intermediate="ff_intermediate_size"),
      attention=Attention(qkv_bias=True), body=BodyShape(norm_bias=True, mlp_bias=True, o_bias=True),
      refused_when=(("ff_dim_multiplier", "Phi-3-small's MLP width from ff_dim_multiplier"),)),
)  # fmt: skip

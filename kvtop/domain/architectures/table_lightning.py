"""Hybrids of lightning attention (MiniMax's linear-attention kernel: a head_dim × head_dim state per head and
request, no conv) and full attention: the lightning layers hold that state, reserved before the KV pool, the others
KV as usual (`state_rules.LightningState`)."""

from __future__ import annotations

from kvtop.domain.architectures.description import Architecture, Attention, Latent
from kvtop.domain.architectures.layer_rules import EveryNthFullOf, RepeatedWords
from kvtop.domain.architectures.moe_rules import FirstDense, Moe, Shared
from kvtop.domain.architectures.state_rules import LightningState

A = Architecture

# SGLang 0.5.23 configs/minicpm.py MiniCPMHybridConfig's defaults for the flags its classes read (the lightning heads
# and width fall back to num_attention_heads / head_dim: LightningState's fallbacks)
MINICPM_SALA_DEFAULTS = {
    "qk_norm": True, "use_output_gate": False, "use_output_norm": False, "attn_use_output_gate": False,
    "attention_bias": False, "tie_word_embeddings": False,
}  # fmt: skip
MINICPM_SPARSE = (
    "InfLLM-v2 sparse attention on the minicpm4 layers (sparse_config): SGLang 0.5.23's MiniCPM backend "
    "(layers/attention/minicpm/backend.py attach_compressed_cache) keeps compressed keys (kernel_size / kernel_stride) "
    "beside the KV pool's tokens, which the plan does not count"
)

# Ling-3 shares Ling-2.5's model_type; kvtop reads it by its class (table_hybrid.py bailing_moe_v3, nesting.CLASS_TEXT)
LING_3_BY_CLASS = (
    "Ling-3's KDA layers (short_conv_kernel_size) in a config that names no class: kvtop reads Ling-3 by its class, "
    "BailingMoeV3ForCausalLM (the bailing_moe_v3 entry), which this config does not name; this"
)

LIGHTNING: tuple[Architecture, ...] = (
    # Ling-2.5 / Ring-2.5 (model_type bailing_hybrid, BailingMoeV2_5ForCausalLM; vLLM 0.33.0 models/
    # bailing_moe_linear.py with layers/mamba/linear/bailing_linear_attn.py, SGLang 0.5.23 models/
    # bailing_moe_linear.py): full attention (MLA: q_proj or q_a/q_b, kv_a_proj_with_mqa, kv_b_proj, o_proj) on every
    # layer_group_size-th layer, lightning attention on the others (query_key_value of num_attention_heads × head_dim
    # thrice, q/k RMSNorms where use_qk_norm, g_proj, the gated group norm, dense); a dense MLP below
    # first_k_dense_replace, then num_experts experts and num_shared_experts × moe_intermediate_size shared behind
    # an fp32 router (router_dtype fp32 or absent, both engines) with an fp32 expert_bias where
    # moe_router_enable_expert_bias. The engines disagree on the lightning width: vLLM reads the config through
    # transformers' BailingHybridConfig, whose head_dim is qk_rope_head_dim (engines/vllm/eras.py
    # STATE_WIDTH_FROM_ROPE_ERAS); SGLang keeps head_dim. No class defaults: the checkpoint's own class
    # (configuration_bailing_moe_v2_5.py), SGLang's BailingHybridConfig and transformers' (Ling-3's) differ, so
    # what kvtop reads must be stated. The main class builds no MTP layer (BailingMoeV25MTPModel is the draft).
    A("bailing_hybrid", "the checkpoint's BailingMoeV2_5Config (remote code)",
      "vLLM 0.33.0 / SGLang 0.5.23 models/bailing_moe_linear.py; inclusionAI/Ring-V2.5 "
      "models/configuration_bailing_moe_v2_5.py", {}, ("BailingMoeV2_5ForCausalLM",),
      layers=EveryNthFullOf(interval_field="layer_group_size"), latent=Latent(), state=LightningState(),
      moe=Moe("num_experts", shared=Shared(count_field="num_shared_experts"), placement=FirstDense(),
              router_bias_when=("moe_router_enable_expert_bias", True), router_fp32=True),
      mtp_fields=(),
      refused_when=(
          # Ling-3 (BailingMoeV3ForCausalLM) shares the model_type: its KDA layers carry a short conv (SGLang 0.5.23
          # configs/bailing_hybrid.py: use_kda = short_conv_kernel_size is not None). A config naming that class is
          # read by its own entry (nesting.CLASS_TEXT); one naming no class, here
          ("short_conv_kernel_size", LING_3_BY_CLASS),
          ("use_bias", "biases on every projection (use_bias: the lightning dense and qkv, MLPs)"),
          ("use_qkv_bias", "a bias on the lightning layers' query_key_value (use_qkv_bias)"),
          ("moe_shared_expert_intermediate_size", "shared experts of their own width (moe_shared_expert_"
                                                  "intermediate_size)"),
      )),
    # MiniCPM-SALA (model_type minicpm_sala, SGLang 0.5.23 models/minicpm.py; vLLM 0.33.0 registers no class):
    # mixer_types picks, per layer, MiniCPM-4 attention (MiniCPMAttention: qkv_proj of num_attention_heads /
    # num_key_value_heads × head_dim, o_proj, o_gate hidden → heads × head_dim where attn_use_output_gate, no q/k
    # norms) or a lightning mixer (MiniCPMLightningMixer: qkv_proj of lightning_nh heads thrice — lightning_nkv must
    # equal it —, q_norm / k_norm where qk_norm, z_proj where use_output_gate, o_norm where use_output_norm, o_proj),
    # its state MiniCPMHybridConfig.mamba2_cache_params: (lightning_nkv ÷ TP, lightning_head_dim, lightning_head_dim)
    # in float32, no conv; a dense gated MLP on every layer; an untied LM head by default
    A("minicpm_sala", "MiniCPMHybridConfig", "SGLang 0.5.23 srt/configs/minicpm.py, srt/models/minicpm.py",
      MINICPM_SALA_DEFAULTS, ("MiniCPMSALAForCausalLM",), layers=RepeatedWords(),
      attention=Attention(qk_norm_field=None, output_gate_proj_field="attn_use_output_gate"),
      state=LightningState(heads_field="lightning_nh", head_dim_field="lightning_head_dim", qk_norm_field="qk_norm",
                           rope_field=None, gate_field="use_output_gate", norm_field="use_output_norm",
                           heads_fallback="num_attention_heads", head_dim_fallback="head_dim"),
      mtp_fields=(),
      not_modelled_when=(("sparse_config", MINICPM_SPARSE),),
      refused_when=(("attention_bias", "biases on every projection (attention_bias: qkv, o_proj, o_gate, z_proj)"),),
      refused_unequal=(("lightning_nkv", "lightning_nh", "lightning attention with fewer KV heads, which "
                                                         "MiniCPMHybridConfig refuses"),)),
)  # fmt: skip

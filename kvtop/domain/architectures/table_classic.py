"""Decoders of the GPT-2 lineage and other families whose modules differ from Llama's in their small tensors:
LayerNorm with a bias, an ungated MLP with biases, a learned position table, one norm for a parallel block.

Sources: each family's modeling file in transformers v5.24.0 (module shapes) and the engines' model files
(vLLM 0.33.0 `model_executor/models/<family>.py`, SGLang 0.5.23 `srt/models/<family>.py`) for what they load.
"""

from __future__ import annotations

from kvtop.domain.architectures import defaults_more as m
from kvtop.domain.architectures.defaults import NOMINAL_POSITIONS_SAID, tf
from kvtop.domain.architectures.description import Architecture, Attention, Geometry, ParallelNorms
from kvtop.domain.model import BodyShape

A = Architecture
GPT2_GEOMETRY = Geometry(kv_heads=None, head_dim=None, intermediate="n_inner", intermediate_default_factor=4)
GPT2_BODY = BodyShape(norm_bias=True, mlp_bias=True, o_bias=True, learned_positions=True)

CLASSIC: tuple[Architecture, ...] = (
    # GPT2Attention: c_attn (q, k, v) and c_proj with biases; c_fc / c_proj MLP with biases; ln_1, ln_2, wpe
    A("gpt2", "GPT2Config", tf("gpt2"), m.GPT2, ("GPT2LMHeadModel",), geometry=GPT2_GEOMETRY,
      attention=Attention(qkv_bias=True), mlp_gated=False, body=GPT2_BODY),
    # GPTBigCode: GPT-2's modules with one shared KV head under multi_query (c_attn: h + 2 × head_dim)
    A("gpt_bigcode", "GPTBigCodeConfig", tf("gpt_bigcode"), m.GPT_BIGCODE, ("GPTBigCodeForCausalLM",),
      geometry=Geometry(kv_heads=None, multi_query_flag="multi_query", head_dim=None, intermediate="n_inner",
                        intermediate_default_factor=4),
      attention=Attention(qkv_bias=True), mlp_gated=False, body=GPT2_BODY),
    # GPT-J: q, k, v, out without biases; fc_in / fc_out with biases; one ln_1 for the parallel block; lm_head bias
    A("gptj", "GPTJConfig", tf("gptj"), m.GPTJ, ("GPTJForCausalLM",), geometry=GPT2_GEOMETRY, mlp_gated=False,
      body=BodyShape(norm_bias=True, mlp_bias=True, norms_per_layer=1, lm_head_bias=True)),
    # GPT-NeoX: query_key_value and dense with biases (attention_bias), MLP biases, two LayerNorms
    A("gpt_neox", "GPTNeoXConfig", tf("gpt_neox"), m.GPT_NEOX, ("GPTNeoXForCausalLM",),
      geometry=Geometry(kv_heads=None, head_dim=None), attention=Attention(o_bias_fields=("attention_bias",)),
      mlp_gated=False, body=BodyShape(norm_bias=True, mlp_bias=True)),
    # Phi-1/1.5/2: q, k, v, dense with biases; fc1/fc2 with biases; one LayerNorm (parallel); lm_head bias
    A("phi", "PhiConfig", tf("phi"), m.PHI, ("PhiForCausalLM",), attention=Attention(qkv_bias=True),
      mlp_gated=False, body=BodyShape(norm_bias=True, mlp_bias=True, o_bias=True, norms_per_layer=1,
                                      lm_head_bias=True)),
    # the same model under its remote-code name (n_embd, n_head, n_layer, n_inner, n_positions)
    A("phi-msft", "PhiConfig (remote code)", "microsoft/phi-2 configuration_phi.py (remote code)", m.PHI,
      ("PhiForCausalLM",), geometry=GPT2_GEOMETRY, attention=Attention(qkv_bias=True), mlp_gated=False,
      body=BodyShape(norm_bias=True, mlp_bias=True, o_bias=True, norms_per_layer=1, lm_head_bias=True)),
    # StableLM: q, k, v biases where use_qkv_bias; two LayerNorms with biases; per-head q/k LayerNorms optional
    A("stablelm", "StableLmConfig", tf("stablelm"), m.STABLELM, ("StableLmForCausalLM", "StableLMEpochForCausalLM"),
      attention=Attention(bias_fields=("use_qkv_bias",), qk_norm_field="qk_layernorm"),
      body=BodyShape(norm_bias=True, qk_norm_width="all")),
    # StarCoder2: every linear layer biased where use_bias; c_fc / c_proj ungated; LayerNorms with biases
    A("starcoder2", "Starcoder2Config", tf("starcoder2"), m.STARCODER2, ("Starcoder2ForCausalLM",),
      attention=Attention(bias_fields=("use_bias",), o_bias_fields=("use_bias",)), mlp_gated=False,
      body=BodyShape(norm_bias=True, mlp_bias=True)),
    # OPT (vLLM opt.py): qkv_proj, out_proj, fc1 / fc2 (ungated, ffn_dim) biased where enable_bias; two LayerNorms
    # a layer; learned positions with 2 rows beyond max_position_embeddings; the embedding (and the tied LM head)
    # word_embed_proj_dim wide with project_in / project_out where that differs from hidden; a final LayerNorm
    # only under do_layer_norm_before (OPT-350m has none)
    A("opt", "OPTConfig", tf("opt"), m.OPT, ("OPTForCausalLM",),
      geometry=Geometry(kv_heads=None, head_dim=None, intermediate="ffn_dim", embedding_width="word_embed_proj_dim"),
      attention=Attention(bias_fields=("enable_bias",), o_bias_fields=("enable_bias",)), mlp_gated=False,
      mlp_bias_fields=("enable_bias",), final_norm_field="do_layer_norm_before",
      body=BodyShape(norm_bias=True, learned_positions=True, positions_offset=2)),
    # BLOOM (vLLM bloom.py): query_key_value and dense with biases, dense_h_to_4h / dense_4h_to_h 4 × hidden with
    # biases, two LayerNorms a layer, a LayerNorm after the embedding (word_embeddings_layernorm); ALiBi, and no
    # position field in BloomConfig: kvtop's nominal positions (defaults.NOMINAL_POSITIONS)
    A("bloom", "BloomConfig", tf("bloom"), m.BLOOM, ("BloomForCausalLM",),
      geometry=Geometry(kv_heads=None, head_dim=None, intermediate=None, intermediate_default_factor=4),
      attention=Attention(qkv_bias=True), mlp_gated=False,
      body=BodyShape(norm_bias=True, mlp_bias=True, o_bias=True, embedding_norm=True),
      own_defaults=(NOMINAL_POSITIONS_SAID,)),
    # Falcon (vLLM falcon.py): KV heads num_kv_heads under new_decoder_architecture, else one under multi_query,
    # else every head; query_key_value, dense, dense_h_to_4h / dense_4h_to_h biased where `bias`; the MLP
    # 4 × hidden (vLLM builds 4 × hidden whatever ffn_hidden_size says); LayerNorms with biases, as many a layer
    # as `ParallelNorms` says; rotary or ALiBi, no position table; the LM head tied unless stated otherwise
    A("falcon", "FalconConfig", tf("falcon"), m.FALCON, ("FalconForCausalLM",),
      geometry=Geometry(kv_heads_if="new_decoder_architecture", multi_query_flag="multi_query", head_dim=None,
                        intermediate="ffn_hidden_size", intermediate_default_factor=4),
      attention=Attention(bias_fields=("bias",), o_bias_fields=("bias",)), mlp_gated=False,
      mlp_bias_fields=("bias",), body=BodyShape(norm_bias=True), norms=ParallelNorms()),
    # Cohere / Command-R: one LayerNorm (weight only) for the parallel block; q/k norms per head where use_qk_norm
    A("cohere", "CohereConfig", tf("cohere"), m.COHERE, ("CohereForCausalLM",),
      body=BodyShape(norms_per_layer=1, qk_norm_width="all_split")),
)  # fmt: skip

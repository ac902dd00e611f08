"""Hybrids of attention and a recurrent state (Mamba, gated delta net, short conv): the state layers hold a
fixed state per request, reserved before the KV pool; the attention layers hold KV as usual."""

from __future__ import annotations

from kvtop.domain.architectures import defaults as d
from kvtop.domain.architectures import defaults_more as m
from kvtop.domain.architectures import towers_catalog as t
from kvtop.domain.architectures.defaults import DefaultValue, tf
from kvtop.domain.architectures.description import Architecture, Attention, Geometry, Latent, WidthAdjust
from kvtop.domain.architectures.layer_rules import (
    AttentionThenMlp,
    BlockPattern,
    EveryNthFullOf,
    IndexList,
    KimiLinearLayers,
    PeriodOffset,
    StatedOnly,
)
from kvtop.domain.architectures.moe_rules import FirstDense, Moe, Shared, SparseStep
from kvtop.domain.architectures.moe_rules import PeriodOffset as ExpertPeriod
from kvtop.domain.architectures.state_rules import (
    BailingKdaState,
    CcaState,
    GatedDeltaNetState,
    JetBlockState,
    KimiDeltaState,
    Mamba1State,
    Mamba2State,
    ShortConvState,
)
from kvtop.domain.model import BodyShape, LayerKind

LINEAR_KIND = LayerKind.LINEAR
# ZayaConfig — SGLang 0.5.23 srt/configs/zaya.py 41-93 (the class SGLang registers over transformers' own zaya)
ZAYA: dict[str, DefaultValue] = {
    "hidden_size": 2048, "num_hidden_layers": 80, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128,
    "vocab_size": 262272, "ffn_hidden_size": 4096, "num_experts": 16, "moe_router_topk": 1,
    "max_position_embeddings": 32768, "tie_word_embeddings": True, "rope_theta": 1_000_000,
    "attention_bias": False, "lm_head_bias": False, "zaya_mlp_expansion": 256,
    "zaya_use_mod": True, "zaya_use_eda": True, "scale_residual_merge": True, "cca_time0": 2, "cca_time1": 2,
    "sliding_window": None, "zaya_layers": None, "swa_layers": None, "cca_num_q_heads": None,
    "num_query_groups_list": None, "ffn_hidden_size_list": None,
}  # fmt: skip
_ZAYA_LISTS = "per-layer lists (SGLang 0.5.23 configs/zaya.py reads the first nonzero entry; the model indexes them)"
A = Architecture
QWEN_MOE = Moe("num_experts", shared=Shared(size_field="shared_expert_intermediate_size", gate=True),
               placement=SparseStep())  # fmt: skip
QWEN3_5_STATE = GatedDeltaNetState(ssm_dtype_field="mamba_ssm_cache_dtype")
LFM2_WIDTH = WidthAdjust("block_auto_adjust_ff_dim", "block_ffn_dim_multiplier", "block_multiple_of")
GRANITE_MAMBA = Mamba2State(
    heads_field="mamba_n_heads", head_dim_field="mamba_d_head", state_field="mamba_d_state"
)

HYBRID: tuple[Architecture, ...] = (
    A("qwen3_next", "Qwen3NextConfig", tf("qwen3_next"), d.QWEN3_NEXT, ("Qwen3NextForCausalLM",),
      layers=EveryNthFullOf(), attention=Attention(qk_norm=True, output_gate=True), state=GatedDeltaNetState(),
      moe=Moe("num_experts", shared=Shared(size_field="shared_expert_intermediate_size", gate=True),
              placement=SparseStep()),
      # Qwen3NextConfig states no MTP depth; the checkpoint ships one `mtp.*` layer, which vLLM's Qwen3NextMTP
      # builds as range(getattr(config, "num_nextn_predict_layers", 1)) (qwen3_next_mtp.py:60, :78-85 at
      # v0.21.0-v0.24.0; :63 at v0.33.0) and SGLang's Qwen3NextForCausalLMMTP as one layer whatever the config
      # (sglang/srt/models/qwen3_next_mtp.py:66-73 at v0.5.23: `mtp_config.num_hidden_layers = 1`, a
      # Qwen3NextModel with is_nextn=True); every engine reads this one figure (SGLang: sglang/deployment.py's
      # `model.mtp_layers`, mtp_quant.py)
      mtp_unstated=1),
    A("nemotron_h", "NemotronHConfig", tf("nemotron_h"), d.NEMOTRON_H,
      ("NemotronHForCausalLM", "NemotronHPuzzleForCausalLM"), layers=BlockPattern(), mlp_gated=False,
      state=Mamba2State(), body=BodyShape(norms_per_layer=1),  # NemotronHBlock: one norm, one mixer
      moe=Moe("n_routed_experts",
              shared=Shared(size_field="moe_shared_expert_intermediate_size", count_field="n_shared_experts"),
              router_bias=True, latent_size_field="moe_latent_size")),
    # OLMo-Hybrid (vLLM 0.33.0 models/olmo_hybrid.py, layers/mamba/gdn/olmo_gdn_linear_attn.py): gated delta nets
    # (in_proj_qkvg q, k, v, g; b_proj and a_proj; one conv1d over q, k, v; A_log, dt_bias, a gated o_norm;
    # o_proj: Qwen3-Next's sizes) and OLMo-3's full attention (q/k norms over all heads, post-attention and
    # post-feedforward norms) from layer_types (absent: every 4th full); A_log in the model dtype
    A("olmo_hybrid", "OlmoHybridConfig", tf("olmo_hybrid"), m.OLMO_HYBRID, ("OlmoHybridForCausalLM",),
      layers=EveryNthFullOf(every=4), attention=Attention(qk_norm=True), state=GatedDeltaNetState(a_log_fp32=False),
      body=BodyShape(qk_norm_width="all")),
    # Qwen3.5: Qwen3-Next's layers (gated delta net, full attention with an output gate) as layer_types lists
    # them; the SSM state in the config's mamba_ssm_dtype (both engines honour it)
    A("qwen3_5_text", "Qwen3_5TextConfig", tf("qwen3_5"), m.QWEN3_5_TEXT,
      ("Qwen3_5ForConditionalGeneration", "Qwen3_5ForCausalLM"), layers=EveryNthFullOf(),
      attention=Attention(qk_norm=True, output_gate_field="attn_output_gate"), state=QWEN3_5_STATE,
      mtp_fields=("mtp_num_hidden_layers",), tower=t.QWEN3_5),
    # InternS2PreviewForConditionalGeneration (vLLM 0.33.0 interns2_preview.py, SGLang 0.5.23 interns2preview.py)
    # subclasses Qwen3_5MoeForConditionalGeneration: its text model and tower, equal on both at TP 1 and 2 in the
    # registry sweep's default config (language model, tower, KV specs; docs/fidelity_registry.md)
    A("qwen3_5_moe_text", "Qwen3_5MoeTextConfig", tf("qwen3_5_moe"), m.QWEN3_5_MOE_TEXT,
      ("Qwen3_5MoeForConditionalGeneration", "Qwen3_5MoeForCausalLM", "InternS2PreviewForConditionalGeneration"),
      layers=EveryNthFullOf(),
      attention=Attention(qk_norm=True, output_gate_field="attn_output_gate"), state=QWEN3_5_STATE, moe=QWEN_MOE,
      mtp_fields=("mtp_num_hidden_layers",), tower=t.QWEN3_5_MOE),
    # Jamba: attention every attn_layer_period-th layer (from the offset), Mamba1 between (its dt/B/C norms);
    # experts every expert_layer_period-th layer
    A("jamba", "JambaConfig", tf("jamba"), m.JAMBA, ("JambaForCausalLM",), layers=PeriodOffset(),
      state=Mamba1State(kernel_field="conv_kernel"),
      moe=Moe("num_experts", expert_size_field="intermediate_size", placement=ExpertPeriod())),
    # Falcon-H1: attention and a Mamba2 mixer side by side in every layer, then an MLP
    A("falcon_h1", "FalconH1Config", tf("falcon_h1"), m.FALCON_H1, ("FalconH1ForCausalLM",),
      layers=IndexList(), parallel_state=True,
      state=Mamba2State(heads_field="mamba_n_heads", head_dim_field="mamba_d_head", state_field="mamba_d_state",
                        norm_field="mamba_rms_norm")),
    # Zaya (SGLang 0.5.23 models/zaya.py; vLLM 0.33.0 registers no class): even layers CCA (q, k and o as attention,
    # value projections, conv stages and temp as its state mixer: weight_matrices.cca) with no MLP, odd layers a
    # ZayaBlock (ZayaRouter MLP, FusedMoE experts of ffn_hidden_size ÷ 2, no shared expert) with no attention; one
    # norm a layer, ResidualScaling's four hidden vectors a layer (two at layer 0, four at the final norm)
    A("zaya", "ZayaConfig", "SGLang 0.5.23 srt/configs/zaya.py", ZAYA, ("ZayaForCausalLM",),
      geometry=Geometry(intermediate="ffn_hidden_size"), layers=AttentionThenMlp(), parallel_state=True,
      state=CcaState(), body=BodyShape(norms_per_layer=1, residual_scales=4),
      moe=Moe("num_experts", per_token_field="moe_router_topk", expert_size_field="ffn_hidden_size",
              expert_size_divisor=2, router_mlp_fields=("zaya_mlp_expansion", "zaya_use_eda", "zaya_use_mod")),
      refused_when=(("attention_bias", "CCA's q / k and o_proj biases (attention_bias)"),
                    ("lm_head_bias", "an LM head bias (lm_head_bias)"),
                    ("zaya_layers", "a stated Zaya layer pattern (zaya_layers)"),
                    ("swa_layers", "sliding-window CCA layers (swa_layers)"),
                    ("cca_num_q_heads", _ZAYA_LISTS), ("num_query_groups_list", _ZAYA_LISTS),
                    ("ffn_hidden_size_list", _ZAYA_LISTS)),
      refused_unless=(("scale_residual_merge", "True", "ResidualScaling in every layer"),),
      refused_unequal=(("num_query_groups", "num_key_value_heads", "ZayaConfig asserts them equal"),)),
    # Granite-4.0-H: layer_types mamba / attention; experts and a shared MLP (shared_intermediate_size)
    A("granitemoehybrid", "GraniteMoeHybridConfig", tf("granitemoehybrid"), m.GRANITEMOEHYBRID,
      ("GraniteMoeHybridForCausalLM",), state=GRANITE_MAMBA,
      moe=Moe("num_local_experts", expert_size_field="intermediate_size",
              shared=Shared(size_field="shared_intermediate_size"), optional=True)),
    # LFM2: gated short-conv layers and full attention from layer_types; per-head q/k norms; its MLP is
    # int(2/3 × intermediate_size) × block_ffn_dim_multiplier rounded up to block_multiple_of where
    # block_auto_adjust_ff_dim (class default on; vLLM 0.33.0 / SGLang 0.5.23 lfm2.py Lfm2MLP)
    A("lfm2", "Lfm2Config", tf("lfm2"), m.LFM2, ("Lfm2ForCausalLM",), attention=Attention(qk_norm=True),
      geometry=Geometry(intermediate_adjust=LFM2_WIDTH), state=ShortConvState(), body=BodyShape(norms_per_layer=2)),
    # GigaChat-3.5 (SGLang 0.5.23 models/gigachat35.py, config class configs/gigachat35.py): gated delta nets (Qwen3-
    # Next's, linear_* fields) and MLA layers (full_attention_layers, 0-based, or layer_types; neither: every layer
    # linear) with an output gate attn_gate (hidden → heads × v_head_dim, split with the heads) where gated_attention;
    # DeepSeek's experts from first_k_dense_replace; the input and post-attention norms, and two more (post self-attn,
    # post feed-forward) where layernorm_type is post or pre_post; every norm (and MLA's q_a / kv_a norms) a low-rank
    # sigmoid gate (gate_up [16, width], gate_down [width, 16]) where norm_type is a gated one
    A("gigachat3_5", "GigaChat35Config", "SGLang 0.5.23 srt/configs/gigachat35.py", m.GIGACHAT3_5,
      ("GigaChat35ForCausalLM",), layers=IndexList(list_field="full_attention_layers", other=LINEAR_KIND,
                                                   absent=LINEAR_KIND),
      latent=Latent(), attention=Attention(latent_gate_field="gated_attention"), state=GatedDeltaNetState(),
      moe=Moe("n_routed_experts", shared=Shared(count_field="n_shared_experts"), placement=FirstDense(),
              router_bias_when=("topk_method", "noaux_tc")),
      norms_by_word=("layernorm_type", (("pre", 2), ("post", 4), ("pre_post", 4))),
      norm_gate=("norm_type", ("ZeroCenteredGatedNorm", "GatedNorm"), 16)),
    # LFM2-MoE: LFM2's ShortConv and attention layers as layer_types lists them (none of the class's own: refused
    # unstated), its dense MLP intermediate_size wide (no adjustment) below num_dense_layers, then num_experts of
    # moe_intermediate_size behind a model-dtype gate with an fp32 e_score_correction_bias (use_expert_bias):
    # vLLM 0.33.0 / SGLang 0.5.23 lfm2_moe.py
    A("lfm2_moe", "Lfm2MoeConfig", tf("lfm2_moe"), m.LFM2_MOE, ("Lfm2MoeForCausalLM",), layers=StatedOnly(),
      attention=Attention(qk_norm=True), state=ShortConvState(), body=BodyShape(norms_per_layer=2),
      moe=Moe("num_experts", placement=FirstDense(first_field="num_dense_layers"),
              router_bias_when=("use_expert_bias", True))),
    # Kimi-Linear (Kimi-K3's language model): KDA layers, MLA on full_attn_layers, DeepSeek-style experts.
    # Kimi-K3's additions, each by its config field (SGLang 0.5.23 kimi_k3.py, vLLM 0.33.0 kimi_k3/nvidia/model.py):
    # experts in a latent width (routed_expert_hidden_size: routed_expert_down_proj / up_proj, whole on every rank,
    # routed_expert_norm where latent_moe_use_norm), MLA's output gate g_proj (mla_use_output_gate), KDA's
    # full-rank gate (linear_attn_config.use_full_rank_gate) and attention residual blocks (attn_res_block_size).
    # KimiK3LinearForCausalLM, Kimi-K3's text-only class, is the wrapper's language_model (SGLang 0.5.23 kimi_k3.py)
    A("kimi_linear", "KimiLinearConfig", tf("kimi_linear"), m.KIMI_LINEAR,
      ("KimiLinearForCausalLM", "KimiK3ForConditionalGeneration", "KimiK3LinearForCausalLM"), layers=KimiLinearLayers(),
      latent=Latent(),
      attention=Attention(latent_gate_field="mla_use_output_gate"), state=KimiDeltaState(),
      moe=Moe("num_experts", per_token_field="num_experts_per_token",
              shared=Shared(count_field="num_shared_experts"), placement=FirstDense(), router_bias=True,
              latent_size_field="routed_expert_hidden_size",
              latent_modules=("routed_expert_down_proj", "routed_expert_up_proj"),
              latent_norm_field="latent_moe_use_norm"),
      attention_residual_field="attn_res_block_size"),
    # Ling-3 (BailingMoeV3ForCausalLM; its config says model_type bailing_hybrid, Ling-2.5's: the class picks this
    # entry, nesting.CLASS_TEXT). vLLM 0.33.0 / SGLang 0.5.23 models/bailing_moe_v3.py: KDA (BailingKdaState: qkvb
    # fused, f_proj and g_proj full rank under no_kda_lora, else f_a / g_a + f_b / g_b, q/k/v short convs, A_log,
    # dt_bias, o_norm, o_proj) on every layer but each
    # layer_group_size-th, MLA there (fused q_a / kv_a whole, q_b, kv_b, dense; g_proj one gate per head where
    # gated_attention_proj_granularity_type is head_wise); a dense MLP below first_k_dense_replace, then num_experts
    # experts and num_shared_experts × moe_shared_expert_intermediate_size shared behind an fp32 router with an fp32
    # expert bias (moe_router_enable_expert_bias). No class defaults: the checkpoint's own BailingMoeV3Config (remote
    # code). Meta-built (recon--inclusionAI--Ling-3.0-tiny, SGLang 0.5.23): 15,313,925,248 B of model at TP 1.
    # Not read: layers past the last whole group (SGLang asserts there are none; vLLM makes them MLA): refused by
    # BailingKdaState; MTP (the main class builds none).
    A("bailing_moe_v3", "the checkpoint's BailingMoeV3Config (remote code)",
      "vLLM 0.33.0 / SGLang 0.5.23 models/bailing_moe_v3.py", {}, ("BailingMoeV3ForCausalLM",),
      layers=EveryNthFullOf(interval_field="layer_group_size"), latent=Latent(),
      attention=Attention(latent_gate_kind_field="gated_attention_proj_granularity_type"), state=BailingKdaState(),
      moe=Moe("num_experts", shared=Shared(size_field="moe_shared_expert_intermediate_size",
                                           count_field="num_shared_experts"),
              placement=FirstDense(), router_bias_when=("moe_router_enable_expert_bias", True), router_fp32=True),
      mtp_fields=(), engine_read_fields=("use_bias",),  # vLLM 0.33.0 reads it off a class without it
      # low-rank KDA gates (no_kda_lora false) planned as Kimi-Linear's (BailingKdaState); vLLM 0.33.0 refuses them
      refused_when=(("use_bias", "biases on the MLPs (use_bias)"),)),
    # Jet-Nemotron (SGLang 0.5.23 models/jet_nemotron.py; vLLM 0.33.0 registers no class): each layer what
    # layer_types says, "jet" a JetBlock (JetBlockState: efficient_attention_config.jet), "attn" / "swa" Qwen2-style
    # attention (qkv bias, head_dim hidden ÷ heads; "swa" windowed by efficient_attention_config.swa.window_size,
    # SGLang's one token pool: JetNemotronForCausalLM is no hybrid-SWA class), Qwen2MLP on every layer. No class
    # defaults: SGLang's JetNemotronConfig leaves every size None.
    A("jet_nemotron", "JetNemotronConfig (SGLang 0.5.23 configs/jet_nemotron.py)", "SGLang 0.5.23 models/jet_nemotron.py",
      {}, ("JetNemotronForCausalLM",), layers=StatedOnly(),
      layer_type_words={"jet": LINEAR_KIND, "attn": LayerKind.FULL, "swa": LayerKind.SLIDING},
      window_field="efficient_attention_config.swa.window_size", attention=Attention(qkv_bias=True),
      state=JetBlockState(), mtp_fields=()),
)  # fmt: skip

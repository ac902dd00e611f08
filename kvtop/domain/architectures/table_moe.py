"""Mixture-of-experts decoders with standard (MHA/GQA) attention: Mixtral, Qwen-MoE, Llama 4, gpt-oss …"""

from __future__ import annotations

from kvtop.domain.architectures import defaults as d
from kvtop.domain.architectures import defaults_more as m
from kvtop.domain.architectures import towers_catalog as t
from kvtop.domain.architectures.defaults import tf
from kvtop.domain.architectures.description import (
    Architecture,
    Attention,
    Geometry,
    KindGeometry,
    SparseIndex,
)
from kvtop.domain.architectures.layer_rules import (
    Alternate,
    ChunkedNoRope,
    EveryNthFull,
    PerLayerFlags,
    Qwen2Window,
    RepeatedBlock,
)
from kvtop.domain.architectures.moe_rules import (
    FirstDense,
    IndexList,
    IndexRange,
    Interleaved,
    LayerTypes,
    Moe,
    Shared,
    SparseOnly,
    SparseStep,
)
from kvtop.domain.architectures.reader import VISION_NOT_MODELLED
from kvtop.domain.model import BodyShape, LayerKind

A = Architecture

# xLLM's and K2-Horizon's experts (SGLang 0.5.23 models/xllm.py XllmDecoderLayer, XllmSparseMoeBlock, XllmMoEGate; vLLM
# 0.33.0 models/k2_horizon.py): dense on mlp_only_layers, else every decoder_sparse_step-th layer num_experts experts
# and num_shared_experts × moe_intermediate_size shared; the router in the model dtype, its bias fp32 where moe_gate_bias
XLLM_MOE = Moe("num_experts", shared=Shared(count_field="num_shared_experts"), placement=SparseStep(),
               router_bias_when=("moe_gate_bias", True), dense_at_most=0)  # fmt: skip

# Bailing-MoE's expert fields (both engines' bailing_moe.py): dense below first_k_dense_replace, num_experts routed and
# num_shared_experts shared, the fp32 expert bias unless moe_router_enable_expert_bias is false; Sarvam-105B's latent
# entry reads them too (table_latent)
BAILING_MOE = Moe("num_experts", shared=Shared(count_field="num_shared_experts"), placement=FirstDense(),
                  router_bias_when=("moe_router_enable_expert_bias", True))  # fmt: skip


def bailing(model_type: str, config_class: str, source: str, classes: tuple[str, ...]) -> Architecture:
    """A Bailing-MoE-shaped entry (Ling / Ling 2.0 and classes the engines build on it): bailing_moe's rules below."""
    return A(model_type, config_class, source, {}, classes, attention=Attention(bias_fields=("use_qkv_bias",)),
             moe=BAILING_MOE,
             mtp_fields=(), engine_read_fields=("use_rmsnorm",),  # vLLM's q/k LayerNorms (engines/vllm/attention_biases)
             refused_when=(
                 ("use_bias", "biases on every projection and MLP (use_bias: o_proj, MLPs and shared experts too)"),
                 ("moe_shared_expert_intermediate_size", "shared experts of their own width (moe_shared_expert_"
                                                         "intermediate_size)"),
             ))  # fmt: skip
QK_NORM = Attention(qk_norm=True)
MTP = ("num_nextn_predict_layers",)
QWEN_MOE = Moe(
    "num_experts",
    shared=Shared(size_field="shared_expert_intermediate_size", gate=True),
    placement=SparseStep(),
)

MOE: tuple[Architecture, ...] = (
    # IQuest-Q1 (SGLang 0.5.23 models/iquest_q1.py): layers from first + block × count + last (RepeatedBlock); q/k
    # norms per head; a sink key per KV head (sink_k, enable_sink_attention); three norms a layer (attention_norm,
    # attn_out_norm, feed_forward_norm) and layer 0's ffn_out_norm; dense MLPs of dense_intermediate_size on
    # mlp_only_layers (absent: [0]), elsewhere experts of intermediate_size behind a bias-free fp32 router
    A("iquest_q1", "IQuestQ1Config", "SGLang 0.5.23 srt/configs/iquest_q1.py", m.IQUEST_Q1, ("IQuestQ1ForCausalLM",),
      layers=RepeatedBlock(), geometry=Geometry(intermediate="dense_intermediate_size"),
      attention=Attention(qk_norm=True, sink_keys_field="enable_sink_attention"),
      body=BodyShape(norms_per_layer=3, first_layer_norms=1),
      moe=Moe("num_experts", expert_size_field="intermediate_size", placement=SparseStep(dense_absent=(0,)),
              router_fp32=True),
      mtp_fields=("num_mtp_layers",)),
    # Moondream3's language model (vLLM 0.33.0 models/moondream3.py): a parallel block behind one LayerNorm (weight
    # and bias); qkv_proj and out_proj biased; tau scaling (tau_alpha, tau_wq, tau_wv) per head; an ungated GELU MLP
    # (fc1, fc2, biased) below moe.start_layer, GeGLU experts (fc1 2 × inner, fc2) from it behind a router with a
    # bf16 bias; post_ln with a bias; lm_head with a bias. Moondream3Config builds the text model from `config.text`
    # and writes its shape at the top level when saved: kvtop reads the top level with the class defaults, and
    # refuses a config whose `config.text` states settings (not read); its vision encoder and projection: towers_moondream
    A("moondream3", "Moondream3Config", "vLLM 0.33.0 transformers_utils/configs/moondream3.py", m.MOONDREAM3,
      ("Moondream3ForCausalLM",), attention=Attention(qkv_bias=True), mlp_gated=False,
      body=BodyShape(norms_per_layer=1, norm_bias=True, o_bias=True, mlp_bias=True, lm_head_bias=True,
                     tau_scaling=True),
      moe=Moe("moe_num_experts", per_token_field="moe_topk", placement=FirstDense(), router_bias=True,
              router_bias_fp32=False, gated_experts=True),
      refused_when=(("config.text", "Moondream3's text settings under config.text (vLLM's Moondream3TextConfig)"),),
      tower=t.MOONDREAM3),
    # HunYuan MoE (SGLang 0.5.23 models/hunyuan.py): a dense MLP of intermediate_size where num_experts is 1 (the
    # class default; _is_moe asks > 1); else experts of moe_intermediate_size on every layer, moe_topk a token, a
    # bias-free router in the model dtype, and num_shared_expert × intermediate_size shared where use_mixed_mlp_moe;
    # q/k norms where use_qk_norm; cross-layer attention (use_cla: layers reading another's KV) refused by name
    A("hunyuan_v1_moe", "HunYuanMoEV1Config", tf("hunyuan_v1_moe"), m.HUNYUAN_V1_MOE, ("HunYuanMoEV1ForCausalLM",),
      moe=Moe("num_experts", per_token_field="moe_topk", dense_at_most=1,
              shared=Shared(size_field="intermediate_size", count_field="num_shared_expert",
                            when_field="use_mixed_mlp_moe")),
      refused_when=(("use_cla", "cross-layer attention (layers reading another layer's KV, cla_share_factor)"),)),
    # Hunyuan-V3 (vLLM 0.33.0 models/hy_v3.py, SGLang 0.5.23 models/hunyuan_v3.py): GQA attention with q/k norms
    # where qk_norm; a dense MLP below first_k_dense_replace, above it experts with num_shared_experts × their width
    # shared, an fp32 gate and fp32 expert_bias; vLLM sizes the experts by expert_hidden_dim, SGLang by
    # moe_intermediate_size (refused where both are stated and differ)
    A("hy_v3", "HYV3Config", tf("hy_v3"), m.HYV3, ("HYV3ForCausalLM",), attention=Attention(qk_norm_field="qk_norm"),
      moe=Moe("num_experts", shared=Shared(count_field="num_shared_experts"), placement=FirstDense(),
              router_bias=True, router_fp32=True),
      engine_read_fields=("route_norm", "first_k_dense_replace", "expert_hidden_dim"),
      refused_unequal=(("expert_hidden_dim", "moe_intermediate_size",
                        "experts sized by expert_hidden_dim on vLLM, by moe_intermediate_size on SGLang"),)),
    A("mixtral", "MixtralConfig", tf("mixtral"), d.MIXTRAL, ("MixtralForCausalLM", "QuantMixtralForCausalLM"),
      moe=Moe("num_local_experts", expert_size_field="intermediate_size")),
    A("qwen2_moe", "Qwen2MoeConfig", tf("qwen2_moe"), d.QWEN2_MOE, ("Qwen2MoeForCausalLM",),
      layers=Qwen2Window(moe=True), moe=QWEN_MOE),
    A("qwen3_moe", "Qwen3MoeConfig", tf("qwen3_moe"), d.QWEN3_MOE, ("Qwen3MoeForCausalLM",),
      attention=QK_NORM, moe=QWEN_MOE),
    # Flint (vLLM 0.33.0 models/flint/model.py; SGLang 0.5.23 registers none): Qwen3-MoE's layers (qkv bias from
    # attention_bias, q/k norms of head_dim) with a learned fp32 sink logit per head (FlintAttention:
    # make_attention_sink(heads of the rank, float32)), sliding layers from layer_types; experts behind a bf16 router
    # (GateLinear) beside one ungated shared expert of shared_expert_intermediate_size (FlintSparseMoeBlock), a dense
    # MLP of intermediate_size on mlp_only_layers. Built on FlashInfer only (Blackwell: registry_sweep.CLASS_GPUS).
    A("flint", "FlintConfig", "vLLM 0.33.0 vllm/models/flint/configs.py", d.FLINT, ("FlintForCausalLM",),
      attention=Attention(qk_norm=True, sinks=True), body=BodyShape(sinks_fp32=True),
      moe=Moe("num_experts", shared=Shared(size_field="shared_expert_intermediate_size"), placement=SparseStep())),
    # Intern-S1-Pro's language model (vLLM 0.33.0 models/interns1_pro.py InternS1ProMoeLLMForCausalLM, a
    # Qwen3MoeForCausalLM): Qwen3-MoE's layers (q/k norms, experts behind a bf16 router, no shared expert) with FoPE
    # (architectures/fope.py: cos_coef and sin_coef once a stage); SGLang 0.5.23 cannot build the class (refused)
    A("interns1_pro_text", "InternS1ProTextConfig", "internlm/Intern-S1-Pro configuration_interns1_pro.py",
      m.INTERNS1_PRO_TEXT, ("InternS1ProForConditionalGeneration",), attention=Attention(qk_norm=True, fope=True),
      moe=QWEN_MOE, tower=t.INTERNS1_PRO),
    A("qwen3_vl_moe_text", "Qwen3VLMoeTextConfig", tf("qwen3_vl_moe"), d.QWEN3_VL_MOE_TEXT,
      ("Qwen3VLMoeForConditionalGeneration",), attention=QK_NORM, moe=QWEN_MOE, tower=t.QWEN3_VL_MOE),
    A("llama4_text", "Llama4TextConfig", tf("llama4"), d.LLAMA4_TEXT,
      ("Llama4ForCausalLM", "Llama4ForConditionalGeneration"), layers=ChunkedNoRope(), chunked_local=True,
      geometry=Geometry(intermediate="intermediate_size_mlp"), attention=Attention(qk_norm_field=None),
      moe=Moe("num_local_experts", expert_size_field="intermediate_size", shared=Shared(same_as_expert=True),
              placement=Interleaved())),
    A("gpt_oss", "GptOssConfig", tf("gpt_oss"), d.GPT_OSS, ("GptOssForCausalLM",), layers=Alternate(),
      attention=Attention(qkv_bias=True, sinks=True), body=BodyShape(o_bias=True),
      moe=Moe("num_local_experts", expert_size_field="intermediate_size", expert_bias=True, router_bias=True,
              router_bias_fp32=False)),
    # DBRX (vLLM dbrx.py): its shape under d_model / n_heads / n_layers, KV heads and experts in nested sections
    # (attn_config.kv_n_heads; ffn_config's ffn_hidden_size, moe_num_experts, moe_top_k); Wqkv and out_proj without
    # biases; gated experts (w1, v1, w2) on every layer behind a bias-free router; norm_1, norm_2 and norm_f are
    # nn.LayerNorm, which keeps a bias vLLM allocates though the checkpoint has none; the LM head never tied
    A("dbrx", "DbrxConfig", tf("dbrx"), m.DBRX, ("DbrxForCausalLM",),
      geometry=Geometry(kv_heads="attn_config.kv_n_heads", head_dim=None, intermediate="ffn_config.ffn_hidden_size"),
      moe=Moe("ffn_config.moe_num_experts", per_token_field="ffn_config.moe_top_k",
              expert_size_field="ffn_config.ffn_hidden_size"),
      body=BodyShape(norm_bias=True)),
    # GLM-4.5/4.6/4.7: DeepSeek's expert layout, the gate and its bias in fp32 in both engines (Glm4MoeGate,
    # GateLinear params_dtype float32); q, k, v biases (attention_bias), q/k norms where use_qk_norm; MTP layers
    A("glm4_moe", "Glm4MoeConfig", tf("glm4_moe"), m.GLM4_MOE, ("Glm4MoeForCausalLM",),
      moe=Moe("n_routed_experts", shared=Shared(count_field="n_shared_experts"), placement=FirstDense(),
              router_bias=True, router_fp32=True), mtp_fields=MTP),
    A("glm4v_moe_text", "Glm4vMoeTextConfig", tf("glm4v_moe"), m.GLM4V_MOE_TEXT, ("Glm4vMoeForConditionalGeneration",),
      moe=Moe("n_routed_experts", shared=Shared(count_field="n_shared_experts"), placement=FirstDense(),
              router_bias=True, router_fp32=True), mtp_fields=MTP, tower=t.GLM4V),
    # MiniMax-M2: q/k norms over all heads split over TP (MiniMaxText01RMSNormTP); experts on every layer, the
    # gate in fp32 with an fp32 routing bias (use_routing_bias); MTP modules not loaded
    A("minimax_m2", "MiniMaxM2Config", tf("minimax_m2"), m.MINIMAX_M2, ("MiniMaxM2ForCausalLM",),
      attention=QK_NORM, body=BodyShape(qk_norm_width="all_split"),
      moe=Moe("num_local_experts", expert_size_field="intermediate_size",
              shared=Shared(size_field="shared_intermediate_size"), router_bias_when=("use_routing_bias", True),
              router_fp32=True)),
    # MiniMax-M3: GQA on every layer, a lightning indexer (its bf16 index key cached) on the layers
    # sparse_attention_config marks; per-head q/k norms; experts where moe_layer_freq says, dense layers of
    # dense_intermediate_size (vLLM models/minimax_m3: FullAttentionSpec + MiniMaxM3IndexerCache)
    A("minimax_m3", "MiniMaxM3Config (vLLM transformers_utils/configs/minimax_m3.py)",
      "vllm-project/vllm vllm/transformers_utils/configs/minimax_m3.py", m.MINIMAX_M3,
      ("MiniMaxM3ForCausalLM", "MiniMaxM3SparseForCausalLM", "MiniMaxM3SparseForConditionalGeneration"),
      geometry=Geometry(intermediate="dense_intermediate_size"), attention=QK_NORM, sparse_index=SparseIndex(),
      moe=Moe("num_local_experts", expert_size_field="intermediate_size", shared=Shared(count_field="n_shared_experts"),
              placement=FirstDense(), router_bias_when=("use_routing_bias", True), router_fp32=True)),
    # MiMo-V2-Flash: sliding layers (hybrid_layer_pattern 1) with their own heads and dims and a sink per head;
    # K 192 / V 128 wide; experts where moe_layer_freq (a list) says, the gate in fp32; MiMo-V2.5's checkpoint
    # fuses q|k|v in K|V chunks (attention_projection_layout fused_qkv: vLLM 0.33.0 mimo_v2.py); MiMoV2OmniForCausalLM
    # (vLLM 0.33.0 mimo_v2_omni.py) is this language model beside the towers towers_mimo.py describes; the window is
    # `sliding_window_size`, as both engines read it (vLLM 0.33.0 mimo_v2.py:416, SGLang 0.5.23 mimo_v2.py:891; no
    # default: config.sliding_window_size), never transformers' `sliding_window` (its class sets it to size + 1)
    A("mimo_v2_flash", "MiMoV2FlashConfig", tf("mimo_v2_flash"), m.MIMO_V2_FLASH,
      ("MiMoV2FlashForCausalLM", "MiMoV2ForCausalLM", "MiMoV2OmniForCausalLM"), layers=PerLayerFlags(),
      window_field="sliding_window_size",
      attention=Attention(fused_qkv_field="attention_projection_layout"),
      kind_geometry=(KindGeometry(LayerKind.SLIDING, heads="swa_num_attention_heads",
                                  kv_heads="swa_num_key_value_heads", head_dim="swa_head_dim",
                                  v_head_dim="swa_v_head_dim", sinks_field="add_swa_attention_sink_bias"),
                     KindGeometry(LayerKind.FULL, v_head_dim="v_head_dim")),
      moe=Moe("n_routed_experts", shared=Shared(count_field="n_shared_experts"), placement=FirstDense(),
              router_bias=True, router_fp32=True), mtp_fields=MTP),
    # Step-3.5/3.7 Flash: per-head q/k norms, sliding layers from layer_types; a shared expert (share_expert_dim);
    # the experts counted by AIC's num_experts, transformers' Step3p7TextConfig n_routed_experts or the published
    # moe_num_experts / moe_top_k; one shared expert share_expert_dim wide whatever n_shared_experts says (both
    # engines' step3p5.py: share_expert = Step3p5MLP(intermediate_size=share_expert_dim)); experts where
    # mlp_layer_types says "sparse" (vLLM's step3p5.py reads it first), else the published moe_layers_enum, else
    # dense below first_k_dense_replace (AIC's), absent 3 (transformers' Step3p7TextConfig range(3, n)); the router and its bias (use_moe_router_bias) fp32 (vLLM 0.33.0 models/step3p5.py
    # Step3p5MoE: gate ReplicatedLinear params_dtype float32, router_bias [experts] float32; meta build
    # default--Step3p5ForCausalLM: gate.weight [288, 4096] float32); under use_head_wise_attn_gate a g_proj per layer,
    # ColumnParallelLinear(hidden, heads) (both engines' step3p5.py Step3p5Attention); the sliding layers' heads from
    # the published attention_other_setting (vLLM _get_num_attention_heads, SGLang Step3p5DecoderLayer)
    A("step3p7", "Step3p7Config (SGLang configs/step3p7.py)", "sgl-project/sglang python/sglang/srt/configs/step3p5.py",
      {}, ("Step3p7FlashForCausalLM", "Step3p7ForConditionalGeneration", "Step3p5ForCausalLM"),
      attention=Attention(qk_norm=True, head_gate_field="use_head_wise_attn_gate"),
      kind_geometry=(KindGeometry(LayerKind.SLIDING, heads="attention_other_setting.num_attention_heads",
                                  kv_heads="attention_other_setting.num_attention_groups",
                                  head_dim="attention_other_setting.head_dim"),),
      moe=Moe("num_experts", shared=Shared(size_field="share_expert_dim"),
              placement=LayerTypes(absent=IndexList(absent=FirstDense(default_first=3))),
              router_bias_when=("use_moe_router_bias", True), router_fp32=True,
              aliases=(("num_experts", ("n_routed_experts", "moe_num_experts")), ("num_experts_per_tok", ("moe_top_k",)))),
      mtp_fields=MTP, tower=t.STEP3P7),  # Step3p7ForConditionalGeneration's vision_config (towers_step)
    # OLMoE: q/k norms over all heads; experts on every layer
    A("olmoe", "OlmoeConfig", tf("olmoe"), m.OLMOE, ("OlmoeForCausalLM",), attention=QK_NORM,
      body=BodyShape(qk_norm_width="all"), moe=Moe("num_experts", expert_size_field="intermediate_size")),
    A("flex_olmo", "FlexOlmoConfig", tf("flex_olmo"), m.FLEX_OLMO, ("FlexOlmoForCausalLM",), attention=QK_NORM,
      body=BodyShape(qk_norm_width="all"), moe=Moe("num_experts", expert_size_field="intermediate_size")),
    # Phi-3.5-MoE: LayerNorm with biases, q, k, v, o biases (attention_bias), an lm_head bias whatever the config
    # says (ParallelLMHead(bias=True): vLLM 0.33.0 and SGLang 0.5.23 models/phimoe.py; the checkpoint's
    # lm_head_bias is true); vLLM builds the q, k, v, o biases whatever attention_bias says (SGLang follows it)
    A("phimoe", "PhimoeConfig", tf("phimoe"), m.PHIMOE, ("PhiMoEForCausalLM",),
      attention=Attention(o_bias_fields=("attention_bias",)), body=BodyShape(norm_bias=True, lm_head_bias=True),
      moe=Moe("num_local_experts", expert_size_field="intermediate_size")),
    A("granitemoe", "GraniteMoeConfig", tf("granitemoe"), m.GRANITEMOE, ("GraniteMoeForCausalLM",),
      moe=Moe("num_local_experts", expert_size_field="intermediate_size")),
    A("granitemoeshared", "GraniteMoeSharedConfig", tf("granitemoeshared"), m.GRANITEMOESHARED,
      ("GraniteMoeSharedForCausalLM", "GraniteMoeSWAForCausalLM"),
      moe=Moe("num_local_experts", expert_size_field="intermediate_size",
              shared=Shared(size_field="shared_intermediate_size"))),
    # Laguna (poolside): per-head q/k norms and an output gate per head (g_proj, `gating`), query heads per layer
    # (num_attention_heads_per_layer), sliding layers from layer_types; experts where mlp_layer_types says
    # "sparse", one shared expert (shared_expert_intermediate_size), the bf16 router with an fp32
    # e_score_correction_bias (vLLM 0.33.0 models/laguna.py LagunaAttention, LagunaMoE)
    A("laguna", "LagunaConfig", tf("laguna"), m.LAGUNA, ("LagunaForCausalLM",),
      attention=Attention(qk_norm=True, head_gate_field="gating", heads_per_layer_field="num_attention_heads_per_layer"),
      moe=Moe("num_experts", shared=Shared(size_field="shared_expert_intermediate_size"), placement=LayerTypes(),
              router_bias=True)),
    # AFMoE (Arcee's Trinity; vLLM 0.33.0 / SGLang 0.5.23 models/afmoe.py): per-head q/k norms, a gate_proj
    # (hidden -> heads x head_dim, column-parallel: q_proj's output gate in bytes), full attention on every
    # global_attn_every_n_layers-th layer, sliding between (AfmoeConfig's layer_types); four norms a layer; dense
    # below num_dense_layers, then num_experts of moe_intermediate_size, num_shared_experts in one shared MLP, the
    # gate and its expert_bias in fp32 (vLLM's meta build: gate.weight [64, 2048] and expert_bias [64] float32)
    A("afmoe", "AfmoeConfig", tf("afmoe"), m.AFMOE, ("AfmoeForCausalLM",),
      layers=EveryNthFull(every_field="global_attn_every_n_layers", every=4),
      attention=Attention(qk_norm=True, output_gate=True), body=BodyShape(norms_per_layer=4),
      moe=Moe("num_experts", shared=Shared(count_field="num_shared_experts"),
              placement=FirstDense(first_field="num_dense_layers"), router_bias=True, router_fp32=True)),
    # ERNIE 4.5 MoE: experts over an index range; biases where use_bias; the gate in fp32 with a bias
    A("ernie4_5_moe", "Ernie4_5_MoeConfig", tf("ernie4_5_moe"), m.ERNIE4_5_MOE, ("Ernie4_5_MoeForCausalLM",),
      attention=Attention(bias_fields=("use_bias",), o_bias_fields=("use_bias",)), mlp_bias_fields=("use_bias",),
      moe=Moe("moe_num_experts", per_token_field="moe_k", shared=Shared(count_field="moe_num_shared_experts"),
              placement=IndexRange(), router_bias=True, router_fp32=True)),
    # ERNIE-4.5-VL (the checkpoint's own format, Ernie4_5_VLMoEConfig): ERNIE 4.5 MoE's layers with two expert groups
    # a layer, text and vision, given as [text, vision] lists (vLLM 0.33.0 ernie45_vl_moe.py Ernie4_5_VLMoeMoE, SGLang
    # 0.5.23 ernie45_moe_vl.py: text_experts and vision_experts FusedMoE, an fp32 gate each, e_score_correction_bias
    # [2, experts] in fp32, shared experts moe_num_shared_experts × the text width); the DFNRope tower and resampler
    # (towers_ernie45_vl). The vision note stays only where the tower does not read
    A("ernie4_5_moe_vl", "Ernie4_5_VLMoEConfig (remote code)", "baidu/ERNIE-4.5-VL-28B-A3B-PT configuration code",
      m.ERNIE4_5_MOE, ("Ernie4_5_VLMoeForConditionalGeneration",),
      attention=Attention(bias_fields=("use_bias",), o_bias_fields=("use_bias",)), mlp_bias_fields=("use_bias",),
      moe=Moe("moe_num_experts", per_token_field="moe_k", shared=Shared(count_field="moe_num_shared_experts"),
              placement=IndexRange(), router_bias=True, router_fp32=True, groups=True),
      tower=t.ERNIE45_VL, not_modelled=(VISION_NOT_MODELLED,)),
    # DeepSeek-MoE (v1): standard attention, DeepSeek's experts
    A("deepseek", "DeepseekConfig (remote code)", "deepseek-ai/deepseek-moe-16b-base configuration_deepseek.py",
      d.DEEPSEEK_V2, ("DeepseekForCausalLM",),
      moe=Moe("n_routed_experts", shared=Shared(count_field="n_shared_experts"), placement=FirstDense())),
    # EXAONE-MoE: EXAONE-4's attention (q/k norms, LLLG), DeepSeek-style experts from first_k_dense_replace; the
    # router in the model dtype, its score correction in fp32 (vLLM 0.33.0 models/exaone_moe.py GateLinear, SGLang
    # 0.5.23 models/exaone_moe.py ReplicatedLinear: neither gives the gate an fp32 params_dtype)
    A("exaone_moe", "ExaoneMoeConfig", tf("exaone_moe"), m.EXAONE_MOE, ("ExaoneMoeForCausalLM", "ExaoneMoEForCausalLM"),
      layers=EveryNthFull(), attention=QK_NORM,
      moe=Moe("num_experts", shared=Shared(count_field="num_shared_experts"), placement=FirstDense(),
              router_bias=True), mtp_fields=MTP),
    # Command-A MoE: Cohere-2's attention (3 sliding then 1 full) and one LayerNorm for the parallel block; experts
    # as wide as intermediate_size, num_shared_experts of them in one shared MLP (vLLM 0.33.0 and SGLang 0.5.23
    # models/cohere2_moe.py: input_layernorm only, a ReplicatedLinear gate); Cohere-2's window convention (vLLM 0.33.0
    # cohere2_moe.py:256: its spec at sliding_window + 1)
    A("cohere2_moe", "Cohere2MoeConfig", tf("cohere2_moe"), m.COHERE2_MOE, ("Cohere2MoeForCausalLM",),
      layers=EveryNthFull(every=4), body=BodyShape(norms_per_layer=1), window_excludes_query=True,
      moe=Moe("num_experts", expert_size_field="intermediate_size", shared=Shared(count_field="num_shared_experts"),
              placement=SparseOnly())),
    # Gemma-4: global layers with their own KV heads and head size (V = K where attention_k_eq_v); the last
    # num_kv_shared_layers read earlier layers' KV; experts (where num_experts) run beside the dense MLP; per-layer
    # embeddings where hidden_size_per_layer_input (vLLM 0.33.0 / SGLang 0.5.23 gemma4 PLE); per_layer_config's
    # head_dim per layer (transformers 5.20's form of the global layers' size); use_double_wide_mlp: the KV-shared
    # layers' MLP twice as wide (layer_rules.kv_shared_widths, both engines' every Gemma-4 release)
    A("gemma4_text", "Gemma4TextConfig", tf("gemma4"), m.GEMMA4_TEXT,
      ("Gemma4ForCausalLM", "Gemma4ForConditionalGeneration"), layers=EveryNthFull(), attention=QK_NORM,
      kind_geometry=(KindGeometry(LayerKind.FULL, kv_heads="num_global_key_value_heads", head_dim="global_head_dim",
                                  k_eq_v_field="attention_k_eq_v"),),
      kv_shared_field="num_kv_shared_layers", kv_shared_wide_field="use_double_wide_mlp",
      body=BodyShape(norms_per_layer=4),
      moe=Moe("num_experts", per_token_field="top_k_experts", shared=Shared(dense_beside=True), optional=True,
              extra_norms=4, per_expert_scale=True),  # pre/post-feedforward norms 1 and 2, router scale
      per_layer_input_field="hidden_size_per_layer_input", per_layer_vocab_field="vocab_size_per_layer_input",
      per_layer_config_field="per_layer_config"),
    # Gemma-3n's text model (vLLM 0.33.0 gemma3n.py, SGLang 0.5.23 gemma3n_causal.py): Gemma-3's attention with
    # q/k norms (v_norm weightless), four norms a layer, per-layer embeddings (hidden_size_per_layer_input), the last
    # num_kv_shared_layers reading earlier layers' KV, a per-layer intermediate_size; a laurel block and AltUp on every
    # layer and AltUp's projections around the stack (BodyShape.laurel_rank / altup_inputs)
    A("gemma3n_text", "Gemma3nTextConfig", tf("gemma3n"), m.GEMMA3N_TEXT, ("Gemma3nForCausalLM",),
      layers=EveryNthFull(every_field=None, every=5), attention=QK_NORM, kv_shared_field="num_kv_shared_layers",
      body=BodyShape(norms_per_layer=4), per_layer_input_field="hidden_size_per_layer_input",
      per_layer_vocab_field="vocab_size_per_layer_input", laurel_field="laurel_rank", altup_field="altup_num_inputs"),
    # Gemma-4 Unified's text model (the encoder-free Gemma-4): the same decoder without experts or per-layer input
    # in transformers' own config; SGLang 0.5.23 reads it as Gemma4Config, whose defaults add per-layer input;
    # its decoder is gemma4.py's (vLLM 0.33.0 gemma4_unified.py:34 builds Gemma4ForCausalLM), double-wide MLP and all
    # (engines/sglang/weights_classes.py)
    A("gemma4_unified_text", "Gemma4UnifiedTextConfig", tf("gemma4_unified"), m.GEMMA4_UNIFIED_TEXT,
      ("Gemma4UnifiedForConditionalGeneration",), layers=EveryNthFull(), attention=QK_NORM,
      kind_geometry=(KindGeometry(LayerKind.FULL, kv_heads="num_global_key_value_heads", head_dim="global_head_dim",
                                  k_eq_v_field="attention_k_eq_v"),),
      kv_shared_field="num_kv_shared_layers", kv_shared_wide_field="use_double_wide_mlp",
      body=BodyShape(norms_per_layer=4),
      per_layer_input_field="hidden_size_per_layer_input", per_layer_vocab_field="vocab_size_per_layer_input",
      per_layer_config_field="per_layer_config"),
    # Ling / Ling 2.0 (model_type bailing_moe; vLLM 0.33.0 and SGLang 0.5.23 models/bailing_moe.py, SGLang's base class
    # BailingMoEForCausalLM): fused query_key_value biased where use_qkv_bias; q/k norms per head where
    # use_qk_norm; dense MLPs below first_k_dense_replace, then num_experts experts of moe_intermediate_size and
    # num_shared_experts × moe_intermediate_size shared; an fp32 expert_bias [num_experts] beside the router where
    # moe_router_enable_expert_bias (both engines' BailingMoE gate). No class defaults: the two published classes
    # under this model type differ (Ling-plus's BailingMoeConfig defaults use_bias True, Ling 2.0's BailingMoeV2Config
    # False), so what kvtop reads must be stated. The main class builds no MTP layer (the NextN class is the draft).
    bailing("bailing_moe", "BailingMoeConfig / BailingMoeV2Config",
            "vLLM 0.33.0 / SGLang 0.5.23 models/bailing_moe.py; the checkpoints' configuration_bailing_moe(_v2).py",
            ("BailingMoeForCausalLM", "BailingMoeV2ForCausalLM", "BailingMoEForCausalLM")),  # the last SGLang's base
    # Param2 (model_type param2moe; vLLM 0.33.0 models/param2moe.py, SGLang 0.5.23 has no class): Bailing's layout
    # with its own router: the gate [num_experts, hidden] and its e_score_correction_bias [num_experts] in float32
    # (GateLinear params_dtype float32), the bias unless moe_router_enable_expert_bias is false; shared experts
    # moe_shared_expert_intermediate_size wide in all, else num_shared_experts × moe_intermediate_size; q/k RMSNorms
    # where use_qk_norm. Defaults: vLLM param2moe.py's getattr defaults
    A("param2moe", "the checkpoint's configuration class (remote code)", "vLLM 0.33.0 models/param2moe.py",
      {"first_k_dense_replace": 1, "moe_router_enable_expert_bias": True, "num_shared_experts": 1,
       "use_qk_norm": False, "use_qkv_bias": False, "tie_word_embeddings": False},
      ("Param2MoEForCausalLM",), attention=Attention(bias_fields=("use_qkv_bias",)),
      moe=Moe("num_experts", shared=Shared(size_field="moe_shared_expert_intermediate_size",
                                           count_field="num_shared_experts", total_else_count=True),
              placement=FirstDense(), router_bias_when=("moe_router_enable_expert_bias", True), router_fp32=True),
      mtp_fields=(), refused_when=(("use_bias", "an o_proj bias (use_bias: vLLM's Param2MoEAttention)"),)),
    # K2-Horizon (model_type k2_horizon; vLLM 0.33.0 models/k2_horizon.py, SGLang 0.5.23 models/xllm.py over its
    # configs/k2_horizon.py shell: the checkpoint's config.json holds every size): GQA (qkv, o_proj; partial RoPE of
    # rope_head_dim, no weights), a dense MLP of intermediate_size on mlp_only_layers, elsewhere (every
    # decoder_sparse_step-th) num_experts experts and num_shared_experts × moe_intermediate_size shared behind a
    # router in the model dtype (vLLM GateLinear, SGLang XllmMoEGate) with an fp32 bias where moe_gate_bias. Grouped
    # norms (layernorm_num_groups) hold hidden_size weights whatever the groups (vLLM K2HorizonRMSNorm, SGLang
    # XllmGroupRMSNorm): read as plain norms. Not read, refused by name: MoVA value experts, the attention gate and
    # per-head q/k norms (the published IFM/K2-Horizon-375B-A23B states none of them)
    A("k2_horizon", "the checkpoint's config (SGLang 0.5.23 configs/k2_horizon.py K2HorizonConfig, an empty shell)",
      "vLLM 0.33.0 models/k2_horizon.py; SGLang 0.5.23 models/xllm.py", {}, ("K2HorizonForCausalLM",),
      moe=XLLM_MOE, mtp_fields=(),
      refused_when=(
          ("attention_gate_func", "an attention output gate (attention_gate_func: gate_proj hidden → heads × "
                                  "head_dim, vLLM 0.33.0 k2_horizon.py K2HorizonAttention)"),
          ("query_key_norm", "q/k norms with a weight per head (query_key_norm)"),
      ),
      refused_over=(("mova_num_experts", 0, "value experts (MoVA: mova_num_experts routed value projections and a "
                                            "v_router a layer, vLLM 0.33.0 K2HorizonMoVAAttention)"),)),
    # xLLM (model_type xllm, SGLang 0.5.23 models/xllm.py XllmForCausalLM over configs/k2_horizon.py's XllmConfig, an
    # empty shell): the module K2-Horizon's is, read by the same fields (XLLM_MOE); xllm.py's own spellings of what
    # it refuses on its plain path (_validate_mova_config: "Legacy K2 checkpoints use model_type=xllm for the
    # ordinary attention path"): MoVA value experts num_values, the attention gate apply_attn_gate, q/k norms
    A("xllm", "the checkpoint's config (SGLang 0.5.23 configs/k2_horizon.py XllmConfig, an empty shell)",
      "SGLang 0.5.23 models/xllm.py", {}, ("XllmForCausalLM",), moe=XLLM_MOE, mtp_fields=(),
      refused_when=(
          ("apply_attn_gate", "an attention output gate (apply_attn_gate: SGLang 0.5.23 xllm.py XllmGatedAttention)"),
          ("query_key_norm", "q/k norms with a weight per head (query_key_norm)"),
      ),
      refused_over=(("num_values", 0, "value experts (MoVA: num_values routed value projections a layer, SGLang "
                                      "0.5.23 xllm.py XllmMoVAAttention)"),)),
    # Sarvam-30B (model_type sarvam_moe): both engines' SarvamMoEForCausalLM is their Bailing class (vLLM 0.33.0
    # models/sarvam.py subclasses BailingMoeForCausalLM, renaming the gate's expert bias on load; SGLang 0.5.23
    # models/sarvam_moe.py BailingMoEForCausalLM), so Bailing's reading: the same fields, biases and refusals
    bailing("sarvam_moe", "the checkpoint's configuration class (remote code)",
            "vLLM 0.33.0 models/sarvam.py, bailing_moe.py; SGLang 0.5.23 models/sarvam_moe.py, bailing_moe.py",
            ("SarvamMoEForCausalLM",)),
    # XVERSE-MoE (SGLang 0.5.23 models/xverse_moe.py XverseMoeForCausalLM; vLLM 0.33.0 registers no such class): MHA
    # (num_key_value_heads, else num_attention_heads) on every layer, head_dim hidden_size // heads, no biases; on
    # every layer num_experts experts intermediate_size wide (XverseMLP each, split by TP), moe_top_k a token, a
    # bias-free router [num_experts, hidden] in the model dtype, and one shared MLP num_shared_experts ×
    # intermediate_size wide. Read by class: the checkpoints' model_type is xverse, which the dense XVERSE models
    # (XverseForCausalLM, read as llama) share. Defaults: XverseConfig's (the checkpoint's configuration_xverse.py)
    A("xverse_moe", "XverseConfig (the checkpoint's configuration_xverse.py, remote code)",
      "SGLang 0.5.23 models/xverse_moe.py; xverse/XVERSE-MoE-A4.2B configuration_xverse.py",
      {"vocab_size": 100278, "hidden_size": 5120, "intermediate_size": 13824, "num_hidden_layers": 40,
       "num_attention_heads": 40, "num_key_value_heads": None, "max_position_embeddings": 8192,
       "tie_word_embeddings": False, "attention_bias": False, "moe_top_k": 6, "num_experts": 64,
       "num_shared_experts": 2},
      ("XverseMoeForCausalLM",),
      moe=Moe("num_experts", per_token_field="moe_top_k", expert_size_field="intermediate_size",
              shared=Shared(count_field="num_shared_experts")),
      mtp_fields=()),
)  # fmt: skip

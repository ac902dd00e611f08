"""More dense decoders: Llama-shaped families with their own names, norms, biases or window patterns.

Sources: each family's config class and modeling file in transformers v5.24.0, or its remote code where it
has no transformers class (named in the entry), and the engines' model files for what they load.
"""

from __future__ import annotations

from kvtop.domain.architectures import defaults as d
from kvtop.domain.architectures import defaults_legacy as legacy
from kvtop.domain.architectures import defaults_more as m
from kvtop.domain.architectures import towers_catalog as t
from kvtop.domain.architectures.defaults import tf
from kvtop.domain.architectures.description import Architecture, Attention, Geometry
from kvtop.domain.architectures.layer_rules import DeciBlocks, EveryNthFull, Qwen2Window
from kvtop.domain.architectures.moe_rules import Moe, Shared
from kvtop.domain.architectures.reader import VISION_NOT_MODELLED
from kvtop.domain.model import BodyShape, LayerKind

A = Architecture
AUDIO_NOT_MODELLED = "audio encoder weights (Whisper encoder and its projection; not in the weights book)"
QK_NORM = Attention(qk_norm=True)
POST_NORMS = BodyShape(norms_per_layer=4)  # pre and post norms around attention and MLP
LAYERNORM = BodyShape(norm_bias=True)
MTP = ("num_nextn_predict_layers",)
MOLMO_TIED = ("a weight-tied Molmo (vLLM 0.33.0 molmo.py ties its head to self.model.transformer.wte, which its "
              "MolmoModel lacks: it does not build)")
PHI4MM_AUDIO = "audio encoder weights (Phi-4-multimodal's conformer and its projections; not in the weights book)"

DENSE_MORE: tuple[Architecture, ...] = (
    # GLM-4-0414: input, post-attention, post-self-attention and post-MLP norms; q, k, v biases (attention_bias)
    A("glm4", "Glm4Config", tf("glm4"), m.GLM4, ("Glm4ForCausalLM",), body=POST_NORMS),
    A("glm4v_text", "Glm4vTextConfig", tf("glm4v"), m.GLM4V_TEXT, ("Glm4vForConditionalGeneration",),
      attention=Attention(qkv_bias=True), body=POST_NORMS, tower=t.GLM4V),
    # MiMo-7B: Qwen2's modules (q, k, v biases) and MTP layers (loaded only for speculative decoding)
    A("mimo", "MiMoConfig (remote code)", "XiaomiMiMo/MiMo-7B-Base configuration_mimo.py", d.QWEN2,
      ("MiMoForCausalLM",), layers=Qwen2Window(), attention=Attention(qkv_bias=True), mtp_fields=MTP),
    # MiniCPM-o 2.6: Qwen2's language model (MiniCPMOConfig subclasses Qwen2Config; vLLM 0.33.0 minicpmo.py and SGLang
    # 0.5.23 minicpmo.py build Qwen2ForCausalLM as `llm`: q, k, v biases) beside a SigLIP tower + resampler and a
    # Whisper audio encoder + projection, counted as its tower (towers_minicpm.minicpm_o; the note where not read)
    A("minicpmo", "MiniCPMOConfig (remote code)", "openbmb/MiniCPM-o-2_6 configuration_minicpm.py", d.QWEN2,
      ("MiniCPMO",), layers=Qwen2Window(), attention=Attention(qkv_bias=True), tower=t.MINICPM_O2_6,
      not_modelled=(AUDIO_NOT_MODELLED,)),
    # MiniCPM-V 2.6: the same Qwen2 language model and SigLIP + resampler, no audio (MiniCPMVConfig subclasses
    # Qwen2Config; vLLM 0.33.0 and SGLang 0.5.23 minicpmv.py MiniCPMV2_6). The model_type also names 2.0 (MiniCPM),
    # 2.5 (Llama-3: no `version`) and 4.x (Qwen3) language models, which both engines pick by `version`: refused
    A("minicpmv", "MiniCPMVConfig (remote code)", "openbmb/MiniCPM-V-2_6 configuration_minicpm.py", d.QWEN2,
      ("MiniCPMV",), layers=Qwen2Window(), attention=Attention(qkv_bias=True), tower=t.MINICPM_V2_6,
      refused_unless=(("version", "2.6", "MiniCPM-V 2.6's Qwen2 language model"),)),
    # Kimi-Audio: KimiAudioConfig subclasses Qwen2Config; vLLM 0.33.0 kimi_audio.py builds Qwen2ForCausalLM over the
    # config itself (q, k, v biases; its MIMO branch not built) beside a Whisper encoder sized from the checkpoint's
    # whisper-large-v3/config.json and the VQ adaptor (towers_kimi_audio: assumed whisper-large-v3's sizes, said so)
    A("moonshot_kimia", "KimiAudioConfig (remote code)", "moonshotai/Kimi-Audio-7B-Instruct configuration_moonshot_kimia.py",
      d.QWEN2, ("MoonshotKimiaForCausalLM",), layers=Qwen2Window(), attention=Attention(qkv_bias=True)),
    # FireRedASR2-LLM: vLLM 0.33.0 fireredasr2.py builds Qwen2ForCausalLM over the config itself (q, k, v biases)
    # beside a replicated Conformer encoder and adapter sized by `audio_encoder_conf` (towers_fireredasr2)
    A("fireredasr2", "FireRedASR2 config (remote code; Qwen2 fields)", "vLLM 0.33.0 model_executor/models/fireredasr2.py",
      d.QWEN2, ("FireRedASR2ForConditionalGeneration",), layers=Qwen2Window(), attention=Attention(qkv_bias=True),
      tower=t.FIREREDASR2),
    A("ministral3", "Ministral3Config", tf("ministral3"), m.MINISTRAL3, ("Ministral3ForCausalLM",)),
    A("smollm3", "SmolLM3Config", tf("smollm3"), m.SMOLLM3, ("SmolLM3ForCausalLM",)),
    # Seed-OSS: q, k, v biases (attention_bias), o_proj's own flag (attention_out_bias)
    A("seed_oss", "SeedOssConfig", tf("seed_oss"), m.SEED_OSS, ("SeedOssForCausalLM",)),
    # Apertus: per-head q/k norms; an ungated MLP (up, down: xIELU, whose alpha_p and alpha_n are [1] parameters in
    # the model dtype on every layer: XIELU in SGLang 0.5.23 layers/activation.py and vLLM 0.33.0's)
    A("apertus", "ApertusConfig", tf("apertus"), m.APERTUS, ("ApertusForCausalLM",), attention=QK_NORM,
      mlp_gated=False, body=BodyShape(mlp_scalars=2)),
    # Arcee (AFM): an ungated MLP (up, down: ReLU²)
    A("arcee", "ArceeConfig", tf("arcee"), m.ARCEE, ("ArceeForCausalLM",), mlp_gated=False),
    # Nemotron-4 / Minitron: LayerNorm1P (weight and bias), an ungated MLP, o_proj biased with attention_bias
    A("nemotron", "NemotronConfig", tf("nemotron"), m.NEMOTRON, ("NemotronForCausalLM",), mlp_gated=False,
      attention=Attention(o_bias_fields=("attention_bias",)), body=LAYERNORM),
    # Jais-2: LayerNorm with biases, an ungated MLP, q, k, v and o biased with attention_bias
    A("jais2", "Jais2Config", tf("jais2"), m.JAIS2, ("Jais2ForCausalLM",), mlp_gated=False,
      attention=Attention(o_bias_fields=("attention_bias",)), body=LAYERNORM),
    A("helium", "HeliumConfig", tf("helium"), m.HELIUM, ("HeliumForCausalLM",)),
    # EXAONE-4: q/k norms per head; post-attention and post-feedforward norms only; "LLLG" window letters
    A("exaone4", "Exaone4Config", tf("exaone4"), m.EXAONE4, ("Exaone4ForCausalLM",), layers=EveryNthFull(),
      attention=QK_NORM),
    # Cohere-2 / Command-A: Cohere's one LayerNorm for the parallel block; 3 sliding then 1 full; a sliding layer sees
    # [pos - sliding_window, pos] (vLLM 0.33.0 commandr.py:237-244: its spec at sliding_window + 1)
    A("cohere2", "Cohere2Config", tf("cohere2"), m.COHERE2, ("Cohere2ForCausalLM",),
      layers=EveryNthFull(every=4), body=BodyShape(norms_per_layer=1), window_excludes_query=True),
    # Cohere Compass (vLLM 0.33.0 cohere_compass.py CohereCompassDecoderLayer): Cohere's one weight-only LayerNorm for
    # the parallel block, qkv_proj and o_proj biased with attention_bias, a gated MLP (CohereMLP), no q/k norms;
    # full or sliding layers by layer_types (its class default: all full); the LM head tied (asserted); its vision
    # tower Qwen3-VL's (t.COHERE_COMPASS_VISION)
    A("cohere_compass_text", "CohereCompassTextConfig", "transformers 5.20.2 models/cohere_compass/"
      "configuration_cohere_compass.py; vLLM 0.33.0 cohere_compass.py", m.COHERE_COMPASS_TEXT,
      ("CohereCompassForConditionalGeneration",), attention=Attention(o_bias_fields=("attention_bias",)),
      body=BodyShape(norms_per_layer=1), tower=t.COHERE_COMPASS_VISION),
    # Spark-2.5 (SGLang 0.5.23 models/spark2_5.py Spark2_5Attention): Llama's modules with an output gate per head
    # (g_proj, hidden → heads, split with the heads, where headwise_attn_output_gate: its class default true); full
    # and sliding layers from layer_types (hybrid_layer_pattern is the class's copy of it: 1 sliding)
    A("spark2_5", "Spark2_5Config", "SGLang 0.5.23 srt/configs/spark2_5.py", m.SPARK2_5, ("Spark2_5ForCausalLM",),
      layers=EveryNthFull(every_field=None, every=4),
      attention=Attention(head_gate_field="headwise_attn_output_gate")),
    # HunYuan dense: per-head query/key layernorms
    A("hunyuan_v1_dense", "HunYuanDenseV1Config", tf("hunyuan_v1_dense"), m.HUNYUAN_V1_DENSE,
      ("HunYuanDenseV1ForCausalLM",), attention=QK_NORM),
    # ERNIE 4.5 (dense): every linear layer biased where use_bias
    A("ernie4_5", "Ernie4_5Config", tf("ernie4_5"), m.ERNIE4_5, ("Ernie4_5ForCausalLM", "Ernie4_5_ForCausalLM"),
      attention=Attention(bias_fields=("use_bias",), o_bias_fields=("use_bias",)), mlp_bias_fields=("use_bias",)),
    # MiniCPM (1/2): Llama's modules with scaled residuals (remote code: openbmb/MiniCPM-2B configuration_minicpm.py);
    # MiniCPM-MoE-8x2B: `num_experts` experts of intermediate_size each, every layer, a router in the model dtype,
    # each expert split over TP (vLLM 0.33.0 minicpm.py MiniCPMMoE: gate, ws, w2s); without num_experts a dense MLP
    A("minicpm", "MiniCPMConfig (remote code)", "openbmb/MiniCPM-2B-sft-bf16 configuration_minicpm.py", d.LLAMA,
      ("MiniCPMForCausalLM",),
      moe=Moe("num_experts", expert_size_field="intermediate_size", optional=True)),
    # XVERSE (XverseForCausalLM, model_type xverse): read as Llama, as before this entry. XVERSE-MoE-A4.2B's checkpoint
    # names this class too, with num_experts / moe_top_k / num_shared_experts (the fields table_moe's xverse_moe
    # reads): read here so an engine that builds the class dense refuses it by name (SGLang 0.5.23 models/xverse.py,
    # vLLM 0.13.0's LlamaForCausalLM); by class, so model_type xverse stays free for XverseMoeForCausalLM's reading
    A("xverse_dense", "LlamaConfig (the checkpoints' XverseConfig is remote code)", tf("llama"), d.LLAMA,
      ("XverseForCausalLM",),
      moe=Moe("num_experts", per_token_field="moe_top_k", expert_size_field="intermediate_size",
              shared=Shared(count_field="num_shared_experts"), optional=True)),
    # Baichuan-7B/13B: W_pack (q, k, v) without bias, RMSNorm (remote code; vLLM dropped it in 0.23)
    A("baichuan", "BaichuanConfig (remote code)", "baichuan-inc/Baichuan2-7B-Base configuration_baichuan.py",
      d.LLAMA, ("BaichuanForCausalLM", "BaiChuanForCausalLM"), geometry=Geometry(kv_heads=None)),
    # Qwen-1: c_attn (q, k, v) with a bias; the MLP's two halves are intermediate_size ÷ 2 wide
    A("qwen", "QWenConfig (remote code)", "Qwen/Qwen-7B configuration_qwen.py", d.QWEN2, ("QWenLMHeadModel",),
      geometry=Geometry(kv_heads=None, head_dim="kv_channels", intermediate_divisor=2),
      attention=Attention(qkv_bias=True)),
    # EXAONE-3.0/3.5/Deep: Llama's modules under GPT-2-style names (wte, h.N.attn, c_fc_0/1, c_proj, ln_1/2, ln_f),
    # no biases; its own field `num_layers` (SGLang 0.5.23 exaone.py / configs/exaone.py: attribute_map)
    A("exaone", "ExaoneConfig (remote code)", "LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct configuration_exaone.py", m.EXAONE,
      ("ExaoneForCausalLM",), geometry=Geometry(layers="num_layers", intermediate_default_factor=4)),
    # Nanbeige-4.2: Llama's modules run num_loops times over the same 22 layers, each pass with KV of its own
    # (SGLang 0.5.23 nanbeige.py NanbeigeAttention: a RadixAttention per loop, layer_id + loop × layers;
    # configs/model_config.py: num_attention_layers = num_hidden_layers × num_loops): the weights the layers once,
    # the KV num_loops × the layers (ModelSpec.kv_passes)
    A("nanbeige", "NanbeigeConfig (remote code)", "Nanbeige/Nanbeige4.2-3B configuration_nanbeige.py", m.NANBEIGE,
      ("NanbeigeForCausalLM",), kv_passes_field="num_loops"),
    # IQuest-Coder-V1-Loop: Llama's modules (no biases, heads hidden ÷ heads whatever head_dim says) run loop_num
    # times; vLLM 0.33.0 / SGLang 0.5.23 iquest_loopcoder.py LoopCoderAttention build an attention per loop, loop 0
    # full and the others windowed to loop_window_size (vLLM: a CacheConfig of sliding_window; SGLang:
    # sliding_window_size), and a gate_projections.N per layer (BodyShape.loop_gate)
    A("iquestloopcoder", "IQuestLoopCoderConfig (remote code)",
      "IQuestLab/IQuest-Coder-V1-40B-Loop-Instruct configuration_iquestloopcoder.py", legacy.IQUEST_LOOPCODER,
      ("IQuestLoopCoderForCausalLM",), geometry=Geometry(head_dim=None), attention=Attention(bias_fields=()),
      mlp_bias_fields=(), body=BodyShape(loop_gate=True), kv_passes_field="loop_num",
      kv_pass_window_field="loop_window_size"),
    # TeleChat2 (vLLM 0.33.0 models/telechat2.py TeleChat2Model over LlamaModel; SGLang 0.5.23 registers none): its
    # own field names (n_layer, n_head, ffn_hidden_size, as its attribute_map reads them: the config schema's aliases
    # but ffn_hidden_size; its length seq_length, as vLLM derives the context from it), head_dim hidden ÷ heads;
    # it sets bias and mlp_bias then drops qkv_proj's and gate_up_proj's biases: o_proj and down_proj alone biased
    # (row-parallel, whole). Its class leaves num_key_value_heads None where the file omits it, and vLLM 0.33.0 then
    # refuses the launch (ModelConfig total_num_kv_heads: "Input should be a valid integer", registry sweep of the
    # class's defaults): the field is needed.
    A("telechat", "Telechat2Config (remote code)", "TeleAI/TeleChat2-3B configuration_telechat2.py", m.TELECHAT2,
      ("TeleChat2ForCausalLM",),
      geometry=Geometry(kv_heads_required=True, head_dim=None, intermediate="ffn_hidden_size"),
      body=BodyShape(o_bias=True, down_bias=True)),
    # Orion: LayerNorm with biases
    A("orion", "OrionConfig (remote code)", "OrionStarAI/Orion-14B-Base configuration_orion.py", d.LLAMA,
      ("OrionForCausalLM",), body=LAYERNORM),
    # ChatGLM-2/3 and GLM-4-9B's original release: its own field names, q, k, v bias (add_qkv_bias); GLM-4V-9B's
    # GLM4VForCausalLM is this language model with an EVA2-CLIP tower (towers_catalog.TOWERS_BY_CLASS)
    A("chatglm", "ChatGLMConfig (remote code)", "THUDM/chatglm3-6b configuration_chatglm.py", {},
      ("ChatGLMModel", "ChatGLMForConditionalGeneration", "GLM4VForCausalLM"),
      geometry=Geometry(layers="num_layers", kv_heads="multi_query_group_num", kv_heads_if="multi_query_attention",
                        head_dim="kv_channels", intermediate="ffn_hidden_size", vocab="padded_vocab_size"),
      attention=Attention(bias_fields=("add_qkv_bias",))),
    # DeciLM / Llama-Nemotron-Super/Ultra (Nemotron-NAS): block_configs give each layer its KV heads or no
    # attention, and its MLP width (ffn_mult) or none; a no-op attention has no input_layernorm and a no-op FFN
    # no post_attention_layernorm (DeciLMDecoderLayer.__init__, nemotron_nas.py: vLLM 0.33.0, SGLang 0.5.23)
    A("nemotron-nas", "DeciLMConfig (remote code)", "nvidia/Llama-3_3-Nemotron-Super-49B-v1 configuration_decilm.py",
      d.LLAMA, ("DeciLMForCausalLM",), layers=DeciBlocks(), body=BodyShape(sublayer_norms=True)),
    # openPangu-Embedded: Llama's modules; q, k, v biases from qkv_bias where stated, else attention_bias or
    # `bias`; o_proj's bias from attention_bias or `bias` (vLLM 0.13.0 .. 0.33.0 openpangu.py
    # OpenPanguDecoderLayer: attention_bias = attention_bias or bias, bias_o_proj = attention_bias, then
    # qkv_bias overrides q, k, v's). sandwich_norm adds pre- and post-MLP norms: refused by name.
    A("PanguEmbedded", "PanguEmbeddedConfig (remote code)",
      "openPangu-Embedded-7B-V1.1 configuration_openpangu_dense.py", d.PANGU_EMBEDDED, ("PanguEmbeddedForCausalLM",),
      attention=Attention(bias_fields=("qkv_bias", "attention_bias"), o_bias_fields=("attention_bias", "bias")),
      refused_when=(("sandwich_norm", "openPangu's sandwich norms (pre- and post-MLP RMSNorm on every layer)"),)),
    # Phi-3-vision: Phi-3's language model (flat config) beside a CLIP tower (`img_processor`: towers_phi); the
    # note stays only where that section does not read as vLLM's CLIP
    A("phi3_v", "Phi3VConfig (remote code)", "microsoft/Phi-3.5-vision-instruct configuration_phi3_v.py", d.PHI3,
      ("Phi3VForCausalLM",), tower=t.PHI3_V, not_modelled=(VISION_NOT_MODELLED,)),
    # Phi-4-multimodal: Phi-4-mini's language model (flat config; vLLM 0.33.0 phi4mm.py builds LlamaModel, SGLang
    # 0.5.23 phi4mm.py LlamaForCausalLM: fused qkv, tied head) beside a SigLIP tower and a conformer audio encoder
    # (towers_phi4mm). Its vision and speech LoRA weights are not built (served as adapters: --enable-lora's slots).
    # The notes stay only where the towers do not read as the engines build them
    A("phi4mm", "Phi4MMConfig (remote code)", "microsoft/Phi-4-multimodal-instruct configuration_phi4mm.py", d.PHI3,
      ("Phi4MMForCausalLM",), tower=t.PHI4MM, not_modelled=(VISION_NOT_MODELLED, PHI4MM_AUDIO)),
    # PLaMo 3 (pfnet/plamo-3-nict-*): Llama's fused qkv (no bias, whatever attention_bias says) and gated MLP, q/k
    # RMSNorms of head_dim, four norms a layer (pre/post mixer, pre/post MLP), the head tied by default; full
    # attention on every sliding_window_pattern-th layer, window_size elsewhere (vLLM 0.33.0 models/plamo3.py
    # Plamo3AttentionMixer 146-205, Plamo3DecoderLayer 252-270; per_layer_sliding_window from the class's
    # interleaved_sliding_window). SGLang 0.5.23 registers no Plamo3.
    A("plamo3", "Plamo3Config (remote code)", "pfnet/plamo-3-nict configuration_plamo3.py (SGLang's copy @ 33918d47)",
      d.PLAMO3, ("Plamo3ForCausalLM",), layers=EveryNthFull(every=8, window_field="window_size"),
      window_field="window_size", attention=Attention(qk_norm=True), body=POST_NORMS),
    # Solar (upstage Solar Pro Preview, SolarConfig: remote code): Llama's modules (vLLM 0.33.0 / SGLang 0.5.23 solar.py:
    # fused qkv with a bias where attention_bias or bias, gated MLP with one where mlp_bias, two norms a layer); the
    # bskcn_* skip connections blend hidden states in forward and hold no tensor. Its sliding_window has no pattern:
    # vLLM 0.33.0 passes no per-layer window (solar.py 162-170), so every layer takes CacheConfig's sliding_window
    # (attention.py 265-273: a SlidingWindowSpec each, the config's window: ModelSpec.config_sliding_window, vllm.md
    # §3.4); SGLang 0.5.23 passes none to RadixAttention (solar.py 161-169) and lists no Solar in is_hybrid_swa_model
    # (configs/model_config.py 2651-2697): one full pool, every token kept
    A("solar", "SolarConfig (remote code)", "upstage/solar-pro-preview-instruct configuration_solar.py (LoRAX's copy "
      "@ 52710ea7); vLLM 0.33.0 / SGLang 0.5.23 models/solar.py", d.SOLAR, ("SolarForCausalLM",),
      attention=Attention(bias_fields=("attention_bias", "bias"))),
    # Rnj-1's coming model (vLLM 0.33.0 models/rnj1.py, "an upcoming model", PR #39823): a Gemma3TextConfig read by
    # Gemma-3's modules (q/k norms of head_dim, four norms a layer, the head tied by default), whose layer_types
    # differ: a "chunked_attention" layer keeps a block-local window of sliding_window tokens (Rnj1Attention 141-170:
    # per_layer_sliding_window, one chunk of lookback: vLLM's SlidingWindowSpec), every other layer full, its
    # "sliding_attention" too (no window passed). Fixed to this entry by its class (nesting.CLASS_TEXT), whatever
    # model_type the config names (gemma3_text). Built on TRITON_ATTN only (engines/vllm/backends.py).
    A("rnj1", "Gemma3TextConfig (read by Rnj1ForCausalLM)", "vLLM 0.33.0 models/rnj1.py; " + tf("gemma3"),
      d.GEMMA3_TEXT, ("Rnj1ForCausalLM",), attention=Attention(qk_norm=True), body=POST_NORMS,
      layer_type_words={"full_attention": LayerKind.FULL, "sliding_attention": LayerKind.FULL,
                        "chunked_attention": LayerKind.SLIDING}),
    # Molmo (allenai/Molmo-7B-D-0924, Molmo-72B: Qwen2 language models): vLLM 0.33.0 molmo.py MolmoModel — fused qkv
    # with a bias where qkv_bias; q_norm over hidden and k_norm over KV heads × head_dim (whole) where
    # attention_layer_norm; gate_up of 2 × intermediate_size ÷ 2 (the config states the fused width); an embedding of
    # (embedding_size or vocab_size) + 128 rows (ADDITIONAL_VOCAB_SIZE), the LM head embedding_size rows, untied
    # (weight_tying; tied, vLLM does not build). norm_after moves the two norms, no new tensor. Its ViT, pooling and
    # projector are vLLM's constant shape (towers_molmo). SGLang 0.5.23 registers no Molmo.
    A("molmo", "MolmoConfig (remote code)", "allenai/Molmo-7B-D-0924 config_molmo.py; vLLM 0.33.0 molmo.py",
      legacy.MOLMO, ("MolmoForCausalLM",),
      geometry=Geometry(vocab="embedding_size", intermediate_divisor=2),
      attention=Attention(bias_fields=("qkv_bias",), qk_norm_field="attention_layer_norm"),
      body=BodyShape(qk_norm_width="all", embedding_extra_rows=128), tower=t.MOLMO,
      refused_when=(("weight_tying", MOLMO_TIED),),
      refused_unequal=(("tie_word_embeddings", "weight_tying", "vLLM reads weight_tying for the head"),),
      refused_unless=(("layer_norm_type", "rms", "vLLM 0.33.0 molmo.py asserts RMSNorm"),)),
)  # fmt: skip

"""Every architecture class the engines register, and what kvtop does with it: plans it through an entry, reads
its language model through a wrapper's text section, or names it "not modelled" with the reason.

The engines pick a model class by the name in config.json's `architectures`; kvtop picks an entry by
`model_type`, and by that class name where the model_type is unknown (`registry.BY_CLASS_NAME`). The lists
here cover the rest of vLLM's and SGLang's registries (tests/data/architectures/engine_registries.json), so a
class without an entry is a stated decision, and a config naming one is refused with its reason rather than
misread (`reason_not_modelled`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

from kvtop.domain.architectures.registry import BY_CLASS_NAME

Verdict = Literal["entry", "wrapper", "not_modelled", "generic"]

# Multimodal wrappers whose language model kvtop reads through their text section (`nesting`); their towers,
# where towers_catalog.BY_OUTER_TYPE has no kind for them, are not in the weights book (said in not_modelled).
WRAPPERS: frozenset[str] = frozenset({
    "LlavaForConditionalGeneration", "LlavaNextForConditionalGeneration", "LlavaNextVideoForConditionalGeneration",
    "LlavaOnevisionForConditionalGeneration", "Mistral3ForConditionalGeneration", "PixtralForConditionalGeneration",
    "InternVLChatModel", "InternVLForConditionalGeneration", "H2OVLChatModel", "SkyworkR1VChatModel", "NVLM_D",
    "KimiVLForConditionalGeneration", "DeepseekVL2ForCausalLM", "DeepseekVLV2ForCausalLM",
    "Idefics3ForConditionalGeneration", "SmolVLMForConditionalGeneration", "PaliGemmaForConditionalGeneration",
    "NemotronH_Nano_VL_V2",  # NemotronH over llm_config; its C-RADIO tower and mlp1: towers_radio
    # vLLM 0.33.0 nemotron_vl.py LlamaNemotronVLChatModel: init_vllm_registered_model(config.get_text_config()), a
    # Llama over llm_config; mlp1 counted, its vision model (the checkpoint's own code) named: towers_nemotron_vl
    "Llama_Nemotron_Nano_VL",
    # vLLM 0.33.0 kanana_v.py: LlamaForCausalLM over text_config; its Qwen2-VL ViT less the merger and its
    # DynamicCAbstractor (timm RegStage stages, readout MLP): towers_kanana
    "KananaVForConditionalGeneration",
    "StepVLForConditionalGeneration",  # Step3-VL-10B: Qwen3 over text_config; its PerceptionEncoder: towers_step
    "DeepseekOCRForCausalLM",  # language_config (use_mla false: plain attention); its encoders: towers_deepseek_ocr
    "MultiModalityCausalLM",  # Janus: language_config (a LlamaConfig); its towers: towers_janus
    "Gemma3nForConditionalGeneration",  # text_config (Gemma3nTextConfig); its towers and embedders: towers_gemma3n
    # speech models whose audio encoder and projector are tower data (towers_audio, towers_catalog_audio)
    "Qwen2AudioForConditionalGeneration", "AudioFlamingo3ForConditionalGeneration",
    "Qwen2_5OmniModel", "Qwen2_5OmniForConditionalGeneration",  # the thinker only (nesting.SERVED_SECTION)
    "Qwen3OmniMoeForConditionalGeneration", "Qwen3ASRForConditionalGeneration",
    "GraniteSpeechForConditionalGeneration", "GraniteSpeechPlusForConditionalGeneration",
    "MossAudioModel",  # Qwen3 over language_config; its encoder, adapter and deepstack mergers: towers_moss
    "MossTranscribeDiarizeForConditionalGeneration",  # Qwen3 over text_config; vLLM's Whisper encoder: towers_moss
    "FunAudioChatForConditionalGeneration",  # Qwen3 over text_config; both audio encoders: towers_funaudiochat
    "MiDashengLMModel",  # Qwen2 over text_config; the Dasheng audio transformer and projector: towers_dasheng
    "GlmAsrForConditionalGeneration",  # each engine divides its encoder its own way (TowerSplit.blocks)
    "VoxtralForConditionalGeneration",  # Llama over text_config; the Whisper encoder and adapter: towers_voxtral
    "UltravoxModel",  # the text model text_model_id names (named_text) or text_config; its towers: towers_ultravox
    "BailingMoeV3VLForConditionalGeneration",  # Ling-3 over text_config; its ViT and linear_proj: towers_bailing
    # SGLang 0.5.23 only: Qwen2 / Llama over text_config; SigLIP and projector, or the Qwen2-VL ViT: towers_nvila
    "NVILAForConditionalGeneration", "NVILALiteForConditionalGeneration", "Sarashina2VisionForCausalLM",
    # checked in session 47 on composed configs, equal to the engines' meta builds (tests/domain/test_checked_wrappers):
    # SGLang 0.5.23 POINTS-1.5, Qwen2 over llm_config and towers_points; vLLM 0.33.0 LLaVA-OneVision-2, Qwen3 over
    # text_config and towers_onevision2; vLLM 0.33.0 Ovis2.6 (ovis2_5.py Ovis2_5), Qwen3 / Qwen3-MoE over llm_config
    # and the ovis2_5 tower; Ovis2.5 (the same vLLM class) and Ovis (ovis.py, its AIMv2 tower: towers_ovis) on their
    # checkpoints' configs, AIDC-AI/Ovis2.5-9B and Ovis2-34B
    "POINTSV15ChatModel", "LlavaOnevision2ForConditionalGeneration", "Ovis2_6ForCausalLM", "Ovis2_6_MoeForCausalLM",
    "Ovis2_5", "Ovis",
    # SGLang 0.5.23 dots.vlm1: DeepseekV2ForCausalLM over the top level (nesting.CLASS_TEXT), towers_dots_vlm
    "DotsVLMForCausalLM",
})  # fmt: skip

# Kinds of model that hold no KV cache of generated tokens, or only beside another model's.
_KINDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"NextN|MTP|Eagle|DSpark|DFlash|Draft|Assistant|LiLiCorr"),
        "a speculative-decoding draft: its KV is planned with its target model's (--speculative flags)",
    ),
    (
        re.compile(
            r"Classification|RewardModel|Embedding|Contriever|^Bert|Roberta|CLIPModel|^Qwen3Model$"
            r"|^MistralModel$|Bidirectional|PixtralVisionModel"
        ),
        "a pooling or encoder model: it generates no tokens, so there is no KV cache to plan",
    ),
    (
        re.compile(r"ASR|Asr|Whisper|Audio|Speech|Voxtral|Ultravox|Transcri|Parakeet|Kimia|MiDashengLM|Omni"),
        "a speech or omni model: its audio encoder and talker are not modelled",
    ),
    (
        re.compile(r"^Transformers"),
        "the Transformers backend: the model is the one its config names (read that)",
    ),
    (
        re.compile(r"OCR|Ocr|Parse|LocateAnything|OpenVLA|Image|Bagel|Diffusion|LLaDA|SDAR"),
        "OCR, image-generation, action or diffusion-decoding model: not a KV-cache decoder kvtop plans",
    ),
)

# DeepseekV4ForCausalLM has its entry (table_latent.py: SGLang 0.5.23's pool, vLLM 0.33.0's specs and packed groups
# in engines/vllm/dsv4.py, kv.py refusing it for an engine or release without them). Named here: the vision wrapper
# (vLLM models/deepseek_v4: a tower beside the text model, a stub off CUDA/ROCm) and V4.1 (models/deepseek_v41: its
# own attention, bounded-replay sliding windows and engram layers), which no entry reads.
DEEPSEEK_V4 = (
    "DeepSeek-V4's vision wrapper and V4.1 (bounded-replay windows, engram layers): no entry reads them "
    "(DeepseekV4ForCausalLM is planned)"
)

# Reasons several classes share: what exactly kvtop lacks.
JET_VLM = (
    "Jet-Nemotron's VLM: its SiglipVisionModel tower and 2×2-downsample projector (jet_vlm.py JetVLMMultiModalProjector) "
    "no tower entry reads, and no checkpoint's config.json is at hand (JetVLMConfig's defaults leave the text "
    "JetNemotronConfig's sizes None); its language model is JetNemotronForCausalLM (table_hybrid.py jet_nemotron)"
)
# The three below keep a circular buffer (vLLM 0.33.0 CircularBufferSpec): kvtop's ring pool (kv_ring.py) holds its
# page; what each still lacks is named.
GLM5_NEXT = (
    "GLM-5-Next's kpool indexer (FP8 index keys one per index_kpool tokens, and a tail ring of "
    "index_kpool × next_power_of_2(cdiv(index_kpool + speculative tokens, index_kpool)) rows of [key, gate score]), "
    "its KDA layers (Glm5NextLinearAttention's state) and its mHC hyper-connections (hc_mult residual streams): "
    "no entry reads them"
)
QWEN4_EXP = (
    "Qwen4-Exp's QSA caches (one compressed key per indexer_compress_ratio tokens, and a raw-key ring of "
    "round_up(indexer_compress_ratio + speculative tokens, indexer_compress_ratio) rows), its hyper-connections "
    "(hc_count residual streams, an hc_lowrank mixer) and its n-gram per-layer embedding table (expert-TP sharded or "
    "in pinned host memory): no entry reads them"
)
STEP5 = (
    "Step-5's compressed sparse attention (vLLM builds only a config with a sparse_config section): its indexer "
    "fused into qkv, an 8-token summary cache beside each main page and a tail ring of one main KV page per "
    "request: no entry reads the step5 fields"
)
INKLING = (
    "Inkling's per-layer conv state held as one paged sliding-window cache (SlidingWindowSpec) of four short-conv "
    "streams (K, V and the attention and MLP outputs): no pool kvtop plans"
)

# Decoders whose KV layout or state no entry reads yet, with what stops it.
NOT_MODELLED: Mapping[str, str] = {
    "DeepseekV4ForConditionalGeneration": DEEPSEEK_V4,
    "DeepseekV41ForCausalLM": DEEPSEEK_V4,
    # vLLM 0.33.0 molmo2.py reads vit_config / adapter_config (every VitConfig / AdapterConfig field by getattr) and a
    # text config's qkv_bias, use_qk_norm, norm_after, additional_vocab_size; transformers 5.20's Molmo2Config names
    # them otherwise (its default: "'Molmo2Config' object has no attribute 'vit_config'" as vLLM builds it,
    # registry_sweep.py --params). Searched in session 44 (task D3): allenai/Molmo2-4B/8B's config.json is not in the
    # corpora (mlx-lm, Swift and Rust ports' test fixtures of 32-128 wide sections only)
    "Molmo2ForConditionalGeneration": "Molmo-2: vLLM's class reads the checkpoint's remote-code config (vit_config, "
    "adapter_config), which transformers' Molmo2Config does not match (vLLM cannot build its default), and no "
    "checkpoint's config.json is at hand (the corpora hold only test fixtures of it), so no engine build checks an "
    "entry; its ViT and adapter besides",
    # BailingMoeV2_5ForCausalLM (Ling-2.5's lightning attention between MLA layers) is planned: table_lightning.py;
    # BailingMoeV3ForCausalLM (Ling-3's KDA between MLA layers) too: table_hybrid.py bailing_moe_v3
    # KimiK3LinearForCausalLM (Kimi-K3's text-only class, SGLang 0.5.23 kimi_k3.py: the wrapper's language_model) is
    # planned: table_hybrid.py kimi_linear
    # MiniCPMSALAForCausalLM (SGLang 0.5.23: MiniCPM-4 attention or lightning mixers by mixer_types) is planned:
    # table_lightning.py
    # JetNemotronForCausalLM is planned: table_hybrid.py jet_nemotron (JetBlock: state_rules.JetBlockState)
    "JetVLMForConditionalGeneration": JET_VLM,
    # vLLM 0.33.0 models/dory.py: DoryDecoderLayer is an attention-only or an MLP-only layer by layer_types, the
    # recurrent layers run n_recurrent_loops times with a KV cache per loop (recurrent_kv_cache_mode "per_loop"),
    # and DoryForCausalLM raises "Dory currently supports tensor_parallel_size=1 only". What an entry lacks (session
    # 46, task C2): passes over a layer range only (ModelSpec.kv_passes counts every layer: Dory's loops cover
    # n_input_layers … + n_recurrent_layers, one KV each under per_loop, one under last_loop), the nGPT vectors
    # (DoryAttention sqk, s_gate [heads × head_dim], attn_alpha / mlp_alpha [hidden], DoryMLP suv_gate, suv_up
    # [intermediate], lm_head.logit_scale [vocab]; no norms at all), the class's default pattern where layer_types is
    # absent (odd layers mlp, i % 8 == 6 full, else sliding) and a vLLM refusal above TP 1; no checkpoint config with
    # n_recurrent_loops > 1 is in the corpora (vLLM's test config: 16 / 40 / 16 layers, one loop)
    "DoryForCausalLM": "Dory's attention-only and MLP-only layers (layer_types) whose recurrent range "
    "(n_input_layers … + n_recurrent_layers) runs n_recurrent_loops times with a KV cache per loop, its nGPT scale "
    "vectors and no norms (vLLM 0.33.0 models/dory.py, TP 1 only): no entry reads passes over part of the layers",
    "HrmTextForCausalLM": "a hierarchical recurrent model (no entry)",
    # vLLM 0.33.0 models/glm5next/common: KDA layers (kda.py Glm5NextLinearAttention, a MambaSpec) beside MLA with a
    # DSA indexer whose keys are kept one per index_kpool tokens (attention.py Glm5NextIndexerCache, tokens_per_state)
    # and whose tail keys sit in a CircularBufferSpec ring (attention.py 156-179 Glm5NextTailCache); mHC per layer
    # (model.py Glm5NextDecoderLayer, config.mhc, hc_mult streams)
    "Glm5NextForCausalLM": GLM5_NEXT,
    "Glm5NextForConditionalGeneration": GLM5_NEXT + "; and its vision tower",
    # vLLM 0.33.0 models/qwen4_exp: QSA layers keep a ring of raw index keys (qsa_cache.py 842-860 CircularBufferSpec)
    # and one compressed key per compress_ratio tokens (866-875 MLAAttentionSpec tokens_per_state); the per-layer
    # embedding (PLE) is an n-gram table sharded over expert TP or kept in pinned host memory
    # (common/ngram_embedding.py); transformers' Qwen4ExpTextConfig requires hc_count > 1 (hyper-connections)
    "Qwen4ExpForCausalLM": QWEN4_EXP,
    "Qwen4ExpForConditionalGeneration": QWEN4_EXP + "; and its vision tower",
    # vLLM 0.33.0 models/step5/nvidia: under a sparse_config (config.py checkpoint_has_step5_sparse_config) an indexer
    # fused into qkv (model.py Step5FusedQKVIndexerLinear), an 8-token summary cache (sparse_summary_cache.py, a
    # FullAttentionSpec of tokens_per_state 8) and a tail ring sized to the main page (csa_tail_ring.py 166-189);
    # MegaMoE experts only under --moe-backend deep_gemm_mega_moe (model.py Step5MoE). Meta builds of the class
    # defaults (session 45): vLLM refuses Step5Config's ("Step5 requires a checkpoint with a sparse_config section"),
    # Qwen4ExpTextConfig's ("unsupported output_gate_type=None") and cannot build Glm5NextTextConfig's (it reads
    # config.mhc, which the class does not define): each needs a published config
    "Step5ForCausalLM": STEP5,
    "Step5ForConditionalGeneration": STEP5 + "; and its vision tower",
    # vLLM 0.33.0 models/inkling/nvidia/model.py and sconv_swa_attn.py: each layer's conv state is one paged
    # SlidingWindowSpec (InklingConvState) of four short-conv streams: K, V, and the attention and MLP outputs
    # (attn_sconv, mlp_sconv, hidden ÷ TP channels)
    "InklingForCausalLM": INKLING,
    "InklingForConditionalGeneration": INKLING + "; and its vision tower",
    # vLLM 0.33.0 models/muse_spark/nvidia/model.py and common/ (layers.py, vision.py, audio.py), SGLang 0.5.23
    # models/muse_spark_omni.py; no published config: vLLM's MuseSparkConfig has no defaults (has_no_defaults_at_init,
    # it refuses a missing section), transformers' has (text 62 layers × 8,192, 256 experts)
    "MuseSparkForConditionalGeneration": "Muse Spark's text layers (a fused Q|K|V|O-gate projection "
    "MuseSpark1xQKVOGateParallelLinear after a pre-QKV norm, a channel-wise norm-preserving residual gate around each "
    "sub-block, routed experts behind a replicated pooler/unpooler of moe_hidden_size with a pre-expert norm, a RoPE "
    "theta per layer) and its towers (a NaViT vision encoder, adapter and vision_projection; a four-stage conv audio "
    "encoder): no entry reads them, and no published config sizes them",
    # SGLang 0.5.23 models/interns2_mobius.py: the routed experts live in num_blocks banks (model.meta_mlp, checked
    # "physical routed-expert bank count does not match num_blocks") beside the layers, and each layer's kind comes
    # from the checkpoint's own text_config.layer_types (configs/interns2_mobius.py keeps it "verbatim"; its default
    # has none); vLLM 0.33.0 reads the config only through the checkpoint's remote code
    # vLLM 0.33.0 models/alice_ai.py: layer_types picks, per layer, full attention (Qwen3NextAttention, its output
    # gate on) or Kimi-Linear's KDA (_make_kimi_kda_config: low-rank gates, key and value heads equal or it raises),
    # Qwen3-Next-style experts (shared_expert_gate, fp32 e_score_correction_bias), and attention residuals
    # (attn_res_proj / mlp_res_proj ReplicatedLinear and their norm weights a layer, _AttentionResidualFinal). No
    # config class in transformers 5.20.2 or vLLM 0.33.0's registry (remote code), and no config.json in the corpora
    # (searched in session 45, task A2: `AliceAIForCausalLM`; only a later vLLM's AliceAIConfig test defaults)
    "AliceAIForCausalLM": "AliceAI: no config to read — vLLM 0.33.0 takes it only through the checkpoint's remote "
    "configuration code and no config.json is at hand, so no engine build checks an entry (its KDA and gated "
    "attention are Kimi-Linear's and Qwen3-Next's; its attention residuals, a projection and a norm for each "
    "attention and MLP and a final mixer, are read by no entry)",
    # vLLM 0.33.0 models/domyn_edge.py DomynEdgeDecoderLayer: each layer's head_dim from per_layer_config (transformers
    # 5.20's heterogeneous-config overrides), its sliding window from window_sizes and RoPE or none from
    # position_layers, four norms a layer. No config class in vLLM 0.33.0 or transformers 5.20.2 (remote code), and
    # no config.json in the corpora (searched in session 45, task A3: DomynEdgeForCausalLM, domyn_edge,
    # position_layers); the one public DomynEdgeConfig (a vLLM fork's, model_type domynedge) writes head_sizes, a
    # list, not the per_layer_config vLLM 0.33.0 reads
    "DomynEdgeForCausalLM": "DomynEdge's per-layer head sizes, windows and positions (per_layer_config, "
    "window_sizes, position_layers): no entry reads them, and no config is at hand (remote code only; the one public "
    "config class writes head_sizes, not the per_layer_config vLLM 0.33.0 reads) for an engine build to check one",
    # K2HorizonForCausalLM is planned (table_moe.py k2_horizon); its MoVA value experts, attention gate and per-head
    # q/k norms are refused by name there
    # SGLang 0.5.23 model_loader/utils.py get_model_architecture: under --model-impl mindspore every config's
    # architectures become ["MindSporeForCausalLM"], and models/mindspore.py (_get_arch_from_config) builds the
    # config's own class from sgl_mindspore.models on an Ascend NPU; no config names this class
    "MindSporeForCausalLM": "not a model of its own: SGLang's MindSpore backend (--model-impl mindspore, Ascend NPU) "
    "builds the class the config names from sgl_mindspore's models; kvtop plans that class (read the config) and "
    "does not model the MindSpore backend's KV pool",
    # vLLM 0.33.0 models/dots3_note/nvidia/model.py, meta-built from recon--tokenspeed--Dots3Note-text (the registry
    # sweep's rows): 13 full DSA layers (0 and i % 4 == 1) whose MLA rows Dots3NotePaddedMLAAttention pads to the
    # sliding layers' (swa_kv_lora_rank + swa_qk_rope_head_dim = 1,088 bf16, not 576) beside a 132 B indexer key,
    # and 33 SlidingWindowMLASpec layers (window 513) of their own shape (64 heads, q/kv LoRA 1,024 / 1,024, nope 192)
    "Dots3NoteForCausalLM": "Dots3 NOTE: its sliding-window MLA layers have their own latent shape (swa_* heads, "
    "LoRA ranks and head dims), which no entry reads per layer kind (KindGeometry holds only heads and head dims), "
    "its full DSA layers' latent cache rows are padded to the sliding layers' row (vLLM 0.33.0 "
    "Dots3NotePaddedMLAAttention: swa_kv_lora_rank + swa_qk_rope_head_dim), which no latent spec carries, and its "
    "vision MoE ViT and audio encoder (vision_config / audio_config) have no tower entry",
    # SGLang 0.5.23 models/moss_vl.py:1052-1090 MossVLTextModel: a layer whose id is in cross_attention_layers is a
    # MossVLCrossAttentionDecoderLayer (q/k/v/o, q/k norms, RadixAttention is_cross_attention=True: the image tokens'
    # K and V), the others Qwen3-style self-attention; :1199 MossVLVisionModel (Conv3d patch, position table, blocks,
    # merger and deepstack mergers) and a separator_token; arg_groups/model_overrides/moss_vl.py asserts flashinfer
    # prefill. MossVLConfig is the checkpoint's own code, in neither SGLang nor transformers
    "MossVLForConditionalGeneration": "MOSS-VL: its text model's cross_attention_layers are cross-attention decoder "
    "layers over the image tokens (SGLang 0.5.23 moss_vl.py MossVLCrossAttentionDecoderLayer: a RadixAttention "
    "with is_cross_attention, K and V of the image tokens), which no entry reads beside self-attention layers, and its MossVLVisionModel "
    "(patch, position table, blocks, deepstack mergers) has no tower kind; its config class is the checkpoint's own "
    "(no published config or class defaults at hand to build one from)",
    "InternS2MobiusForConditionalGeneration": "Intern-S2-Mobius's routed-expert banks (meta_mlp: num_blocks banks "
    "beside the layers) and its checkpoint's per-layer schedule (text_config.layer_types): no entry reads them",
    # session 47 (issue 26): vLLM 0.33.0 openpangu_vl.py read; searched again (find_string on the class, on
    # openpangu_vl and on `class OpenPanguVLConfig`): registries, an Ascend plugin's registration, a Rust port's
    # 2-layer fixture (hidden 32) and copies of configuration_openpangu_vl.py (OpenPanguVLConfig: text_config 34
    # layers of 4,096, vision_config 26 of 1,536), from whose defaults a config could be composed; the build stops it
    "OpenPanguVLForConditionalGeneration": "openPangu-VL: vLLM 0.33.0 openpangu_vl.py builds its own vision "
    "transformer (OpenPanguVisionTransformer: an unbiased Conv3d patch, RMSNorm blocks whose MLP is gate_up / down "
    "where vision_config.hidden_act is silu, else up / down, padded to the TP size; a final RMSNorm; one patch "
    "merger per mm_unit_vision_select_layer entry; vision_projection to the outer hidden_size), which no tower kind "
    "reads; no checkpoint's config.json is at hand, and the harness cannot build the class to check one: it refuses "
    "every vision attention backend but FLASH_ATTN (\"Pangu-VL does not support … backend now\"), which the CPU "
    "meta build does not select, and its __init__ loads the checkpoint's image processor (_parse_preprocess_params), "
    "which a config folder lacks",
    # vLLM 0.33.0 nemotron_parse3_5.py RadioMBartPrefixForCausalLM (lines 657-720; SGLang 0.5.23 registers no such
    # class): RadioWithNeck (lines 517-590: radio.py RadioModel from `encoder.args`, conv1 / conv2 / sum_proj necks to
    # decoder.d_model, three LayerNorms) and MBartDecoderNoPos (lines 265-320: scaled embeddings, no positions,
    # layernorm_embedding and layer_norm, decoder_layers of self-attention only, QKV / Row-parallel, KV-cached over
    # the image prefix: causal_vision_prefix, no cross-attention), sized by the config's `encoder` / `decoder`
    # sections and read through the checkpoint's own configuration code (no config class in vLLM or transformers)
    "RadioMBartPrefixForCausalLM": "Nemotron-Parse 3.5: vLLM 0.33.0 nemotron_parse3_5.py builds an MBart decoder "
    "without positions (MBartDecoderNoPos: scaled embeddings, layernorm_embedding, self-attention layers cached over "
    "a causal image prefix, no cross-attention) sized by the config's `decoder` section (d_model, decoder_layers, "
    "decoder_attention_heads, decoder_ffn_dim, vocab_size), which no architecture entry reads, below a RADIO encoder "
    "with a neck (RadioWithNeck: conv1, conv2, sum_proj to d_model) that no tower kind counts; and no config is at "
    "hand (its configuration is the checkpoint's own code; no source names the class)",
    # vLLM 0.33.0 openpangu.py: PanguProMoEV2ForCausalLM is OpenPanguMoEModel, whose OpenPanguDecoderLayer picks MLA
    # (kv_lora_rank), else OpenPanguSinkAttention where param_sink_number > 0 (a StaticSinkAttention:
    # layers/attention/static_sink_attention.py get_kv_cache_spec -> SinkFullAttentionSpec, sink_len blocks held once
    # per layer beside the requests' own), else OpenPanguEmbeddedAttention; sandwich_norm adds two norms a layer.
    # Session 47 (helper d): no config class ships with either engine and the corpora hold no PanguProMoEV2 config
    # (omni-npu registrations, ports' registries); the openPangu V2 config at hand names PanguV2MoEForCausalLM
    # (model_type pangu_v2_moe: MLA, DSA, MoME and mHC layers an Ascend plugin builds, not this class)
    "PanguProMoEV2ForCausalLM": "openPangu Pro-MoE V2 (vLLM 0.33.0 openpangu.py OpenPanguMoEModel): its sink "
    "attention (param_sink_number learned K/V rows a layer, held as sink blocks once per layer: vLLM's "
    "SinkFullAttentionSpec), per-layer interleaved_sliding_window and sandwich norms have no entry, no pool holds the "
    "sink blocks, and no config at hand (no config class ships with the engines) states the class's sizes",
}

# Nemotron-3 Omni: NemotronH_Nano_VL_V2's build (vLLM 0.33.0 registry.py maps both names to nano_nemotron_vl.py
# NemotronH_Nano_VL_V2; SGLang 0.5.23 nano_nemotron_vl.py subclasses it) with a Parakeet sound encoder
NEMOTRON_OMNI = (
    "Nemotron-3 Omni: NemotronH_Nano_VL_V2's build (vLLM 0.33.0 / SGLang 0.5.23 nano_nemotron_vl.py) — its RADIO "
    "vision tower and mlp1 as towers_radio reads them for NemotronH_Nano_VL_V2 — with a Parakeet conformer "
    "sound_encoder and projection (vLLM parakeet.py ProjectedParakeet) that no tower kind reads; and no "
    "published config at hand (only ports' fixtures and partial quotes)"
)

# Speech classes read from their engines' model code that stay not modelled, each with what stops it (the audio
# classes that are planned: towers_audio; the rest keep _KINDS' general reason).
SPEECH_NOT_MODELLED: Mapping[str, str] = {
    # vLLM 0.33.0 cohere_asr.py (SGLang 0.5.23 registers no such class): Whisper's mechanism (table_encdec.py), its
    # KV the same cross pool (engines/vllm/encdec.py), but a NeMo config no entry reads: ConformerEncoder from the nested
    # `encoder` dict (cohere_asr.py:1375-1398 index feat_in, n_layers, d_model, feat_out, causal_downsampling,
    # subsampling, subsampling_factor, subsampling_conv_channels, ff_expansion_factor, self_attention_model, n_heads,
    # att_context_size, xscaling, untie_biases, pos_emb_max_len, conv_kernel_size, conv_norm_type, conv_context_size),
    # CohereASRDecoder from `transf_decoder.config_dict` (hidden_size, inner_size, num_attention_heads) and `head`.
    # transformers 5.20.2's CohereAsrConfig (@strict, flat fields and a parakeet_encoder encoder_config) has none of
    # them, so vLLM cannot build the class default. Searched in session 46 (task G: `"transf_decoder"`,
    # `"max_audio_clip_s"`): only a partial quote of CohereLabs/cohere-transcribe-03-2026's config.json is in the
    # corpora (a Swift port's test: encoder 1,280 × 48 layers, 8 heads, ff × 4, conv 9, subsampling 8 of 256
    # channels, 128 mels; decoder 1,024 × 8, inner 4,096, 8 heads; head 16,384 classes), without the eight
    # encoder keys vLLM indexes beyond it (causal_downsampling … conv_context_size)
    "CohereAsrForConditionalGeneration": "an encoder-decoder ASR model: its decoder's self- and cross-attention KV "
    "would be Whisper's pieces (vLLM 0.33.0 cohere_asr.py CohereASRDecoderLayer: a CrossAttentionSpec group, "
    "engines/vllm/encdec.py), but its NeMo-style config is read by no entry (the decoder sized by "
    "`transf_decoder.config_dict`, the head by `head.num_classes`) and its encoder by no tower kind (cohere_asr.py "
    "ConformerEncoder, NeMo's: ConvSubsampling, RelPositionMultiHeadAttention with linear_pos and pos_bias_u/v, "
    "ConformerConvolution with BatchNorm, two feed-forwards a layer, all nn.Linear, whole on every rank; not the "
    "conformer_encoder.py one towers_fireredasr2 counts), sized by the nested `encoder` dict; and no complete config "
    "is at hand (a partial quote of CohereLabs/cohere-transcribe-03-2026's lacks eight encoder keys vLLM indexes; "
    "transformers' CohereAsrConfig has none of the NeMo sections, so vLLM cannot build its default)",
    # vLLM 0.33.0 voxtral_realtime.py VoxtralRealtimeGeneration(VoxtralForConditionalGeneration): TimeEmbedding holds a
    # non-persistent buffer only; the language model's ada_rms_norm_t_cond MLPs (mistral.py:161-178) and biased
    # projections (use_biases) mistral_params refuses by name; the audio encoder is whisper_causal.py WhisperCausalEncoder (voxtral.py:726-731, is_causal), whose
    # WhisperCausalAttentionWithBlockPooling layers (whisper_causal.py:355-426) are KV-cache attention layers
    "VoxtralRealtimeGeneration": "Voxtral's streaming class (vLLM 0.33.0 voxtral_realtime.py): its causal Whisper "
    "encoder (whisper_causal.py WhisperCausalEncoder: causal convs, RMSNorms, RoPE, sliding-window attention) keeps "
    "its own KV in the engine's pool, one AttentionSpec a layer with tokens_per_state 1 / block_pool_size and its "
    "sliding window in pooled units (WhisperCausalAttentionWithBlockPooling.get_kv_cache_spec), which no KV group "
    "kind reads (a pool per audio frame beside the language model's per-token pools); its language model's "
    "adaptive-RMSNorm conditioning MLPs (mistral.py ada_rms_norm_t_cond) and biased projections no entry reads; and its "
    "__init__ reads the Mistral tokenizer's audio_encoder config (tekken.json: get_num_delay_tokens), which a config "
    "alone does not give",
    "Qwen3ASRRealtimeGeneration": "Qwen3-ASR's streaming class (vLLM 0.33.0 qwen3_asr_realtime.py over "
    "Qwen3ASRForConditionalGeneration): not checked against its build",
    "NemotronH_Nano_Omni_Reasoning_V3": NEMOTRON_OMNI,
    "NemotronH_Super_Omni_Reasoning_V3": NEMOTRON_OMNI,
    # session 46 (G2): mimo_audio.py:1259-1343 build_audio_encoder ends in _load_mimo_audio_tokenizer, which reads
    # <model>/audio_tokenizer/config.json and model.safetensors (or pytorch_model.bin) and moves the tokenizer to
    # cuda:torch.cuda.current_device() in bf16 inside __init__; no copy of that config is at hand
    "MiMoV2ASRForCausalLM": "MiMo-V2.5-ASR: SGLang 0.5.23 mimo_v2_asr.py builds, beside its MiMoForCausalLM "
    "language model, an input-local Qwen2Model, speech embeddings and a projection sized by audio_config that no tower "
    "entry reads, and its __init__ loads a MiMoAudioTokenizer from the checkpoint's audio_tokenizer/config.json and "
    "weights onto the CUDA device (mimo_audio.py build_audio_encoder): a size no config.json gives and a build no meta "
    "device runs (the recon config's build stops on that file)",
}

# Every class kvtop names not modelled, with its reason: the one lookup the refusal reads (`named_not_modelled`), so a
# config naming one is refused with that reason by plan, explain and the TUI, even where its model_type (or its text
# section's) has an entry (MiMo-V2.5-ASR's qwen2): the engines build the class, not the model_type.
NAMED_NOT_MODELLED: Mapping[str, str] = {**NOT_MODELLED, **SPEECH_NOT_MODELLED}

# Classes no entry lists. A config of one whose model_type (or text section's) names an entry is read by that entry,
# and the plan says so: "class … has no architecture entry of its own: read as …; not checked against the engines'
# model code" (ModelSpec.unchecked_class); else read generically (standard decoder fields: the plan says "generic
# reading: …"), or refused naming the field that stops it.
GENERIC: frozenset[str] = frozenset({
    "AriaForConditionalGeneration",
    "BailingMM2NativeForConditionalGeneration", "BailingMMNativeForConditionalGeneration",
    "BeeForConditionalGeneration", "Blip2ForConditionalGeneration",
    "Cohere2VisionForConditionalGeneration",
    "Cosmos3EdgeForConditionalGeneration",
    "Exaone4_5_ForConditionalGeneration",
    "Granite4VisionForConditionalGeneration", "HCXVisionV2ForCausalLM", "HfMoondream",
    "HyperCLOVAXForCausalLM", "InternS1ForConditionalGeneration",
    "Lfm2VlForConditionalGeneration", "LlavaLlamaForCausalLM",
    "LlavaMistralForCausalLM", "LlavaQwenForCausalLM",
    "LlavaVidForCausalLM", "MellumForCausalLM",
    "MiniCPMV4_6ForConditionalGeneration", "MiniCPMV4_7ForConditionalGeneration",
    "Phi4ForCausalLMV",
    "Step1ForCausalLM",
    "YiVLForCausalLM",
})  # fmt: skip


def verdict(class_name: str) -> tuple[Verdict, str]:
    """(what kvtop does with an engine's architecture class, why)."""
    if class_name in BY_CLASS_NAME:
        entry = BY_CLASS_NAME[class_name]
        return "entry", f"architecture entry {entry.model_type} ({entry.config_class})"
    if class_name in WRAPPERS:
        return "wrapper", "a multimodal wrapper: its language model is read through its text section"
    if (named := named_not_modelled(class_name)) is not None:
        return "not_modelled", named
    for pattern, why in _KINDS:
        if pattern.search(class_name):
            return "not_modelled", why
    if class_name in GENERIC:
        return "generic", "no entry: read generically where its config has only standard decoder fields"
    return (
        "generic",
        "not in the engines' registries kvtop read (vLLM 0.33.0, SGLang 0.5.23): read generically",
    )


def named_not_modelled(class_name: str) -> str | None:
    """The reason kvtop gives for a class it names not modelled (`NAMED_NOT_MODELLED`); None for any other class
    (an entry's class, a wrapper, a kind `_KINDS` refuses by pattern, or a generic reading)."""
    if class_name in BY_CLASS_NAME:
        return None
    return NAMED_NOT_MODELLED.get(class_name)


def draft_reason(class_name: str) -> str | None:
    """Why a config whose class is a speculative-decoding draft is not planned as the served model (an Eagle-3
    draft's `LlamaForCausalLMEagle3` with model_type llama: vLLM 0.33.0 refuses it served alone, SGLang builds a
    one-layer model); None for any other class. kvtop still reads it as the draft of a launch (--draft-model)."""
    pattern, why = _KINDS[0]
    return why if pattern.search(class_name) else None


def reason_not_modelled(class_name: str) -> str | None:
    """Why a config of this class is refused (None: it is planned, through an entry, a wrapper or generically)."""
    kind, why = verdict(class_name)
    return why if kind == "not_modelled" else None

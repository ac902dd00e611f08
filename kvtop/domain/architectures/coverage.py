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
    "Llama_Nemotron_Nano_VL", "NemotronH_Nano_VL_V2",
    "DeepseekOCRForCausalLM",  # language_config (use_mla false: plain attention); its encoders: towers_deepseek_ocr
    # speech models whose audio encoder and projector are tower data (towers_audio, towers_catalog's audio block)
    "Qwen2AudioForConditionalGeneration", "AudioFlamingo3ForConditionalGeneration",
    "Qwen2_5OmniModel", "Qwen2_5OmniForConditionalGeneration",  # the thinker only (nesting.SERVED_SECTION)
    "Qwen3OmniMoeForConditionalGeneration", "Qwen3ASRForConditionalGeneration",
    "GraniteSpeechForConditionalGeneration", "GraniteSpeechPlusForConditionalGeneration",
    "GlmAsrForConditionalGeneration",  # each engine divides its encoder its own way (TowerSplit.blocks)
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

# Decoders whose KV layout or state no entry reads yet, with what stops it.
NOT_MODELLED: Mapping[str, str] = {
    "DeepseekV4ForConditionalGeneration": DEEPSEEK_V4,
    "DeepseekV41ForCausalLM": DEEPSEEK_V4,
    "MambaForCausalLM": "attention-free (a Mamba state only): kvtop's budgets plan KV tokens",
    "Mamba2ForCausalLM": "attention-free (a Mamba2 state only): kvtop's budgets plan KV tokens",
    "FalconMambaForCausalLM": "attention-free (a Mamba state only): kvtop's budgets plan KV tokens",
    "Zamba2ForCausalLM": "Mamba2 layers with shared attention blocks (a shared-block layout no entry reads)",
    "Gemma3nForConditionalGeneration": "Gemma-3n's audio and MobileNet vision towers (its text class, "
    "Gemma3nForCausalLM, is planned)",
    "LongcatFlashNgramForCausalLM": "LongCat's n-gram embeddings and layer layout",
    "Phi3SmallForCausalLM": "block-sparse attention of Phi-3-small (no entry)",
    "PersimmonForCausalLM": "Persimmon's query/key LayerNorms over a fused QKV (no entry)",
    "Grok1ForCausalLM": "Grok-1's attention multipliers and expert layout (no entry)",
    "Grok1ModelForCausalLM": "Grok-1's attention multipliers and expert layout (no entry)",
    "MllamaForConditionalGeneration": "cross-attention image layers (an encoder-decoder KV layout)",
    "MolmoForCausalLM": "Molmo's fused attention and vision adapter (no entry)",
    "Molmo2ForConditionalGeneration": "Molmo-2's layout (no entry)",
    "Phi4MMForCausalLM": "Phi-4-multimodal's LoRA adapters and towers",
    "BailingMoeV2_5ForCausalLM": "Ling's linear-attention hybrid (its state shape has no entry yet)",
    # vLLM 0.33.0 / SGLang 0.5.23 models/bailing_moe_v3.py (and bailing_mm_v3.py): Ling-3's KDA linear-attention
    # layers (a recurrent state and short convolutions per request) between MLA layers by layer_group_size; SGLang
    # built the default of vLLM's BailingMoeV3TextConfig (20 layers, 16 of them KDA) as 32,386,121,728 B at TP 1
    "BailingMoeV3ForCausalLM": "Ling-3's KDA linear-attention hybrid (its KDA state shape and weights have no entry)",
    "BailingMoeV3VLForConditionalGeneration": "Ling-3's KDA linear-attention hybrid (its KDA state shape and weights "
    "have no entry) and its vision tower",
    "KimiK3LinearForCausalLM": "Kimi-K3's text-only class (its latent experts, gates and attention residual "
    "blocks are read only through KimiK3ForConditionalGeneration, the class checked against SGLang's build)",
    "MiniCPMSALAForCausalLM": "MiniCPM's sparse/linear attention layers (no entry)",
    "JetNemotronForCausalLM": "JetBlock linear attention (no entry)",
    "JetVLMForConditionalGeneration": "JetBlock linear attention (no entry)",
    "IQuestLoopCoderForCausalLM": "a looped decoder (layers run more than once)",
    # vLLM 0.33.0 models/dory.py: DoryDecoderLayer is an attention-only or an MLP-only layer by layer_types, the
    # recurrent layers run n_recurrent_loops times with a KV cache per loop (recurrent_kv_cache_mode "per_loop"),
    # and DoryForCausalLM raises "Dory currently supports tensor_parallel_size=1 only"
    "DoryForCausalLM": "Dory's attention-only and MLP-only layers (layer_types) looped n_recurrent_loops times with "
    "a KV cache per loop (vLLM 0.33.0 models/dory.py, TP 1 only): no entry reads them",
    "HrmTextForCausalLM": "a hierarchical recurrent model (no entry)",
    # SGLang 0.5.23 models/zaya.py and configs/zaya.py: "hybrid" layers alternate CCA attention (q and k through two
    # causal Conv1d over q‖k, v from two projections of the current and previous hidden state) and a ZayaBlock
    # (a router MLP over a down-projected state, 16 experts + a skip), with residual scaling vectors; each CCA layer
    # keeps K and V and a per-request conv state of two buffers (mamba2_cache_params: (q+kv heads) × head_dim / TP
    # × (cca_time0 + cca_time1 − 2), and the whole hidden_size × 1)
    "ZayaForCausalLM": "Zaya's compressed convolutional attention (CCA: a conv over q and k, two conv buffers of "
    "state per request) alternating with router-MLP expert blocks on its 'hybrid' layers: no entry reads them",
    "Glm5NextForCausalLM": "GLM-5-Next's layout (no entry yet)",
    "Glm5NextForConditionalGeneration": "GLM-5-Next's layout (no entry yet)",
    "Qwen4ExpForCausalLM": "Qwen4-Exp's per-layer embedding table (no entry yet)",
    "Qwen4ExpForConditionalGeneration": "Qwen4-Exp's per-layer embedding table (no entry yet)",
    "Step5ForCausalLM": "Step-5's layout (no entry yet)",
    "Step5ForConditionalGeneration": "Step-5's layout (no entry yet)",
    "Step3TextForCausalLM": "Step-3's attention-FFN disaggregated layout (no entry yet)",
    "Step3VLForConditionalGeneration": "Step-3's attention-FFN disaggregated layout (no entry yet)",
    "HYV4ForCausalLM": "Hunyuan-V4's indexer and layer types (no entry yet)",
    "MistralLarge3ForCausalLM": "Mistral-Large-3's params.json layout (no config.json entry)",
    "InklingForCausalLM": "Inkling's layout (no entry yet)",
    "InklingForConditionalGeneration": "Inkling's layout (no entry yet)",
    "MuseSparkForConditionalGeneration": "Muse's layout (no entry yet)",
    "BeamForCausalLM": "Beam's layout (no entry yet)",
    # SGLang 0.5.23 models/interns2_mobius.py: the routed experts live in num_blocks banks (model.meta_mlp, checked
    # "physical routed-expert bank count does not match num_blocks") beside the layers, and each layer's kind comes
    # from the checkpoint's own text_config.layer_types (configs/interns2_mobius.py keeps it "verbatim"; its default
    # has none); vLLM 0.33.0 reads the config only through the checkpoint's remote code
    # vLLM 0.33.0 models/alice_ai.py: layer_types picks, per layer, full attention (Qwen3NextAttention) or a KDA
    # linear-attention layer (KimiGatedDeltaNetAttention, a recurrent state per request: kda_state_shape), with an
    # attention-residual block (_AttentionResidualFinal); no config class in transformers or vLLM (remote code)
    "AliceAIForCausalLM": "AliceAI's KDA linear-attention layers (a recurrent state per request) and attention "
    "residuals: no entry reads them",
    # vLLM 0.33.0 models/domyn_edge.py DomynEdgeDecoderLayer: each layer's head_dim from per_layer_config, its
    # sliding window from window_sizes and RoPE or none from position_layers, four norms a layer
    "DomynEdgeForCausalLM": "DomynEdge's per-layer head sizes, windows and positions (per_layer_config, "
    "window_sizes, position_layers): no entry reads them",
    # vLLM 0.33.0 models/k2_horizon.py and SGLang 0.5.23 models/xllm.py: value experts (MoVA: mova_num_experts,
    # mova_num_experts_per_tok) beside the routed MLP experts, an attention output gate (attention_gate_func) and
    # grouped RMSNorms (layernorm_num_groups); SGLang's K2HorizonConfig is an empty shell (sizes from the checkpoint)
    "K2HorizonForCausalLM": "K2-Horizon's value experts (MoVA: mova_num_experts), attention output gates "
    "(attention_gate_func) and grouped norms (layernorm_num_groups): no entry reads them",
    "InternS2MobiusForConditionalGeneration": "Intern-S2-Mobius's routed-expert banks (meta_mlp: num_blocks banks "
    "beside the layers) and its checkpoint's per-layer schedule (text_config.layer_types): no entry reads them",
}

# Speech classes read from their engines' model code that stay not modelled, each with what stops it (the audio
# classes that are planned: towers_audio; the rest keep _KINDS' general reason).
SPEECH_NOT_MODELLED: Mapping[str, str] = {
    "WhisperForConditionalGeneration": "an encoder-decoder: its decoder's cross-attention KV over the audio "
    "encoder's states (vLLM 0.33.0 / SGLang 0.5.23 whisper.py), a KV layout kvtop's budgets do not plan",
    "CohereAsrForConditionalGeneration": "an encoder-decoder ASR model: its decoder's cross-attention KV (vLLM 0.33.0 "
    "cohere_asr.py CohereASRDecoderLayer), a KV layout kvtop's budgets do not plan",
    "VoxtralForConditionalGeneration": "Voxtral: vLLM 0.33.0 voxtral.py builds it from Mistral's params.json form "
    "(audio_config.downsample_factor, window_size and the tokenizer), SGLang 0.5.23 voxtral.py from config.json "
    "(downsample_factor from intermediate_size ÷ hidden_size), so one config.json is not what both build; its "
    "split Whisper encoder and adapter have no tower kind yet",
    "VoxtralRealtimeGeneration": "Voxtral's streaming class (vLLM 0.33.0 voxtral_realtime.py: a causal Whisper "
    "encoder with time embeddings): no tower kind yet",
    "UltravoxModel": "Ultravox: its language model is a checkpoint named by `text_model_id` (vLLM 0.33.0 "
    "configs/ultravox.py loads its config) or an inline text_config, beside vLLM's split Whisper encoder "
    "(whisper.py) and a stacked-frame projector: no tower kind yet",
    "Qwen3ASRRealtimeGeneration": "Qwen3-ASR's streaming class (vLLM 0.33.0 qwen3_asr_realtime.py over "
    "Qwen3ASRForConditionalGeneration): not checked against its build",
    "MiDashengLMModel": "MiDashengLM's Dasheng audio transformer (a mel frontend and a 2-D patch embedding; vLLM "
    "0.33.0 / SGLang 0.5.23 midashenglm.py) and subsampling projector: no tower kind yet",
    "MoonshotKimiaForCausalLM": "Kimi-Audio: vLLM 0.33.0 kimi_audio.py sizes its Whisper encoder from the "
    "checkpoint's whisper-large-v3/config.json (KimiAudioWhisperEncoder), not from config.json",
    "FireRedASR2ForConditionalGeneration": "FireRedASR2's Conformer encoder and adapter (vLLM 0.33.0 "
    "fireredasr2.py): no tower kind yet",
    "FunASRForConditionalGeneration": "FunASR's SANM encoder (vLLM 0.33.0 funasr.py SenseVoiceEncoderSmall): no "
    "tower kind yet",
    "FunAudioChatForConditionalGeneration": "Fun-Audio-Chat's continuous and discrete audio encoders (vLLM 0.33.0 "
    "funaudiochat.py): no tower kind yet",
}

# Decoders without an entry whose configs kvtop reads generically (standard decoder fields: it says so in
# the plan, "generic reading: …"), or refuses naming the field that stops it.
GENERIC: frozenset[str] = frozenset({
    "Alpamayo2Super", "AriaForConditionalGeneration",
    "BailingMM2NativeForConditionalGeneration", "BailingMMNativeForConditionalGeneration", "BailingMoEForCausalLM",
    "BailingMoeForCausalLM", "BailingMoeV2ForCausalLM", "BeeForConditionalGeneration", "Blip2ForConditionalGeneration",
    "Cohere2VisionForConditionalGeneration", "CohereCompassForConditionalGeneration",
    "Cosmos3EdgeForConditionalGeneration", "Cosmos3ForConditionalGeneration",
    "Dots3NoteForCausalLM", "DotsVLMForCausalLM", "Ernie4_5_VLMoeForConditionalGeneration",
    "Exaone4_5_ForConditionalGeneration", "FlintForCausalLM", "GLM4VForCausalLM",
    "Granite4VisionForConditionalGeneration", "HCXVisionV2ForCausalLM", "HfMoondream",
    "HyperCLOVAXForCausalLM", "InternS1ForConditionalGeneration",
    "InternS2PreviewForConditionalGeneration", "IsaacForConditionalGeneration",
    "KananaVForConditionalGeneration", "KeyeForConditionalGeneration", "KeyeVL1_5ForConditionalGeneration",
    "Lfm2VlForConditionalGeneration", "LlavaLlamaForCausalLM",
    "LlavaMistralForCausalLM", "LlavaOnevision2ForConditionalGeneration", "LlavaQwenForCausalLM",
    "LlavaVidForCausalLM", "MellumForCausalLM", "MiMoV2OmniForCausalLM", "MindSporeForCausalLM",
    "MiniCPMV", "MiniCPMV4_6ForConditionalGeneration", "MiniCPMV4_7ForConditionalGeneration",
    "MossVLForConditionalGeneration", "MultiModalityCausalLM",
    "NVILAForConditionalGeneration", "NVILALiteForConditionalGeneration",
    "NemotronH_Super_Omni_Reasoning_V3", "OpenCUAForConditionalGeneration", "OpenPanguVLForConditionalGeneration",
    "Ovis", "Ovis2_5", "Ovis2_6ForCausalLM", "Ovis2_6_MoeForCausalLM", "POINTSV15ChatModel",
    "PanguProMoEV2ForCausalLM", "PanguUltraMoEForCausalLM", "Param2MoEForCausalLM",
    "Phi4ForCausalLMV", "Plamo3ForCausalLM", "RForConditionalGeneration", "RadioMBartPrefixForCausalLM",
    "Rnj1ForCausalLM", "Sarashina2VisionForCausalLM", "SarvamMLAForCausalLM", "SarvamMoEForCausalLM",
    "SolarForCausalLM", "Step1ForCausalLM", "StepVLForConditionalGeneration",
    "TeleChat2ForCausalLM", "TeleFLMForCausalLM", "XllmForCausalLM", "XverseMoeForCausalLM", "YiVLForCausalLM",
})  # fmt: skip


def verdict(class_name: str) -> tuple[Verdict, str]:
    """(what kvtop does with an engine's architecture class, why)."""
    if class_name in BY_CLASS_NAME:
        entry = BY_CLASS_NAME[class_name]
        return "entry", f"architecture entry {entry.model_type} ({entry.config_class})"
    if class_name in WRAPPERS:
        return "wrapper", "a multimodal wrapper: its language model is read through its text section"
    if class_name in NOT_MODELLED:
        return "not_modelled", NOT_MODELLED[class_name]
    if class_name in SPEECH_NOT_MODELLED:
        return "not_modelled", SPEECH_NOT_MODELLED[class_name]
    for pattern, why in _KINDS:
        if pattern.search(class_name):
            return "not_modelled", why
    if class_name in GENERIC:
        return "generic", "no entry: read generically where its config has only standard decoder fields"
    return (
        "generic",
        "not in the engines' registries kvtop read (vLLM 0.33.0, SGLang 0.5.23): read generically",
    )


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

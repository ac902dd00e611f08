"""Dense decoders (every layer attention + one MLP): Llama and its many twins, Qwen, Gemma, Phi, GPT-2 …

Each entry names its config class and the file its defaults come from (`defaults.py`), and what its modules
hold beyond Llama's (biases, extra norms, LayerNorm with bias, an ungated MLP, learned positions).
"""

from __future__ import annotations

from kvtop.domain.architectures import defaults as d
from kvtop.domain.architectures import defaults_more as m
from kvtop.domain.architectures import towers_catalog as t
from kvtop.domain.architectures.defaults import tf
from kvtop.domain.architectures.description import Architecture, Attention, Geometry
from kvtop.domain.architectures.layer_rules import (
    AllSliding,
    Alternate,
    EveryNthFull,
    Qwen2Window,
)
from kvtop.domain.model import BodyShape

A = Architecture
QK_NORM = Attention(qk_norm=True)
GEMMA_BODY = BodyShape(norms_per_layer=4)  # input, post-attention, pre- and post-feedforward
LAYERNORM = BodyShape(norm_bias=True)

DENSE: tuple[Architecture, ...] = (
    A("llama", "LlamaConfig", tf("llama"), d.LLAMA,
      ("LlamaForCausalLM", "LLaMAForCausalLM", "AquilaForCausalLM", "AquilaModel", "CwmForCausalLM",
       "IQuestCoderForCausalLM", "TeleChat3ForCausalLM", "Fairseq2LlamaForCausalLM",
       "MotifForCausalLM", "YiForCausalLM", "TorchNativeLlamaForCausalLM",
       # Tele-FLM (its checkpoints' model_type teleflm): vLLM 0.33.0 teleflm.py TeleFLMForCausalLM(LlamaForCausalLM),
       # SGLang 0.5.23 teleflm.py:50-90 TeleFLMModel(LlamaModel): a Llama body; use_mup's input_mult, output_mult and
       # mup_scale_factor scale embeddings and logits, sizing nothing
       "TeleFLMForCausalLM")),
    A("granite", "GraniteConfig", tf("granite"), d.LLAMA, ("GraniteForCausalLM", "GraniteSWAForCausalLM")),
    A("olmo", "OlmoConfig", tf("olmo"), d.OLMO2, ("OlmoForCausalLM",),
      body=BodyShape(norms_per_layer=0, final_norm=False)),  # OlmoLayerNorm: no parameters
    A("olmo2", "Olmo2Config", tf("olmo2"), d.OLMO2, ("Olmo2ForCausalLM",),
      attention=QK_NORM, body=BodyShape(qk_norm_width="all")),
    A("olmo3", "Olmo3Config", tf("olmo3"), d.OLMO3, ("Olmo3ForCausalLM",),
      layers=EveryNthFull(every_field=None, every=4), attention=QK_NORM, body=BodyShape(qk_norm_width="all")),
    A("internlm", "InternLMConfig", "internlm/internlm-7b configuration_internlm.py", d.INTERNLM,
      ("InternLMForCausalLM",), attention=Attention(o_bias_fields=("bias",))),
    A("internlm2", "InternLM2Config", "internlm/internlm2-7b configuration_internlm2.py", d.INTERNLM,
      ("InternLM2ForCausalLM",)),
    A("internlm3", "InternLM3Config", tf("internlm3"), d.INTERNLM3, ("InternLM3ForCausalLM",)),
    A("mistral", "MistralConfig", tf("mistral"), d.MISTRAL, ("MistralForCausalLM",)),
    A("ministral", "MinistralConfig", tf("ministral"), d.MISTRAL, ("MinistralForCausalLM",), layers=AllSliding()),
    A("phi3", "Phi3Config", tf("phi3"), d.PHI3, ("Phi3ForCausalLM", "TorchNativePhi3ForCausalLM")),
    # OpenCUAForConditionalGeneration: vLLM 0.33.0 opencua.py builds Qwen2ForCausalLM from text_config (model_type
    # qwen2) beside Qwen2.5-VL's ViT (towers_catalog.BY_OUTER_TYPE["opencua"]); equal at TP 1 and 2 in the sweep
    A("qwen2", "Qwen2Config", tf("qwen2"), d.QWEN2, ("Qwen2ForCausalLM", "OpenCUAForConditionalGeneration"),
      layers=Qwen2Window(), attention=Attention(qkv_bias=True)),
    A("qwen2_vl_text", "Qwen2VLTextConfig", tf("qwen2_vl"), d.QWEN2_VL_TEXT, ("Qwen2VLForConditionalGeneration",),
      layers=Qwen2Window(), attention=Attention(qkv_bias=True), tower=t.QWEN2_VL),
    A("qwen2_5_vl_text", "Qwen2_5_VLTextConfig", tf("qwen2_5_vl"), d.QWEN2_VL_TEXT,
      ("Qwen2_5_VLForConditionalGeneration",), layers=Qwen2Window(), attention=Attention(qkv_bias=True),
      tower=t.QWEN2_5_VL),
    # FunASRForConditionalGeneration: vLLM 0.33.0 funasr.py's config is a Qwen3Config (Qwen3Model and a LM head), its
    # SANM encoder read by class (towers_catalog.TOWERS_BY_CLASS)
    # IsaacForConditionalGeneration: vLLM 0.33.0 isaac.py builds its language model as Qwen3ForCausalLM
    # (init_vllm_registered_model, architectures=["Qwen3ForCausalLM"]) from text_config (model_type qwen3), its
    # SigLIP2 tower read by its outer model_type (towers_isaac); equal on vLLM 0.33.0 at TP 1 and 2 in the registry
    # sweep (default--IsaacForConditionalGeneration: language model, tower and KV specs); SGLang 0.5.23 registers none
    # KeyeForConditionalGeneration / KeyeVL1_5ForConditionalGeneration: vLLM 0.33.0 keye.py builds Qwen3ForCausalLM
    # over the top-level config (model_type Keye / KeyeVL1_5), its SigLIP tower by class (towers_keye);
    # RForConditionalGeneration (R-4B): vLLM 0.33.0 rvl.py, llava-onevision's layout over a Qwen3 text_config, its
    # tower by outer model_type rvl (towers_bee); each equal at TP 1 and 2 in the registry sweep
    A("qwen3", "Qwen3Config", tf("qwen3"), d.QWEN3,
      ("Qwen3ForCausalLM", "FunASRForConditionalGeneration", "IsaacForConditionalGeneration",
       "KeyeForConditionalGeneration", "KeyeVL1_5ForConditionalGeneration", "RForConditionalGeneration"),
      layers=Qwen2Window(), attention=QK_NORM),
    # Cosmos3ForConditionalGeneration (vLLM 0.33.0 and SGLang 0.5.23 cosmos3.py) and Alpamayo2Super (vLLM 0.33.0
    # alpamayo2_super.py, SGLang 0.5.23 registers none) subclass Qwen3VLForConditionalGeneration: its text model and
    # its tower (this entry's), equal at TP 1 and 2 in the registry sweep's default configs (language model, tower,
    # KV specs; docs/fidelity_registry.md)
    A("qwen3_vl_text", "Qwen3VLTextConfig", tf("qwen3_vl"), d.QWEN3_VL_TEXT,
      ("Qwen3VLForConditionalGeneration", "Cosmos3ForConditionalGeneration", "Alpamayo2Super"),
      attention=QK_NORM, tower=t.QWEN3_VL),
    A("gemma", "GemmaConfig", tf("gemma"), d.GEMMA, ("GemmaForCausalLM",)),
    A("gemma2", "Gemma2Config", tf("gemma2"), d.GEMMA2, ("Gemma2ForCausalLM",), layers=Alternate(), body=GEMMA_BODY),
    A("gemma3_text", "Gemma3TextConfig", tf("gemma3"), d.GEMMA3_TEXT,
      ("Gemma3ForCausalLM", "Gemma3ForConditionalGeneration"), layers=EveryNthFull(), attention=QK_NORM,
      body=GEMMA_BODY, tower=t.GEMMA3_SIGLIP),
    # Muse-Glimmer (held-out wave 3): Llama's qkv with its own output gate per channel (output_gate_proj,
    # ColumnParallelLinear hidden -> heads x head_dim, no bias), Gemma's four norms a layer, weightless q/k norms,
    # sliding layers from layer_types (iRoPE: NoPE on the full ones); its vision encoder, adapter and projection
    # where the config has a vision_config (towers_muse.py) (vLLM 0.33.0 / SGLang 0.5.23 models/muse_glimmer.py
    # MuseGlimmerAttention, MuseGlimmerDecoderLayer, MuseGlimmerVisionEncoder)
    A("muse_glimmer_text", "MuseGlimmerTextConfig", tf("muse_glimmer"), m.MUSE_GLIMMER_TEXT,
      ("MuseGlimmerForCausalLM", "MuseGlimmerForConditionalGeneration"), attention=Attention(output_gate_proj=True),
      body=GEMMA_BODY, tower=t.MUSE_GLIMMER),
)  # fmt: skip

__all__ = ["DENSE", "Geometry", "LAYERNORM"]

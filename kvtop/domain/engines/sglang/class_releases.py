"""The first SGLang release that registers each model class kvtop's SGLang rules name: an earlier release is refused.

`ModelRegistry` registers every `EntryClass` of sglang/srt/models/*.py by its class name; a config whose
`architectures` names none of them stops the launch: "Model architectures ['X'] are not supported for now."
(srt/models/registry.py `_raise_for_unsupported`, read at 0.4.0 and 0.4.6.post5) before the Transformers backend,
and from 0.4.7 (TransformersForCausalLM's first `EntryClass`) "Cannot find model module. 'X' is not a registered
model in the Transformers library …" (srt/model_loader/utils.py `resolve_transformers_arch`, read at 0.4.7, 0.5.3,
0.5.6.post2, 0.5.23) unless the transformers its wheel pins has the class (then its Transformers backend may serve
it: not checked) or the config's auto_map names remote code (not checked either).

Read from every SGLang wheel of releases.py's calendar, 0.4.0 … 0.5.23 (each `EntryClass`, parsed with `ast` as
benchmarks/engine_registries/read_registries.py does; the transformers pin from each wheel's METADATA): only the
classes kvtop's SGLang rules name (vocab_split.py, refusals.py, weights_*.py, …). Each row holds from its first
release through 0.5.23 (no class was absent at a release after its first). A release before 0.4.0 or after 0.5.23
is not read: the registry table (architectures.py) decides, or says "not checked".
"""

from __future__ import annotations

from typing import NamedTuple

from kvtop.domain.engine_architectures import ArchitectureCheck
from kvtop.domain.engines.versions import Release, ResolvedVersion, parse_release

READ_FIRST, READ_LAST = "0.4.0", "0.5.23"
BACKEND_FIRST = "0.4.7"  # models/transformers.py TransformersForCausalLM's first EntryClass: the fallback
SOURCE = f"every SGLang wheel {READ_FIRST} … {READ_LAST} read"


class ClassFirst(NamedTuple):
    """A model class and the first release whose wheel registers it, with the file that does."""

    architecture: str
    first: str
    file: str  # python/sglang/srt/models/<file> at that release


# class, first release, file (srt/models/) at that release
_FIRST = """
AfmoeForCausalLM 0.5.8 afmoe.py
BailingMM2NativeForConditionalGeneration 0.5.21 bailing_mm.py
BailingMMNativeForConditionalGeneration 0.5.21 bailing_mm.py
BailingMoEForCausalLM 0.5.3rc0 bailing_moe.py
BailingMoeForCausalLM 0.5.0rc0 bailing_moe.py
BailingMoeV2ForCausalLM 0.5.3rc0 bailing_moe.py
BailingMoeV2_5ForCausalLM 0.5.9 bailing_moe_linear.py
BeamForCausalLM 0.5.23 beam.py
ChatGLMModel 0.4.0 chatglm.py
Cohere2VisionForConditionalGeneration 0.5.13 cohere2_vision.py
DbrxForCausalLM 0.4.0 dbrx.py
DeciLMForCausalLM 0.5.1 nemotron_nas.py
DeepseekOCRForCausalLM 0.5.4 deepseek_ocr.py
DeepseekV2ForCausalLM 0.4.0 deepseek_v2.py
DeepseekV32ForCausalLM 0.5.3rc2 deepseek_v2.py
DeepseekV3ForCausalLM 0.4.1 deepseek_v2.py
DeepseekV3ForCausalLMNextN 0.4.3.post1 deepseek_nextn.py
DeepseekV4ForCausalLM 0.5.12 deepseek_v4.py
DeepseekV4ForCausalLMDSpark 0.5.16 deepseek_v4_dspark.py
DeepseekV4ForCausalLMNextN 0.5.12 deepseek_v4_nextn.py
DeepseekVL2ForCausalLM 0.4.4.post2 deepseek_vl2.py
DiffusionGemmaForBlockDiffusion 0.5.21 gemma4_diffusion.py
Dots3NoteForCausalLM 0.5.19 dots3.py
DotsVLMForCausalLM 0.5.3rc0 dots_vlm.py
EmbeddingGemma2Model 0.5.22 embedding_gemma2.py
Ernie4_5_MoeForCausalLM 0.5.0rc0 ernie4.py
ExaoneForCausalLM 0.4.0 exaone.py
FalconH1ForCausalLM 0.5.3rc2 falcon_h1.py
FalconMambaForCausalLM 0.5.20 falcon_mamba.py
Gemma3ForCausalLM 0.4.4.post2 gemma3_causal.py
Gemma3ForConditionalGeneration 0.4.4.post2 gemma3_mm.py
Gemma3nForCausalLM 0.4.8.post1 gemma3n_causal.py
Gemma3nForConditionalGeneration 0.4.8.post1 gemma3n_mm.py
Gemma4ForCausalLM 0.5.11 gemma4_causal.py
Gemma4ForConditionalGeneration 0.5.11 gemma4_mm.py
Gemma4UnifiedForConditionalGeneration 0.5.13 gemma4_unified.py
Glm4MoeForCausalLM 0.4.9.post5 glm4_moe.py
Glm4MoeLiteForCausalLM 0.5.8 glm4_moe_lite.py
Glm5NextForConditionalGeneration 0.5.20 glm5_next.py
GlmMoeDsaForCausalLM 0.5.9 glm4_moe.py
GlmMoeDsaForCausalLMNextN 0.5.16 glm4_moe.py
GptOssForCausalLM 0.5.0rc0 gpt_oss.py
GraniteMoeHybridForCausalLM 0.5.9 granitemoehybrid.py
GraniteMoeSWAForCausalLM 0.5.19 granitemoe.py
GraniteSWAForCausalLM 0.5.19 granite.py
Grok1ForCausalLM 0.4.0 grok.py
Grok1ModelForCausalLM 0.4.0 grok.py
HYV3ForCausalLM 0.5.11 hunyuan_v3.py
HYV4ForCausalLM 0.5.20 hunyuan_v4.py
HYV4ForCausalLMNextN 0.5.20 hunyuan_v4_nextn.py
HunYuanDenseV1ForCausalLM 0.4.9.post3 hunyuan.py
IQuestLoopCoderForCausalLM 0.5.8 iquest_loopcoder.py
IQuestQ1ForCausalLM 0.5.21 iquest_q1.py
IQuestQ1MTP 0.5.21 iquest_q1_mtp.py
InklingForConditionalGeneration 0.5.16 inkling.py
InklingForConditionalGenerationMTP 0.5.16 inkling.py
InternLM2ForCausalLM 0.4.0 internlm2.py
InternS1ProForConditionalGeneration 0.5.9 interns1pro.py
InternS2MobiusForConditionalGeneration 0.5.18 interns2_mobius.py
InternS2PreviewForConditionalGeneration 0.5.12 interns2preview.py
InternVLChatModel 0.4.6.post3 internvl.py
KimiK25ForConditionalGeneration 0.5.9 kimi_k25.py
KimiK3ForConditionalGeneration 0.5.17 kimi_k3.py
KimiK3LinearForCausalLM 0.5.19 kimi_k3.py
KimiLinearForCausalLM 0.5.4.post2 kimi_linear.py
KimiVLForConditionalGeneration 0.4.6.post2 kimi_vl.py
LLaDA2MoeModelLM 0.5.6 llada2.py
LagunaForCausalLM 0.5.12 laguna.py
Lfm2ForCausalLM 0.5.9 lfm2.py
Lfm2MoeForCausalLM 0.5.9 lfm2_moe.py
Lfm2VlForConditionalGeneration 0.5.10 lfm2_vl.py
Llama4ForCausalLM 0.4.5 llama4.py
Llama4ForConditionalGeneration 0.4.5 mllama4.py
LlamaForCausalLM 0.4.0 llama.py
LlavaForConditionalGeneration 0.4.6.post4 llava.py
LlavaLlamaForCausalLM 0.4.0 llava.py
LlavaMistralForCausalLM 0.4.0 llava.py
LlavaQwenForCausalLM 0.4.0 llava.py
LlavaVidForCausalLM 0.4.0 llavavid.py
LongcatFlashForCausalLM 0.5.2rc0 longcat_flash.py
LongcatFlashForCausalLMNextN 0.5.2rc0 longcat_flash_nextn.py
Mamba2ForCausalLM 0.5.20 mamba2.py
MellumForCausalLM 0.5.16 mellum.py
MiMoForCausalLM 0.4.6.post3 xiaomi_mimo.py
MiMoV2FlashForCausalLM 0.5.7 mimo_v2_flash.py
MiMoV2ForCausalLM 0.5.11 mimo_v2.py
MiMoV2MTP 0.5.7 mimo_v2_flash_nextn.py
MiniCPM3ForCausalLM 0.4.0 minicpm3.py
MiniCPMForCausalLM 0.4.0 minicpm.py
MiniCPMSALAForCausalLM 0.5.19 minicpm.py
MiniCPMV4_6ForConditionalGeneration 0.5.12 minicpmv.py
MiniMaxM2ForCausalLM 0.5.4.post1 minimax_m2.py
MiniMaxM3SparseForCausalLM 0.5.16 minimax_m3.py
MiniMaxM3SparseForConditionalGeneration 0.5.16 minimax_m3_vl.py
Mistral3ForConditionalGeneration 0.4.6.post5 mistral.py
MistralForCausalLM 0.4.0 mistral.py
MistralLarge3ForCausalLM 0.5.6.post1 mistral_large_3.py
MixtralForCausalLM 0.4.0 mixtral.py
MuseGlimmerForCausalLM 0.5.18 muse_glimmer.py
MuseGlimmerForConditionalGeneration 0.5.18 muse_glimmer.py
MuseSparkForConditionalGeneration 0.5.23 muse_spark_omni.py
NanbeigeForCausalLM 0.5.20 nanbeige.py
NemotronHForCausalLM 0.5.3.post1 nemotron_h.py
NemotronHForCausalLMMTP 0.5.8 nemotron_h_mtp.py
NemotronHPuzzleForCausalLM 0.5.13 nemotron_h.py
NemotronH_Nano_VL_V2 0.5.6 nano_nemotron_vl.py
NemotronH_Omni_Reasoning_V3 0.5.20 nano_nemotron_vl.py
OPTForCausalLM 0.5.2 opt.py
Olmo2ForCausalLM 0.4.0 olmo2.py
PaddleOCRVLForConditionalGeneration 0.5.6.post2 paddleocr_vl.py
Phi3ForCausalLM 0.4.0 llama.py
PixtralForConditionalGeneration 0.5.6.post1 pixtral.py
QWenLMHeadModel 0.4.0 qwen.py
QuantMixtralForCausalLM 0.4.0 mixtral_quant.py
Qwen2AudioForConditionalGeneration 0.4.9 qwen2_audio.py
Qwen2ForCausalLM 0.4.0 qwen2.py
Qwen2MoeForCausalLM 0.4.0 qwen2_moe.py
Qwen2VLForConditionalGeneration 0.4.0 qwen2_vl.py
Qwen2_5_VLForConditionalGeneration 0.4.3.post1 qwen2_5_vl.py
Qwen3ForCausalLM 0.4.5.post2 qwen3.py
Qwen3MoeForCausalLM 0.4.5.post2 qwen3_moe.py
Qwen3NextForCausalLM 0.5.2 qwen3_next.py
Qwen3OmniMoeForConditionalGeneration 0.5.4 qwen3_omni_moe.py
Qwen3VLForConditionalGeneration 0.5.3rc2 qwen3_vl.py
Qwen3VLMoeForConditionalGeneration 0.5.3rc2 qwen3_vl_moe.py
Qwen3_5ForCausalLM 0.5.17 qwen3_5_text.py
Qwen3_5ForConditionalGeneration 0.5.9 qwen3_5.py
Qwen3_5MoeForCausalLM 0.5.17 qwen3_5_text.py
Qwen3_5MoeForConditionalGeneration 0.5.9 qwen3_5.py
Qwen4ExpForConditionalGeneration 0.5.20 qwen4_exp.py
SarvamMLAForCausalLM 0.5.10rc0 sarvam_moe.py
StableLmForCausalLM 0.4.0 stablelm.py
Step3VLForConditionalGeneration 0.4.10 step3_vl.py
Step3p5ForCausalLM 0.5.9 step3p5.py
Step3p5MTP 0.5.9 step3p5_mtp.py
Step3p7ForConditionalGeneration 0.5.13 step3p7.py
TorchNativeLlamaForCausalLM 0.4.0 torch_native_llama.py
TorchNativePhi3ForCausalLM 0.4.0 torch_native_llama.py
UnlimitedOCRForCausalLM 0.5.15 unlimited_ocr.py
WhisperForConditionalGeneration 0.5.10rc0 whisper.py
XverseForCausalLM 0.4.0 xverse.py
YiVLForCausalLM 0.4.0 yivl.py
ZayaForCausalLM 0.5.14 zaya.py
"""
FIRST: dict[str, ClassFirst] = {
    row[0]: ClassFirst(row[0], row[1], row[2]) for row in (line.split() for line in _FIRST.strip().splitlines())
}

# The transformers each wheel pins (METADATA `Requires-Dist: transformers==…`), from the Transformers backend's first
# release on: release it holds from, transformers.
_PINS = """
0.4.7 4.52.3 0.4.9 4.53.0 0.4.9.post3 4.53.2 0.4.9.post5 4.54.0 0.4.10 4.54.1 0.5.0rc0 4.55.0 0.5.0rc2 4.55.2
0.5.2rc0 4.56.0 0.5.2 4.56.1 0.5.3rc2 4.57.0 0.5.3.post2 4.57.1 0.5.6.post1 5.0.0rc0 0.5.6.post2 4.57.1
0.5.10rc0 5.3.0 0.5.11 5.6.0 0.5.13 5.8.1 0.5.15 5.12.1 0.5.22 5.19.0
"""
_PIN_WORDS = _PINS.split()
PINS: tuple[tuple[str, str], ...] = tuple(zip(_PIN_WORDS[0::2], _PIN_WORDS[1::2], strict=True))

# Classes the pinned transformers defines (transformers/models/*/modeling_*.py `class X(`, read in each pinned wheel)
# at releases before SGLang's own: class, first and last SGLang release of the span. There the Transformers backend
# takes transformers' class where it is backend-compatible (not read): "not checked", never refused.
_TRANSFORMERS_SPANS = """
AfmoeForCausalLM 0.5.6.post1 0.5.6.post1
Cohere2VisionForConditionalGeneration 0.5.0rc0 0.5.12.post1
DiffusionGemmaForBlockDiffusion 0.5.15 0.5.20
Ernie4_5_MoeForCausalLM 0.4.9.post5 0.4.10.post2
FalconH1ForCausalLM 0.4.9 0.5.3rc0
FalconMambaForCausalLM 0.4.7 0.5.19
GraniteMoeHybridForCausalLM 0.4.7 0.5.8.post1
Lfm2ForCausalLM 0.4.9.post5 0.5.8.post1
Lfm2MoeForCausalLM 0.5.6.post1 0.5.6.post1
Lfm2VlForConditionalGeneration 0.5.3rc2 0.5.10rc0
Mamba2ForCausalLM 0.4.7 0.5.19
MellumForCausalLM 0.5.15 0.5.15.post1
MiniMaxM3SparseForConditionalGeneration 0.5.15 0.5.15.post1
OPTForCausalLM 0.4.7 0.5.2rc2
Qwen2AudioForConditionalGeneration 0.4.7 0.4.8.post1
Qwen3OmniMoeForConditionalGeneration 0.5.3rc2 0.5.3.post3
Qwen3_5ForCausalLM 0.5.10rc0 0.5.16
Qwen3_5MoeForCausalLM 0.5.10rc0 0.5.16
WhisperForConditionalGeneration 0.4.7 0.5.9
"""
TRANSFORMERS_SPANS: dict[str, tuple[str, str]] = {
    row[0]: (row[1], row[2]) for row in (line.split() for line in _TRANSFORMERS_SPANS.strip().splitlines())
}


def _release(text: str) -> Release:
    """A release text of the tables above, parsed (each parses: the wheels' own versions)."""
    found = parse_release(text)
    assert found is not None, text
    return found


def pinned_transformers(release: Release) -> str | None:
    """The transformers the wheel of `release` pins (None before the Transformers backend)."""
    pins = [pin for since, pin in PINS if _release(since) <= release]
    return pins[-1] if pins else None


def _in_transformers(architecture: str, release: Release) -> bool:
    span = TRANSFORMERS_SPANS.get(architecture)
    return span is not None and _release(span[0]) <= release <= _release(span[1])


def _engine_words(architecture: str, release: Release) -> str:
    """SGLang's own error for a class it does not register (and that transformers has not got), at `release`."""
    if release < _release(BACKEND_FIRST):
        return f"Model architectures ['{architecture}'] are not supported for now."
    return f"Cannot find model module. '{architecture}' is not a registered model in the Transformers library"


def first_release_check(
    architecture: str, version: ResolvedVersion, *, custom_code: bool, words: str = ""
) -> ArchitectureCheck | None:
    """SGLang's verdict on a class FIRST names at a stated release 0.4.0 … 0.5.23: registered from its first release
    on, refused before it (by name: which release added it) unless its transformers or remote code may stand in;
    None where the table does not decide (a class it does not name, no release stated, a release not read).
    `words`: the engine's error as a registry list read at that very release words it (architectures.py)."""
    row, release = FIRST.get(architecture), version.release
    if row is None or release is None or not _release(READ_FIRST) <= release <= _release(READ_LAST):
        return None
    source = f"python/sglang/srt/models/{row.file} EntryClass, SGLang {row.first} wheel ({SOURCE})"
    label, added = version.label, f"added in {row.first}"
    if release >= _release(row.first):
        return ArchitectureCheck(state="registered", architecture=architecture, source=source,
                                 message=f"SGLang {label} registers {architecture} ({added})")  # fmt: skip
    if version.approximate:  # a release inferred from a log's dates or fields: a log that ran the class is later
        return ArchitectureCheck(state="not_checked", architecture=architecture, source=source,
                                 message=f"SGLang {label} (inferred) predates {architecture} ({added}): the release "
                                 "the log ran is later; not checked")  # fmt: skip
    pin = pinned_transformers(release)
    if _in_transformers(architecture, release):
        return ArchitectureCheck(state="not_checked", architecture=architecture, source=source,
                                 message=f"SGLang {label} has no class of its own for {architecture} ({added}); the "
                                 f"transformers {pin} its wheel pins has one, which its Transformers backend may serve "
                                 "where backend-compatible: not checked")  # fmt: skip
    if custom_code and pin is not None:
        return ArchitectureCheck(state="custom_code", architecture=architecture, source=source,
                                 message=f"SGLang {label} has no {architecture} ({added}); the config's auto_map names "
                                 "remote code, which it may load with --trust-remote-code (not checked)")  # fmt: skip
    words = words or _engine_words(architecture, release)
    with_transformers = f" (with transformers {pin}, as its wheel pins)" if pin else ""
    return ArchitectureCheck(state="refused", architecture=architecture, source=source, engine_words=words,
                             message=f"SGLang {label} has no {architecture} ({added}): pick a later --engine-version; "
                             f"it stops with {words!r}{with_transformers}")  # fmt: skip

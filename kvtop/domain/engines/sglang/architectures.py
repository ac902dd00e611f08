"""Which model classes SGLang registers, by release: each `python/sglang/srt/models/*.py`'s `EntryClass`, read from the wheels.

`ModelRegistry` imports every module of sglang/srt/models and registers each `EntryClass` by its class name.
A config whose `architectures` names none of them goes to `resolve_transformers_arch`
(srt/model_loader/utils.py): transformers' own class of that name, backend-compatible
(`is_backend_compatible()`), is served by SGLang's Transformers backend; a class transformers has but refuses
stops the launch ("X has no SGlang implementation and the Transformers implementation is not compatible with
SGLang."), and one transformers does not have, without an `auto_map`, too ("Cannot find model module. 'X' is
not a registered model in the Transformers library …").

Read with benchmarks/engine_registries/read_registries.py (the `EntryClass` names, without importing SGLang)
and transformers_backend.py (in each wheel's environment) from the SGLang 0.5.6.post2 and 0.5.23 wheels;
every other release is "not checked" (docs/engines/architectures.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtop.domain.engine_architectures import ArchitectureCheck, RegistryRange, RegistryTable, names
from kvtop.domain.engines.sglang.class_releases import first_release_check
from kvtop.domain.tower_blocks import BlockSplit
from kvtop.domain.tower_spec import TowerSplit

if TYPE_CHECKING:
    from kvtop.domain.engines.versions import ResolvedVersion
    from kvtop.domain.launch import LaunchSettings
    from kvtop.domain.model import ModelSpec

SOURCE = "python/sglang/srt/models/*.py EntryClass"

_V0_5_6_POST2 = names("""
ApertusForCausalLM ArceeForCausalLM BaichuanForCausalLM BailingMoEForCausalLM BailingMoeForCausalLM
BailingMoeForCausalLMNextN BailingMoeV2ForCausalLM BertForSequenceClassification BertModel CLIPModel
ChatGLMModel Cohere2ForCausalLM CohereForCausalLM Contriever DbrxForCausalLM DeciLMForCausalLM
DeepseekForCausalLM DeepseekOCRForCausalLM DeepseekV2ForCausalLM DeepseekV32ForCausalLM
DeepseekV3ForCausalLM DeepseekV3ForCausalLMNextN DeepseekVL2ForCausalLM DotsOCRForCausalLM
DotsVLMForCausalLM Ernie4_5_ForCausalLM Ernie4_5_MoeForCausalLM Ernie4_5_MoeForCausalLMMTP ExaoneForCausalLM
FalconH1ForCausalLM GPT2LMHeadModel GPTBigCodeForCausalLM Gemma2ForCausalLM Gemma2ForSequenceClassification
Gemma3ForCausalLM Gemma3ForConditionalGeneration Gemma3nForCausalLM Gemma3nForConditionalGeneration
GemmaForCausalLM Glm4ForCausalLM Glm4MoeForCausalLM Glm4MoeForCausalLMNextN Glm4vForConditionalGeneration
Glm4vMoeForConditionalGeneration GptOssForCausalLM GraniteForCausalLM GraniteMoeForCausalLM Grok1ForCausalLM
Grok1ModelForCausalLM HunYuanDenseV1ForCausalLM HunYuanMoEV1ForCausalLM InternLM2ForCausalLM
InternLM2ForRewardModel InternLM3ForCausalLM InternS1ForConditionalGeneration InternVLChatModel
JetNemotronForCausalLM JetVLMForConditionalGeneration KimiLinearForCausalLM KimiVLForConditionalGeneration
LLaDA2MoeModelLM Llama4ForCausalLM Llama4ForConditionalGeneration LlamaEmbeddingModel LlamaForCausalLM
LlamaForCausalLMEagle LlamaForCausalLMEagle3 LlamaForClassification LlamaForSequenceClassification
LlamaForSequenceClassificationWithNormal_Weights LlavaForConditionalGeneration LlavaLlamaForCausalLM
LlavaMistralForCausalLM LlavaQwenForCausalLM LlavaVidForCausalLM LongcatFlashForCausalLM
LongcatFlashForCausalLMNextN MiMoForCausalLM MiMoMTP MindSporeForCausalLM MiniCPM3ForCausalLM
MiniCPMForCausalLM MiniCPMO MiniCPMV MiniMaxM2ForCausalLM Ministral3ForCausalLM
Mistral3ForConditionalGeneration MistralForCausalLM MistralLarge3ForCausalLM MistralLarge3ForCausalLMEagle
MistralModel MixtralForCausalLM MllamaForConditionalGeneration MultiModalityCausalLM
NVILAForConditionalGeneration NVILALiteForConditionalGeneration NemotronHForCausalLM NemotronH_Nano_VL_V2
OPTForCausalLM Olmo2ForCausalLM OlmoForCausalLM OlmoeForCausalLM OrionForCausalLM POINTSV15ChatModel
PaddleOCRVLForConditionalGeneration PersimmonForCausalLM Phi3ForCausalLM Phi3SmallForCausalLM
Phi4MMForCausalLM PhiForCausalLM PhiMoEForCausalLM PixtralForConditionalGeneration PixtralVisionModel
QWenLMHeadModel QuantMixtralForCausalLM Qwen2AudioForConditionalGeneration Qwen2ForCausalLM
Qwen2ForCausalLMEagle Qwen2ForRewardModel Qwen2ForSequenceClassification Qwen2MoeForCausalLM
Qwen2VLForConditionalGeneration Qwen2_5_VLForConditionalGeneration Qwen3ForCausalLM
Qwen3ForSequenceClassification Qwen3MoeForCausalLM Qwen3NextForCausalLM Qwen3NextForCausalLMMTP
Qwen3OmniMoeForConditionalGeneration Qwen3VLForConditionalGeneration Qwen3VLMoeForConditionalGeneration
Sarashina2VisionForCausalLM SolarForCausalLM StableLmForCausalLM Starcoder2ForCausalLM
Step3VLForConditionalGeneration TeleFLMForCausalLM TorchNativeLlamaForCausalLM TorchNativePhi3ForCausalLM
TransformersForCausalLM XLMRobertaForSequenceClassification XLMRobertaModel XverseForCausalLM
XverseMoeForCausalLM YiVLForCausalLM
""")
# classes SGLang 0.5.6.post2 does not register that its Transformers backend takes (transformers 4.57.1) …
_V0_5_6_POST2_TRANSFORMERS = names("""
AriaForConditionalGeneration AriaTextForCausalLM AyaVisionForConditionalGeneration BitNetForCausalLM
Blip2ForConditionalGeneration ChameleonForConditionalGeneration Cohere2VisionForConditionalGeneration
DogeForCausalLM Dots1ForCausalLM Emu3ForCausalLM Emu3ForConditionalGeneration Ernie4_5ForCausalLM
Exaone4ForCausalLM FlexOlmoForCausalLM FuyuForCausalLM GPTNeoXForCausalLM GlmForCausalLM
GotOcr2ForConditionalGeneration HeliumForCausalLM Idefics2ForConditionalGeneration
Idefics3ForConditionalGeneration IdeficsForVisionText2Text InstructBlipForConditionalGeneration
InstructBlipVideoForConditionalGeneration InternVLForConditionalGeneration Kosmos2ForConditionalGeneration
Kosmos2_5ForConditionalGeneration Lfm2ForCausalLM Lfm2VlForConditionalGeneration
LlavaNextForConditionalGeneration LlavaNextVideoForConditionalGeneration
LlavaOnevisionForConditionalGeneration MiniMaxForCausalLM MinistralForCausalLM MllamaForCausalLM
ModernBertDecoderForCausalLM Olmo3ForCausalLM Ovis2ForConditionalGeneration
PaliGemmaForConditionalGeneration PerceptionLMForConditionalGeneration Phi4MultimodalForCausalLM
SeedOssForCausalLM SmolLM3ForCausalLM SmolVLMForConditionalGeneration VaultGemmaForCausalLM
VideoLlavaForConditionalGeneration VipLlavaForConditionalGeneration
""")
# … and those transformers has but are not backend-compatible
_V0_5_6_POST2_INCOMPATIBLE = names("""
BambaForCausalLM BartForCausalLM BertGenerationDecoder BertLMHeadModel BigBirdForCausalLM
BigBirdPegasusForCausalLM BioGptForCausalLM BlenderbotForCausalLM BlenderbotSmallForCausalLM
BlipForConditionalGeneration BloomForCausalLM BltForCausalLM CTRLLMHeadModel CamembertForCausalLM
CodeGenForCausalLM CpmAntForCausalLM Data2VecTextForCausalLM DeepseekVLForConditionalGeneration
DeepseekVLHybridForConditionalGeneration DiffLlamaForCausalLM ElectraForCausalLM ErnieForCausalLM
EvollaForProteinText2Text FalconForCausalLM FalconMambaForCausalLM Florence2ForConditionalGeneration
GPTJForCausalLM GPTNeoForCausalLM GPTNeoXJapaneseForCausalLM GitForCausalLM GraniteMoeHybridForCausalLM
GraniteMoeSharedForCausalLM JambaForCausalLM JanusForConditionalGeneration JetMoeForCausalLM
MBartForCausalLM Mamba2ForCausalLM MambaForCausalLM MarianForCausalLM MegaForCausalLM
MegatronBertForCausalLM MoshiForCausalLM MptForCausalLM MusicgenForCausalLM MusicgenMelodyForCausalLM
MvpForCausalLM NemotronForCausalLM OpenAIGPTLMHeadModel OpenLlamaForCausalLM PLBartForCausalLM
PegasusForCausalLM PhimoeForCausalLM Pix2StructForConditionalGeneration ProphetNetForCausalLM
QDQBertLMHeadModel RecurrentGemmaForCausalLM ReformerModelWithLMHead RemBertForCausalLM RoCBertForCausalLM
RoFormerForCausalLM RobertaForCausalLM RobertaPreLayerNormForCausalLM RwkvForCausalLM
Speech2Text2ForCausalLM TrOCRForCausalLM TransfoXLLMHeadModel UdopForConditionalGeneration
VisionEncoderDecoderModel WhisperForCausalLM XGLMForCausalLM XLMProphetNetForCausalLM XLMRobertaForCausalLM
XLMRobertaXLForCausalLM XLMWithLMHeadModel XLNetLMHeadModel XmodForCausalLM Zamba2ForCausalLM
ZambaForCausalLM xLSTMForCausalLM
""")
_V0_5_23 = names("""
AfmoeForCausalLM ApertusForCausalLM ArceeForCausalLM BaichuanForCausalLM
BailingMM2NativeForConditionalGeneration BailingMMNativeForConditionalGeneration BailingMoEForCausalLM
BailingMoeForCausalLM BailingMoeForCausalLMNextN BailingMoeV2ForCausalLM BailingMoeV2_5ForCausalLM
BailingMoeV3ForCausalLM BailingMoeV3VLForConditionalGeneration BeamForCausalLM BertForSequenceClassification
BertModel CLIPModel ChatGLMModel Cohere2ForCausalLM Cohere2MoeForCausalLM
Cohere2VisionForConditionalGeneration CohereForCausalLM Contriever Cosmos3EdgeForConditionalGeneration
Cosmos3ForConditionalGeneration DFlash2BeamDraftModel DFlash2DraftModel DFlashDraftModel
DFlashLagunaForCausalLM DSparkDraftModel DSparkMiniMaxDraftModel DbrxForCausalLM DeciLMForCausalLM
DeepseekForCausalLM DeepseekOCRForCausalLM DeepseekV2ForCausalLM DeepseekV32ForCausalLM
DeepseekV3ForCausalLM DeepseekV3ForCausalLMNextN DeepseekV4ForCausalLM DeepseekV4ForCausalLMDSpark
DeepseekV4ForCausalLMNextN DeepseekVL2ForCausalLM DiffusionGemmaForBlockDiffusion Dots3NoteForCausalLM
Dots3NoteForCausalLMNextN DotsOCRForCausalLM DotsVLMForCausalLM Eagle3DeepseekV2ForCausalLM
EmbeddingGemma2Model EmbeddingGemmaModel Ernie4_5_ForCausalLM Ernie4_5_MoeForCausalLM
Ernie4_5_MoeForCausalLMMTP Ernie4_5_VLMoeForConditionalGeneration Exaone4ForCausalLM ExaoneForCausalLM
ExaoneMoEForCausalLM ExaoneMoEForCausalLMMTP ExaoneMoeForCausalLM FalconH1ForCausalLM FalconMambaForCausalLM
GPT2LMHeadModel GPTBigCodeForCausalLM GPTJForCausalLM Gemma2ForCausalLM Gemma2ForSequenceClassification
Gemma3ForCausalLM Gemma3ForConditionalGeneration Gemma3nForCausalLM Gemma3nForConditionalGeneration
Gemma4AssistantForCausalLM Gemma4ForCausalLM Gemma4ForConditionalGeneration
Gemma4UnifiedAssistantForCausalLM Gemma4UnifiedForConditionalGeneration GemmaForCausalLM
GigaChat35ForCausalLM GigaChat35ForCausalLMNextN Glm4ForCausalLM Glm4MoeForCausalLM Glm4MoeForCausalLMNextN
Glm4MoeLiteForCausalLM Glm4MoeLiteForCausalLMNextN Glm4vForConditionalGeneration
Glm4vMoeForConditionalGeneration Glm5NextForConditionalGeneration Glm5NextForConditionalGenerationNextN
GlmAsrForConditionalGeneration GlmImageForConditionalGeneration GlmMoeDsaForCausalLM
GlmMoeDsaForCausalLMNextN GlmOcrForConditionalGeneration GlmOcrForConditionalGenerationNextN
GptOssForCausalLM GraniteForCausalLM GraniteMoeForCausalLM GraniteMoeHybridForCausalLM
GraniteMoeSWAForCausalLM GraniteMoeSharedForCausalLM GraniteSWAForCausalLM Grok1ForCausalLM
Grok1ModelForCausalLM HYV3ForCausalLM HYV3ForCausalLMNextN HYV4ForCausalLM HYV4ForCausalLMNextN
HrmTextForCausalLM HunYuanDenseV1ForCausalLM HunYuanMoEV1ForCausalLM IQuestCoderForCausalLM
IQuestLoopCoderForCausalLM IQuestQ1ForCausalLM IQuestQ1MTP InklingForConditionalGeneration
InklingForConditionalGenerationMTP InternLM2ForCausalLM InternLM2ForRewardModel InternLM3ForCausalLM
InternS1ForConditionalGeneration InternS1ProForConditionalGeneration InternS2MobiusForConditionalGeneration
InternS2PreviewForConditionalGeneration InternVLChatModel JetNemotronForCausalLM
JetVLMForConditionalGeneration K2HorizonForCausalLM KimiK25ForConditionalGeneration
KimiK3ForConditionalGeneration KimiK3LinearForCausalLM KimiLinearForCausalLM KimiVLForConditionalGeneration
LLaDA2MoeModelLM LagunaForCausalLM Lfm2BidirectionalModel Lfm2DSparkDraftModel Lfm2ForCausalLM
Lfm2MoeForCausalLM Lfm2VlForConditionalGeneration LiLiCorrDraftModel LightOnOCRForConditionalGeneration
LingDSparkModel Llama4ForCausalLM Llama4ForConditionalGeneration LlamaEmbeddingModel LlamaForCausalLM
LlamaForCausalLMEagle LlamaForCausalLMEagle3 LlamaForClassification LlamaForSequenceClassification
LlamaForSequenceClassificationWithNormal_Weights LlavaForConditionalGeneration LlavaLlamaForCausalLM
LlavaMistralForCausalLM LlavaQwenForCausalLM LlavaVidForCausalLM LocateAnythingForConditionalGeneration
LongcatFlashForCausalLM LongcatFlashForCausalLMNextN Mamba2ForCausalLM MambaForCausalLM MellumForCausalLM
MiDashengLMModel MiMoForCausalLM MiMoMTP MiMoV2ASRForCausalLM MiMoV2FlashForCausalLM MiMoV2ForCausalLM
MiMoV2MTP MindSporeForCausalLM MiniCPM3ForCausalLM MiniCPMForCausalLM MiniCPMO MiniCPMSALAForCausalLM
MiniCPMV MiniCPMV4_6ForConditionalGeneration MiniCPMV4_7ForConditionalGeneration MiniMaxDFlash2DraftModel
MiniMaxM2ForCausalLM MiniMaxM3SparseForCausalLM MiniMaxM3SparseForConditionalGeneration
Ministral3ForCausalLM Mistral3ForConditionalGeneration MistralForCausalLM MistralForCausalLMEagle
MistralLarge3ForCausalLM MistralLarge3ForCausalLMEagle MistralModel MixtralForCausalLM
MllamaForConditionalGeneration MossVLForConditionalGeneration MultiModalityCausalLM
MuseGlimmerAssistantModel MuseGlimmerForCausalLM MuseGlimmerForConditionalGeneration
MuseSparkForConditionalGeneration NVILAForConditionalGeneration NVILALiteForConditionalGeneration
NanbeigeForCausalLM NanbeigeForSequenceClassification NemotronHForCausalLM NemotronHForCausalLMMTP
NemotronHPuzzleForCausalLM NemotronH_Nano_Omni_Reasoning_V3 NemotronH_Nano_VL_V2 NemotronH_Omni_Reasoning_V3
OPTForCausalLM Olmo2ForCausalLM OlmoForCausalLM OlmoeForCausalLM OrionForCausalLM POINTSV15ChatModel
PaddleOCRVLForConditionalGeneration PersimmonForCausalLM Phi3ForCausalLM Phi3SmallForCausalLM
Phi4MMForCausalLM PhiForCausalLM PhiMoEForCausalLM PixtralForConditionalGeneration PixtralVisionModel
QWenLMHeadModel QuantMixtralForCausalLM Qwen2AudioForConditionalGeneration Qwen2ForCausalLM
Qwen2ForCausalLMEagle Qwen2ForRewardModel Qwen2ForSequenceClassification Qwen2MoeForCausalLM
Qwen2VLForConditionalGeneration Qwen2_5_VLForConditionalGeneration Qwen3ASRForConditionalGeneration
Qwen3DSparkModel Qwen3ForCausalLM Qwen3ForRewardModel Qwen3ForSequenceClassification Qwen3Model
Qwen3MoeForCausalLM Qwen3MoeForCausalLMMTP Qwen3NextForCausalLM Qwen3NextForCausalLMMTP
Qwen3OmniMoeForConditionalGeneration Qwen3VLForConditionalGeneration Qwen3VLMoeForConditionalGeneration
Qwen3_5ForCausalLM Qwen3_5ForCausalLMMTP Qwen3_5ForConditionalGeneration Qwen3_5MoeForCausalLM
Qwen3_5MoeForConditionalGeneration Qwen4ExpForCausalLMMTP Qwen4ExpForConditionalGeneration SDARForCausalLM
SDARMoeForCausalLM Sarashina2VisionForCausalLM SarvamMLAForCausalLM SarvamMoEForCausalLM SolarForCausalLM
Spark2_5ForCausalLM StableLmForCausalLM Starcoder2ForCausalLM Step3VLForConditionalGeneration
Step3p5ForCausalLM Step3p5MTP Step3p7ForConditionalGeneration StepVLForConditionalGeneration
TeleFLMForCausalLM TorchNativeLlamaForCausalLM TorchNativePhi3ForCausalLM TransformersEmbeddingModel
TransformersForCausalLM TransformersForSequenceClassification TransformersMoEEmbeddingModel
TransformersMoEForCausalLM TransformersMoEForSequenceClassification TransformersMultiModalEmbeddingModel
TransformersMultiModalForCausalLM TransformersMultiModalForSequenceClassification
TransformersMultiModalMoEEmbeddingModel TransformersMultiModalMoEForCausalLM
TransformersMultiModalMoEForSequenceClassification UnlimitedOCRForCausalLM VoxtralForConditionalGeneration
WhisperForConditionalGeneration XLMRobertaForSequenceClassification XLMRobertaModel XllmForCausalLM
XverseForCausalLM XverseMoeForCausalLM YiVLForCausalLM ZayaForCausalLM
""")
# classes SGLang 0.5.23 does not register that its Transformers backend takes (transformers 5.19.0) …
_V0_5_23_TRANSFORMERS = names("""
AXK1ForCausalLM AXK2ForCausalLM AriaForConditionalGeneration AriaTextForCausalLM
AyaVisionForConditionalGeneration BertGenerationDecoder BertLMHeadModel BitNetForCausalLM
Blip2ForConditionalGeneration CTRLLMHeadModel CamembertForCausalLM ChameleonForConditionalGeneration
CohereCompassForCausalLM CohereCompassForConditionalGeneration Cosmos3OmniForConditionalGeneration
CwmForCausalLM Data2VecTextForCausalLM DeepseekOcr2ForConditionalGeneration DiffLlamaForCausalLM
DogeForCausalLM Dots1ForCausalLM ElectraForCausalLM Emu3ForCausalLM Emu3ForConditionalGeneration
Ernie4_5ForCausalLM ErnieForCausalLM Exaone4_5_ForConditionalGeneration FastVlmForConditionalGeneration
FlexOlmoForCausalLM FunAsrNanoForConditionalGeneration FuyuForCausalLM GPTNeoXForCausalLM
Gemma4UnifiedForCausalLM Glm46VForConditionalGeneration GlmForCausalLM GotOcr2ForConditionalGeneration
Granite4VisionForConditionalGeneration GraniteSpeechForConditionalGeneration
GraniteSpeechPlusForConditionalGeneration HeliumForCausalLM HunYuanVLForConditionalGeneration
HyperCLOVAXForCausalLM HyperCLOVAXVisionV2ForConditionalGeneration Idefics2ForConditionalGeneration
Idefics3ForConditionalGeneration IdeficsForVisionText2Text InstructBlipForConditionalGeneration
InstructBlipVideoForConditionalGeneration InternVLForConditionalGeneration Jais2ForCausalLM
JetMoeForCausalLM Kimi_K25ForConditionalGeneration Kosmos2ForConditionalGeneration
Kosmos2_5ForConditionalGeneration KyutaiSpeechToTextForConditionalGeneration
LightOnOcrForConditionalGeneration LlavaNextForConditionalGeneration LlavaNextVideoForConditionalGeneration
LlavaOnevisionForConditionalGeneration MiniMaxForCausalLM MiniMaxM3VLForCausalLM MinistralForCausalLM
Mistral4ForCausalLM MllamaForCausalLM ModernBertDecoderForCausalLM MoshiForCausalLM NanoChatForCausalLM
NemotronForCausalLM Olmo3ForCausalLM Ovis2ForConditionalGeneration PI0ForConditionalGeneration
PaliGemmaForConditionalGeneration PerceptionLMForConditionalGeneration Phi4MultimodalForCausalLM
PhimoeForCausalLM QianfanOCRForConditionalGeneration Qwen2_5OmniForConditionalGeneration
Qwen2_5OmniThinkerForConditionalGeneration Qwen3OmniMoeThinkerForConditionalGeneration
RecurrentGemmaForCausalLM RoCBertForCausalLM RobertaForCausalLM RobertaPreLayerNormForCausalLM
SeedOssForCausalLM SmolLM3ForCausalLM SmolVLMForConditionalGeneration SolarOpenForCausalLM
T5Gemma2ForConditionalGeneration VaultGemmaForCausalLM VibeVoiceAsrForConditionalGeneration
VideoLlama3ForConditionalGeneration VideoLlavaForConditionalGeneration VipLlavaForConditionalGeneration
VoxtralRealtimeForConditionalGeneration XLMRobertaForCausalLM XLMRobertaXLForCausalLM XmodForCausalLM
YoutuForCausalLM
""")
# … and those transformers has but are not backend-compatible
_V0_5_23_INCOMPATIBLE = names("""
BambaForCausalLM BartForCausalLM BigBirdForCausalLM BigBirdPegasusForCausalLM BioGptForCausalLM
BlenderbotForCausalLM BlenderbotSmallForCausalLM BlipForConditionalGeneration BloomForCausalLM
BltForCausalLM CodeGenForCausalLM CpmAntForCausalLM DeepseekVLForConditionalGeneration
DeepseekVLHybridForConditionalGeneration EvollaForProteinText2Text FalconForCausalLM
Florence2ForConditionalGeneration GPTNeoForCausalLM GPTNeoXJapaneseForCausalLM GitForCausalLM
InklingForCausalLM JambaForCausalLM JanusForConditionalGeneration MBartForCausalLM MarianForCausalLM
MegatronBertForCausalLM MptForCausalLM MusicgenForCausalLM MusicgenMelodyForCausalLM MvpForCausalLM
OlmoHybridForCausalLM OpenAIGPTLMHeadModel PLBartForCausalLM PPFormulaNetForConditionalGeneration
PegasusForCausalLM Pix2StructForConditionalGeneration ProphetNetForCausalLM Qwen4ExpForCausalLM
ReformerModelWithLMHead RemBertForCausalLM RoFormerForCausalLM RwkvForCausalLM TrOCRForCausalLM
UdopForConditionalGeneration VisionEncoderDecoderModel WhisperForCausalLM XGLMForCausalLM XLMWithLMHeadModel
XLNetLMHeadModel Zamba2ForCausalLM ZambaForCausalLM xLSTMForCausalLM
""")

# Classes SGLang 0.5.23 serves only through the checkpoint's own modeling code, whose class its Transformers backend
# refuses: srt/models/transformers.py TransformersForCausalLM.__init__ resolves the auto_map AutoModel /
# AutoModelForCausalLM class and raises where `_supports_attention_backend` is False, transformers 5.19.0's
# PreTrainedModel default (modeling_utils.py), which remote code that does not set it keeps.
_V0_5_23_REMOTE_CODE_REFUSED = {
    "InternLMForCausalLM": "internlm/internlm-20b and internlm-chat-7b modeling_internlm.py: InternLMPreTrainedModel "
                           "(PreTrainedModel) sets no _supports_attention_backend",
}  # fmt: skip

# SGLang 0.5.6.post2 registers no InternLMForCausalLM either: srt/model_loader/utils.py resolve_transformers_arch loads
# the auto_map classes and, with model_impl auto, raises where the AutoModel class's is_backend_compatible() (transformers
# 4.57.1 PreTrainedModel: `_supports_attention_backend`, False by default) is False (engine-diff run, sglang-0.5.6.post2.json).
_V0_5_6_POST2_REMOTE_CODE_REFUSED = _V0_5_23_REMOTE_CODE_REFUSED
# The releases whose refusal of such remote code is TransformersForCausalLM.__init__'s (custom attention backends);
# before, resolve_transformers_arch's "not compatible" words.
_CUSTOM_ATTENTION_WORDING = frozenset({"0.5.23"})

RANGES: tuple[RegistryRange, ...] = (
    RegistryRange("0.5.6.post2", "0.5.6.post2", _V0_5_6_POST2, f"{SOURCE}, SGLang 0.5.6.post2 wheel",
                  transformers_backend=_V0_5_6_POST2_TRANSFORMERS,
                  transformers_incompatible=_V0_5_6_POST2_INCOMPATIBLE, transformers="4.57.1",
                  remote_code_refused=_V0_5_6_POST2_REMOTE_CODE_REFUSED),
    RegistryRange("0.5.23", "0.5.23", _V0_5_23, f"{SOURCE}, SGLang 0.5.23 wheel",
                  transformers_backend=_V0_5_23_TRANSFORMERS, transformers_incompatible=_V0_5_23_INCOMPATIBLE,
                  transformers="5.19.0", remote_code_refused=_V0_5_23_REMOTE_CODE_REFUSED),
)  # fmt: skip



def _wording(architecture: str, found: RegistryRange) -> str:
    """`resolve_transformers_arch`'s own words (TransformersForCausalLM's for refused remote code)."""
    if architecture in found.remote_code_refused and found.first in _CUSTOM_ATTENTION_WORDING:
        return (f"Model {architecture} does not support custom attention backends (_supports_attention_backend="
                "False). The Transformers backend requires custom attention support.")  # fmt: skip
    if architecture in found.transformers_incompatible or architecture in found.remote_code_refused:
        return (f"{architecture} has no SGlang implementation and the Transformers implementation is not "
                "compatible with SGLang.")  # fmt: skip
    return f"Cannot find model module. '{architecture}' is not a registered model in the Transformers library"


TABLE = RegistryTable("SGLang", RANGES, _wording)


# SGLang 0.5.23 splits a learned position table over TP (`VocabParallelEmbedding`, rows padded to 64:
# srt/models/qwen3_vl.py `pos_embed`, which qwen3_5.py reuses; siglip.py `position_embedding`) and builds
# Gemma-4's tower blocks with its own parallel layers (gemma4_vision.py ClippableQKVParallelLinear, RowParallel
# o_proj/down_proj, GateUpParallel): 544,942,080 B less per rank at TP 2 than vLLM's replicated ones. Its llava.py
# (which mistral.py's Mistral3ForConditionalGeneration extends) builds transformers' projector classes
# (LlavaMultiModalProjector, Mistral3MultiModalProjector: nn.Linear), whole on every rank. qwen2_5_vl.py pads the
# vision MLP to a multiple of 8 (`mlp_hidden_size = (intermediate_size + 7) // 8 * 8`: Qwen2.5-VL's 3420 → 3424).
# kimi_k25.py builds MoonViT3d's block MLP (kimi_vl_moonvit.MLP2 without use_tensor_parallel) nn.Linear: whole.
# glm4v.py (0.5.23) builds GLM-4.1V's merger proj as a ReplicatedLinear (whole: projector_whole) and the merger's
# LayerNorm with srt/layers/layernorm.py's LayerNorm, whose weight and bias are float32 (float32_norms): meta-built,
# visual.merger.post_projection_norm.weight/bias [4096] torch.float32, 16,384 B more than bf16.
# muse_glimmer.py (0.5.23, read there only) builds Muse-Glimmer's vision block MLP (fc1/fc2) and its adapter
# Column/RowParallelLinear, split over TP where vLLM's are nn.Linear (towers_muse.py `replicated_params`): meta-built
# at TP 2, 1,952,954,880 B of tower a rank (vLLM 3,371,601,920 B). Its adapter width is padded to TP × 32 where TP
# does not divide projector_hidden_size (configs/update_config.py): not modelled.
# Its Gemma-3 and Gemma-4 language models embed with Gemma3TextScaledWordEmbedding, a plain nn.Embedding
# (srt/models/gemma3_causal.py; gemma4_causal.py aliases it): vocab × hidden whole on every TP rank (Gemma-3-27B
# at TP 2: 1,409,630,208 B more per rank than a VocabParallelEmbedding), the tied LM head reading it. Gemma-4's
# full-attention layers under attention_k_eq_v build V in their QKVParallelLinear all the same (load_weights
# copies k_proj into it): meta-built, gemma-4-26B-A4B qkv_proj [5120, 2816] at TP 2, not [4608, 2816].
# MiniMax-M3's tower (minimax_vl_common.py MiniMaxVLVisionTransformer) builds a post_layernorm (weight, bias) where
# every block is used (`require_post_norm` None), which vLLM's skips: meta-built, 2 × 1,280 × 2 B = 5,120 B more.
_GEMMA3 = ("Gemma3ForCausalLM", "Gemma3ForConditionalGeneration")
# Gemma-4 Unified's language model is the same Gemma4TextModel (gemma4_unified.py builds it from gemma4_causal.py).
# Its num_kv_shared_layers layers build the whole qkv_proj and k_norm all the same (the KV-shared test comes after
# them; v_norm has no scale), as Gemma-3n's do: gemma4_causal.py Gemma4Attention qkv_proj / k_norm / the shared test
# 0.5.11 :247/:268/:285, 0.5.14 :326/:347/:364, 0.5.17 :324/:345/:362, 0.5.23 :358/:380/:397 (0.5.11, the class's
# first release, to 0.5.23 read; the releases between hold the same build)
GEMMA4_CLASSES = ("Gemma4ForCausalLM", "Gemma4ForConditionalGeneration", "Gemma4UnifiedForConditionalGeneration")
# Gemma-3n (gemma3n_causal.py): Gemma3nTextScaledWordEmbedding (plain) for embed_tokens and embed_tokens_per_layer,
# but per_layer_model_projection a ColumnParallelLinear; a qkv_proj and k_norm on every layer, the
# num_kv_shared_layers ones included (vLLM's gemma3n.py builds q_proj alone there); Gemma3nForConditionalGeneration
# (gemma3n_mm.py) builds the same Gemma3nTextModel
GEMMA3N_CLASSES = ("Gemma3nForCausalLM", "Gemma3nForConditionalGeneration")
# Kimi-K3's MoonViT (kimi_k3_vl.py MoonViTEncoderLayer: wqkv, wo and MLP2's fc0 / fc1 nn.Linear; the attention
# backends built with use_data_parallel=True): every block whole on every rank, where vLLM splits them with the
# heads (towers_moon.kimi_k3). moonshotai--Kimi-K3 meta-built at TP 2: vision_tower 802,428,928 B a rank (vLLM's 406,067,200 B)
# DeepSeek-OCR's CLIP-L (NoTPAttention) and DeepSeek-VL2's timm SigLIP (deepseek_vl2.py:231): nn.Linear, whole
_WHOLE_BLOCKS = ("KimiK3VisionConfig", "VisionEncoderConfig")
# How SGLang 0.5.23 divides each encoder class's blocks over TP (kvtop.domain.tower_blocks): Qwen3-Omni's and
# Qwen3-ASR's audio encoder (qwen3_omni_moe.py Qwen3OmniMoeAudioEncoderLayer, qwen3_asr.py builds the same class):
# the attention a VisionAttention (use_qkv_parallel, attn_tp: `dist_utils.divide(num_heads, tp)` asserts), fc1 / fc2
# Column/RowParallelLinear where encoder_ffn_dim divides by TP, else ReplicatedLinear (`use_replicated`); GLM-ASR's
# (glmasr.py: transformers' GlmAsrEncoder, nn.Linear, q and v biased, k not): whole on every rank. GLM-4.1V's and
# GLM-4.5V's vision attention (glm4v.py Glm4vVisionBlock's VisionAttention, num_dummy_heads): padded with zero heads
# to a multiple of TP (zai-org--GLM-4.5V, 12 heads, meta-built at TP 8: visual 311,829,504 B a rank).
_BLOCKS = (
    ("InternVisionModel", BlockSplit(attention="pad",
                                     source="0.5.23 srt/models/internvl.py InternAttention; "
                                     "srt/layers/attention/vision_utils.py update_vit_attn_dummy_heads_config")),
    ("InternVLVisionModel", BlockSplit(attention="pad",
                                       source="0.5.23 srt/models/interns1.py builds internvl.py's InternVisionModel "
                                       "(InternAttention) over InternVLVisionConfig; update_vit_attn_dummy_heads_config")),
    ("Glm4vVisionTransformer", BlockSplit(attention="pad",
                                          source="0.5.23 srt/models/glm4v.py; srt/layers/attention/vision_utils.py "
                                          "update_vit_attn_dummy_heads_config")),
    ("DotsVisionTransformer", BlockSplit(attention="pad", source="0.5.23 srt/models/dots_vlm_vit.py "
                                         "DotsVisionTransformer._update_vision_config (num_dummy_heads)")),
    ("Qwen3OmniMoeAudioEncoder", BlockSplit(attention="always", mlp="width",
                                            source="0.5.23 srt/models/qwen3_omni_moe.py Qwen3OmniMoeAudioEncoderLayer; "
                                            "srt/layers/attention/vision.py VisionAttention (dist_utils.divide)")),
    ("GlmAsrEncoder", BlockSplit(attention="never", mlp="never",
                                 source="0.5.23 srt/models/glmasr.py: transformers GlmAsrEncoder (nn.Linear)")),
    ("DashengAudioTransformer", BlockSplit(attention="always", mlp="always",
                                           source="0.5.23 srt/models/midashenglm.py DashengAttention's VisionAttention "
                                           "(dist_utils.divide), DashengMlp Column/RowParallelLinear")),
    ("Gemma3nAudioEncoder", BlockSplit(attention="always", mlp="always",
                                       source="0.5.23 srt/models/gemma3n_audio.py: QKVParallelLinear (divides the "
                                       "heads), Column/RowParallelLinear for every other linear")),
    ("WhisperEncoder", BlockSplit(attention="always", mlp="always", k_bias=True,
                                  source="0.5.23 srt/models/whisper.py WhisperAttention (asserts num_heads % tp == 0; "
                                  "QKVParallelLinear, biased: a K bias the checkpoint lacks), fc1 / fc2 Column/Row")),
    ("VoxtralWhisperEncoder", BlockSplit(attention="always", mlp="always", k_bias=True,
                                         source="0.5.23 srt/models/voxtral.py VoxtralWhisperAttention "
                                         "(QKVParallelLinear, its default bias: a zero K bias at load; "
                                         "RowParallelLinear out_proj), Column fc1 / Row fc2")),
)  # fmt: skip
# whisper.py WhisperDecoder: embed_tokens an nn.Embedding (vocab × d_model whole, unpadded)
_WHISPER = ("WhisperForConditionalGeneration",)
# `--mm-enable-dp-encoder` (0.5.23 srt/arg_groups/fields/mm.py: BooleanOptionalAction; first release not pinned,
# 0.5.6.post2 not read): the classes that read it (`get_mm().mm_enable_dp_encoder`) build the vision encoder
# "replicated", as at TP 1 — listed, the ones whose whole tower (blocks, merger, position table) is built so:
# qwen2_5_vl.py (Qwen2_5_VLMLP, VisionAttention, Qwen2_5_VisionPatchMerger parallel_group "replicated"), qwen3_vl.py
# (_resolve_vision_parallel_group, pos_embed VocabParallelEmbedding enable_tp=False) with qwen3_vl_moe.py and
# qwen3_5.py (both Qwen3.5 classes call Qwen3VLForConditionalGeneration.__init__), glm4v.py
# (_glm4v_vision_parallel_group) with glm4v_moe.py, bailing_mm_v3.py (Ling-3-VL: qwen3_vl.py's Qwen3VLMoeVisionModel
# with use_data_parallel, its linear_proj nn.Linear whole either way), mimo_v2.py (MiMo-V2.5: its MiMoVisionTransformer,
# 0.5.12 … 0.5.23 mimo_vl.py :255/:262 `use_data_parallel = … mm_enable_dp_encoder`, hands it to every block's
# VisionAttention and Qwen2_5_VLMLP and to the Qwen2_5_VisionPatchMerger; the audio encoder, mimo_audio.py, is plain
# nn.Linear, whole either way; 0.5.10 builds no MiMo tower); other classes ignore the flag. Others that read
# it (internvl.py, kimi_vl.py, kimi_k25.py, minimax_vl_common.py, bailing_mm.py (both Bailing-MM
# classes), glm_ocr.py, glm5_next.py, glm_image_vl.py, muse_spark_omni.py — which turns it on by itself under attention DP, overrides.py) are not modelled data-parallel.
DATA_PARALLEL_ENCODER = (
    "Qwen2_5_VLForConditionalGeneration", "Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration",
    "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration", "Glm4vForConditionalGeneration",
    "Glm4vMoeForConditionalGeneration", "BailingMoeV3VLForConditionalGeneration", "MiMoV2ForCausalLM",
)  # fmt: skip
# the other classes that read it (their EntryClass, or a subclass of a listed class: not read whether it keeps the
# replicated build) — not modelled data-parallel
DATA_PARALLEL_UNMODELLED = (
    "BailingMMNativeForConditionalGeneration", "BailingMM2NativeForConditionalGeneration",
    "Glm5NextForConditionalGeneration", "GlmImageForConditionalGeneration",
    "GlmOcrForConditionalGeneration", "InternVLChatModel", "KimiK25ForConditionalGeneration",
    "KimiVLForConditionalGeneration", "MiniMaxM3SparseForConditionalGeneration", "MuseSparkForConditionalGeneration",
    "MiMoV2FlashForCausalLM", "Cosmos3ForConditionalGeneration",
    "InternS1ProForConditionalGeneration",
    "Qwen3OmniMoeForConditionalGeneration", "Qwen4ExpForConditionalGeneration",
)  # fmt: skip
# The blocks' VisionAttention splits over the attention-TP group (srt/layers/attention/vision.py 0.5.0rc0:370
# `attn_tp_size = get_attention_tp_size()`, 0.5.15:928 and 0.5.23:1123 `get_parallel().attn_tp_size`) where the MLPs
# and merger split over TP (0.5.15 and 0.5.23 qwen2_5_vl.py Qwen2_5_VLMLP / Qwen2_5_VisionPatchMerger
# `get_parallel().tp_size`); 0.4.10.post2's VisionAttention took the TP world size. From 0.5.22 most towers refuse
# 1 < attention TP < TP (vision_tp_reduce.py).
ATTENTION_TP_SINCE = "0.5.0rc0"
# … and Qwen3-VL's whole tower (Qwen3.5's, which builds it, and Ling-3-VL's Qwen3VLMoeVisionModel alike): its
# Qwen3_VisionMLP and the mergers over attention TP too from 0.5.9 (qwen3_vl.py 0.5.9:91/:241
# `get_attention_tp_size()`, 0.5.15:115/:275 `attn_tp_size`, 0.5.23 `_resolve_vision_parallel_group` "attn_tp");
# 0.5.8 :89/:239 the TP world size
ATTENTION_TP_TOWERS = tuple((cls, "0.5.9") for cls in ("Qwen3VLVisionConfig", "Qwen3VLMoeVisionConfig",
                                                        "Qwen3_5VisionConfig", "Qwen3_5MoeVisionConfig"))  # fmt: skip
# MiMo-V2.5's merger (mimo_vl.py 0.5.12 :301 … 0.5.23 :308 builds qwen2_5_vl.py's Qwen2_5_VisionPatchMerger, its two
# linears bias=True, 0.5.23 :330/:339) holds biases vLLM's build lacks: width × merge² split, out_hidden_size whole
TOWER_SPLIT = TowerSplit(position_table=True, replicated_linears=True, projector_whole=True, mlp_multiple=8,
                         block_mlp_whole=True, whole_embedding=_GEMMA3 + GEMMA4_CLASSES + GEMMA3N_CLASSES + _WHISPER, k_eq_v_holds_v=GEMMA4_CLASSES,
                         post_norm=True, float32_norms=True, per_layer_split=GEMMA3N_CLASSES,
                         shared_kv_holds_kv=GEMMA3N_CLASSES + GEMMA4_CLASSES, whole_blocks=_WHOLE_BLOCKS, blocks=_BLOCKS,
                         second_out_proj=("Step3VisionEncoderConfig",),
                         data_parallel_flag=("mm-enable-dp-encoder", True),
                         data_parallel=DATA_PARALLEL_ENCODER,
                         data_parallel_unmodelled=DATA_PARALLEL_UNMODELLED,
                         attention_tp_since=ATTENTION_TP_SINCE, attention_tp_towers_since=ATTENTION_TP_TOWERS,
                         projector_bias=("Mimo_VLVisionConfig",))  # fmt: skip


def check(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> ArchitectureCheck:
    """SGLang's verdict on the model's class at `version`. Remote code rescues an unregistered class only through
    the auto_map's `AutoModel` key: resolve_transformers_arch (0.5.6.post2 and 0.5.23 srt/model_loader/utils.py)
    raises "'AutoModel' is not present in the model config's 'auto_map'" where transformers has no such class and
    the auto_map names only AutoModelFor… classes (AIDC-AI/Ovis2.5-9B: AutoModelForCausalLM). A class that
    class_releases.py reads in every wheel is judged there at the releases these lists do not cover, and a refused one
    says which release added it."""
    custom_code = any(key == "AutoModel" for key, _ in model.auto_map_models)
    found = TABLE.check_class(model.architecture, version, custom_code=custom_code)
    if found.state == "refused":  # a class added later: say which release (class_releases.py), in the list's words
        added = first_release_check(model.architecture, version, custom_code=custom_code, words=found.engine_words)
        return added if added is not None and added.refused else found
    if found.state == "not_checked":  # a release no list covers: the classes read in every wheel decide
        return first_release_check(model.architecture, version, custom_code=custom_code) or found
    return found

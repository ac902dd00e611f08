"""SGLang's vocab embedding under --enable-dp-attention, by model class and release: whole on every rank (the class
builds `VocabParallelEmbedding(..., enable_tp=not is_dp_attention_enabled())`, its rows still padded to 64), or split
over the attention-TP group (`use_attn_tp_group=is_dp_attention_enabled()`, or `get_embedding_tp_kwargs()`: rows
padded to 64, ÷ attention TP = tp ÷ dp); a class not listed splits it over TP (the book's split). The LM head splits
over TP (`ParallelLMHead`) here; the launch's --enable-dp-lm-head and SGLANG_ENABLE_EMBED_REPLICATION move the head and
the embedding over that, where the class reads them (vocab_launch.py).

What SGLang's code does, by class (the config's first architecture) and the model code it builds, read in the wheels
0.4.0 … 0.5.23 (the sources below: release file:line), not a fact of the model family:
- DeepseekV2Model (models/deepseek_v2.py; DeepSeek-V2/V3/V3.2, Kimi-K2/K2.5, GLM-5, Mistral-Large-3 and the
  DeepSeek-V2-based VLMs build it): whole to 0.5.7 (but over attention TP at 0.4.9 alone: `use_attn_tp_group=True`,
  whole again from 0.4.9.post1), over attention TP from 0.5.8 — whole where dp == tp (attention TP 1), as the
  DP-attention launches of the corpus read. From 0.5.13 through `get_embedding_tp_kwargs()`
  (layers/vocab_parallel_embedding.py:166-185), whole under SGLANG_ENABLE_EMBED_REPLICATION (vocab_launch.py);
- Llama4Model (models/llama4.py): whole to 0.5.8, over attention TP from 0.5.9;
- Glm4MoeLiteModel (models/glm4_moe_lite.py, first in 0.5.8): whole at 0.5.8, over attention TP from 0.5.9;
- HYV4Model (models/hunyuan_v4.py, first in 0.5.20), KimiK3LinearModel (models/kimi_k3.py, first in 0.5.17),
  Glm5NextModel (models/glm5_next.py, first in 0.5.20), MuseSpark1xModel (models/muse_spark.py, first in 0.5.23):
  over attention TP (get_embedding_tp_kwargs());
- DeepseekV4Model (models/deepseek_v4.py, first in 0.5.12) and SarvamMLAModel (models/sarvam_moe.py, first in
  0.5.10): whole through 0.5.23;
- AXK1ForCausalLM and PanguUltraMoEForCausalLM: no SGLang class at 0.5.23 (read as DeepseekV2Model's users);
- Qwen2Model (models/qwen2.py; Qwen2, Qwen3): over TP to 0.4.8.post1, whole from 0.4.9, over attention TP from
  0.5.9; Qwen2MoeModel (Qwen2-MoE, Qwen3-MoE): whole from 0.4.6.post5; Glm4MoeModel (GLM-4.5) and
  GptOssModel: whole, over attention TP from 0.5.9.
- Qwen3NextModel (qwen3_next.py, first in 0.5.2), FalconH1Model (falcon_h1.py, first in 0.5.3), Step3TextModel
  (step3_vl.py, first in 0.4.10), LongcatFlashModel (longcat_flash.py, first in 0.5.2): whole, over attention TP
  from 0.5.9; BailingMoEModel (bailing_moe.py; Ling, Ling-2.0): over TP at 0.5.1 … 0.5.3rc0 (0.5.3rc0's by
  --enable-dp-lm-head: vocab_launch.py), whole from 0.5.3rc2, over attention TP from 0.5.9; the VLMs whose language
  model is Qwen2Model (qwen2_vl.py, qwen2_5_vl.py, qwen2_audio.py) and LlavaQwenForCausalLM (llava.py, a fixed
  Qwen2ForCausalLM) take Qwen2Model's eras.
- LLaDA2MoeModel (llada2.py, first in 0.5.6), MiMoV2Model (mimo_v2_flash.py 0.5.7 … 0.5.10.post1, mimo_v2.py from
  0.5.11): whole, over attention TP from 0.5.9; BailingMoELinearModel (bailing_moe_linear.py, first in 0.5.9;
  BailingMoeV2_5ForCausalLM): whole through 0.5.23.
- VLMs that pick their language model from the config: InternVLChatModel (internvl.py, first in 0.4.6.post5) by
  `llm_config.architectures[0]` (Qwen2 and InternLM2ForCausalLM; + Qwen3-MoE from 0.4.9.post6; + GPT-OSS and Qwen3
  from 0.5.2), LlavaForConditionalGeneration (first in 0.4.6.post5; llava.py
  `_get_sgl_model_cls(text_config, AutoModelForCausalLM)`: the text config's causal-LM class from SGLang's registry).
  kvtop keeps no nested class name: it maps the text model's `model_type` (ModelSpec.model_type, the entry it read
  the text section as) to the causal-LM class transformers pairs with it (TEXT_TYPE_CLASS), then that class's row.
A class planned at a release before its model code exists is refused by the class registry (sglang/architectures.py
and class_releases.py, each class's first release read in every wheel), before this table is read.
"""

from __future__ import annotations

from typing import NamedTuple

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import SplitGroup, VocabSplit
from kvtop.domain.model import ModelSpec


class DpAttentionEmbedding(NamedTuple):
    """A model class whose embedding SGLang builds otherwise than over TP under DP attention: the model code that
    builds it, and the group by release (that code's eras)."""

    architecture: str
    built_by: str
    source: str  # where the class builds that model code


# a class's embedding under DP attention (a class not listed: over TP): WHOLE, enable_tp=False (every rank holds the
# table, its rows padded to 64); ATTENTION_TP, use_attn_tp_group=True (rows padded to 64, ÷ attention TP); TP, a
# release before the class read DP attention (the book's split over TP)
_WHOLE, _ATTN_TP, _TP = SplitGroup.WHOLE, SplitGroup.ATTENTION_TP, SplitGroup.TP
# each model code's embedding under DP attention by release (release file:line of the VocabParallelEmbedding call)
GROUP_ERAS: dict[str, Eras[SplitGroup]] = {
    "DeepseekV2Model": Eras((
        Era("", _WHOLE, "deepseek_v2.py 0.4.0:692, 0.4.6.post5:1343 … 0.4.8.post1:1802 `enable_tp=not "
                        "global_server_args_dict['enable_dp_attention']`"),
        Era("0.4.9", _ATTN_TP, "deepseek_v2.py 0.4.9:1930-1934 `use_attn_tp_group=True` (0.4.9 alone)"),
        Era("0.4.9.post1", _WHOLE, "deepseek_v2.py 0.4.9.post1:1938 … 0.5.0rc0 `enable_tp=not global_server_args_dict"
                                   "['enable_dp_attention']`; 0.5.1:1981 … 0.5.7:3042 `enable_tp=not "
                                   "is_dp_attention_enabled()`"),
        Era("0.5.8", _ATTN_TP, "deepseek_v2.py 0.5.8:2523 … 0.5.12:2088 `use_attn_tp_group=is_dp_attention_enabled()`; "
                               "0.5.13:2255 … 0.5.23:2946 `**get_embedding_tp_kwargs()` "
                               "(layers/vocab_parallel_embedding.py:166-185)"),
    )),
    "Llama4Model": Eras((
        Era("", _WHOLE, "llama4.py 0.4.6.post5:468 `enable_tp=not global_server_args_dict['enable_dp_attention']`; "
                        "0.5.1:480 … 0.5.8:489 `enable_tp=not is_dp_attention_enabled()`"),
        Era("0.5.9", _ATTN_TP, "llama4.py 0.5.9:490 … 0.5.23:493 `use_attn_tp_group=is_dp_attention_enabled()`"),
    )),
    "Glm4MoeLiteModel": Eras((
        Era("", _WHOLE, "glm4_moe_lite.py 0.5.8:443 `enable_tp=not is_dp_attention_enabled()` (its first release)"),
        Era("0.5.9", _ATTN_TP, "glm4_moe_lite.py 0.5.9:443 … 0.5.23:583 `use_attn_tp_group=is_dp_attention_enabled()`"),
    )),
    "HYV4Model": Eras((
        Era("", _ATTN_TP, "hunyuan_v4.py 0.5.20:626 … 0.5.23:692 `**get_embedding_tp_kwargs()` (its first release 0.5.20)"),
    )),
    "KimiK3LinearModel": Eras((
        Era("", _ATTN_TP, "kimi_k3.py 0.5.17:2367, 0.5.20:2803 … 0.5.23:2751 `**get_embedding_tp_kwargs()` (its first "
                          "release 0.5.17)"),
    )),
    "Glm5NextModel": Eras((
        Era("", _ATTN_TP, "glm5_next.py 0.5.20:870 … 0.5.23:1030 `**get_embedding_tp_kwargs()` (its first release 0.5.20)"),
    )),
    "MuseSpark1xModel": Eras((
        Era("", _ATTN_TP, "muse_spark.py 0.5.23:1082 `**get_embedding_tp_kwargs()` (its first release 0.5.23)"),
    )),
    "DeepseekV4Model": Eras((
        Era("", _WHOLE, "deepseek_v4.py 0.5.12:885 … 0.5.23:3773 `enable_tp=not is_dp_attention_enabled()`"),
    )),
    "SarvamMLAModel": Eras((
        Era("", _WHOLE, "sarvam_moe.py 0.5.10:1164 … 0.5.23:1107 `enable_tp=not is_dp_attention_enabled()`"),
    )),
    # the MHA / MoE model code of the same pattern; a release between two reads takes the earlier era
    "Qwen2Model": Eras((
        Era("", _TP, "qwen2.py 0.4.0 … 0.4.8.post1: VocabParallelEmbedding over TP"),
        Era("0.4.9", _WHOLE, "qwen2.py 0.4.9:270 … 0.5.0rc0 `enable_tp=not global_server_args_dict"
                             "['enable_dp_attention']`; 0.5.1:276 … 0.5.8:280 `enable_tp=not is_dp_attention_enabled()`"),
        Era("0.5.9", _ATTN_TP, "qwen2.py 0.5.9:281 … 0.5.23:374 `use_attn_tp_group=is_dp_attention_enabled()`"),
    )),
    "Qwen2MoeModel": Eras((
        Era("", _TP, "qwen2_moe.py 0.4.0 … 0.4.4.post2: VocabParallelEmbedding over TP"),
        Era("0.4.6.post5", _WHOLE, "qwen2_moe.py 0.4.6.post5:551 `enable_tp=not global_server_args_dict"
                                   "['enable_dp_attention']` … 0.5.8:573 `enable_tp=not is_dp_attention_enabled()`"),
        Era("0.5.9", _ATTN_TP, "qwen2_moe.py 0.5.9:577 … 0.5.23:1118 `use_attn_tp_group=is_dp_attention_enabled()`"),
    )),
    "Glm4MoeModel": Eras((
        Era("", _WHOLE, "glm4_moe.py 0.4.9.post6:667 … 0.5.8:898 `enable_tp=not is_dp_attention_enabled()`"),
        Era("0.5.9", _ATTN_TP, "glm4_moe.py 0.5.9:900 … 0.5.23:883 `use_attn_tp_group=is_dp_attention_enabled()`"),
    )),
    "GptOssModel": Eras((
        Era("", _WHOLE, "gpt_oss.py 0.5.1:520 … 0.5.8:502 `enable_tp=not is_dp_attention_enabled()`"),
        Era("0.5.9", _ATTN_TP, "gpt_oss.py 0.5.9:519 … 0.5.23:662 `use_attn_tp_group=is_dp_attention_enabled()`"),
    )),
    # hybrid / MoE / VLM model code of the same pattern, first release to 0.5.23 (VocabParallelEmbedding call line)
    "Qwen3NextModel": Eras((
        Era("", _WHOLE, "qwen3_next.py 0.5.2:799 … 0.5.8:808 `enable_tp=not is_dp_attention_enabled()` (first in 0.5.2)"),
        Era("0.5.9", _ATTN_TP, "qwen3_next.py 0.5.9:818 … 0.5.23:922 `use_attn_tp_group=is_dp_attention_enabled()`"),
    )),
    "BailingMoEModel": Eras((
        Era("", _TP, "bailing_moe.py 0.5.1:291 … 0.5.2:291 (its BailingMoeModel): VocabParallelEmbedding over TP; "
                     "0.5.3rc0:700 `use_attn_tp_group=enable_dp_lm_head` (vocab_launch.py)"),
        Era("0.5.3rc2", _WHOLE, "bailing_moe.py 0.5.3rc2:723, 0.5.3:723 … 0.5.8:715 `enable_tp=not "
                                "is_dp_attention_enabled()`"),
        Era("0.5.9", _ATTN_TP, "bailing_moe.py 0.5.9:716 … 0.5.23:777 `use_attn_tp_group=is_dp_attention_enabled()`"),
    )),
    "FalconH1Model": Eras((
        Era("", _WHOLE, "falcon_h1.py 0.5.3:390 … 0.5.8:393 `enable_tp=not is_dp_attention_enabled()` (first in 0.5.3)"),
        Era("0.5.9", _ATTN_TP, "falcon_h1.py 0.5.9:393 … 0.5.23:383 `use_attn_tp_group=is_dp_attention_enabled()`"),
    )),
    "Step3TextModel": Eras((
        Era("", _WHOLE, "step3_vl.py 0.4.10:437 `enable_tp=not global_server_args_dict['enable_dp_attention']` "
                        "(first in 0.4.10); 0.5.1:442 … 0.5.8:443 `enable_tp=not is_dp_attention_enabled()`"),
        Era("0.5.9", _ATTN_TP, "step3_vl.py 0.5.9:443 … 0.5.23:428 `use_attn_tp_group=is_dp_attention_enabled()`"),
    )),
    "LongcatFlashModel": Eras((
        Era("", _WHOLE, "longcat_flash.py 0.5.2:504 … 0.5.8:503 `enable_tp=not is_dp_attention_enabled()` "
                        "(first in 0.5.2)"),
        Era("0.5.9", _ATTN_TP, "longcat_flash.py 0.5.9:503 … 0.5.23:567 `use_attn_tp_group=is_dp_attention_enabled()`"),
    )),
    "LLaDA2MoeModel": Eras((
        Era("", _WHOLE, "llada2.py 0.5.6:686 … 0.5.8:672 `enable_tp=not is_dp_attention_enabled()` (first in 0.5.6)"),
        Era("0.5.9", _ATTN_TP, "llada2.py 0.5.9:673 … 0.5.23:1213 `use_attn_tp_group=is_dp_attention_enabled()`"),
    )),
    "MiMoV2Model": Eras((
        Era("", _WHOLE, "mimo_v2_flash.py 0.5.7:634 … 0.5.8:634 `enable_tp=not is_dp_attention_enabled()` (first in 0.5.7)"),
        Era("0.5.9", _ATTN_TP, "mimo_v2_flash.py 0.5.9:800 … 0.5.10.post1:808, mimo_v2.py 0.5.11:851 … 0.5.23:1084 "
                               "`use_attn_tp_group=is_dp_attention_enabled()`"),
    )),
    "BailingMoELinearModel": Eras((
        Era("", _WHOLE, "bailing_moe_linear.py 0.5.9:910 … 0.5.23:923 `enable_tp=not is_dp_attention_enabled()` "
                        "(first in 0.5.9)"),
    )),
}  # fmt: skip

_DSV2 = "DeepseekV2Model"
DP_ATTENTION_EMBEDDING_CLASSES: tuple[DpAttentionEmbedding, ...] = (
    DpAttentionEmbedding("DeepseekV2ForCausalLM", _DSV2, "models/deepseek_v2.py DeepseekV2ForCausalLM"),
    DpAttentionEmbedding("DeepseekV3ForCausalLM", _DSV2, "DeepseekV3ForCausalLM(DeepseekV2ForCausalLM)"),
    DpAttentionEmbedding("DeepseekV32ForCausalLM", _DSV2, "0.5.23 deepseek_v2.py:3522"),
    DpAttentionEmbedding("MistralLarge3ForCausalLM", _DSV2, "models/mistral_large_3.py:12 (a DeepseekV3ForCausalLM)"),
    DpAttentionEmbedding("PixtralForConditionalGeneration", _DSV2,
                         "models/pixtral.py:126 builds MistralLarge3ForCausalLM (0.5.23)"),
    DpAttentionEmbedding("KimiK25ForConditionalGeneration", _DSV2, "models/kimi_k25.py:693 DeepseekV3ForCausalLM (0.5.23)"),
    DpAttentionEmbedding("KimiVLForConditionalGeneration", _DSV2, "models/kimi_vl.py:168 DeepseekV2ForCausalLM (0.5.23)"),
    DpAttentionEmbedding("DeepseekVL2ForCausalLM", _DSV2, "models/deepseek_vl2.py:217 DeepseekV2ForCausalLM (0.5.23)"),
    DpAttentionEmbedding("DeepseekOCRForCausalLM", _DSV2, "models/deepseek_ocr.py:1485-1497 DeepseekV3/V2ForCausalLM"),
    DpAttentionEmbedding("DotsVLMForCausalLM", _DSV2, "models/dots_vlm.py:76 DeepseekV2ForCausalLM (0.5.23)"),
    DpAttentionEmbedding("GlmMoeDsaForCausalLM", _DSV2,
                         "models/glm4_moe.py:1284 GlmMoeDsaForCausalLM(DeepseekV2ForCausalLM)"),
    DpAttentionEmbedding("AXK1ForCausalLM", _DSV2, "DeepSeek-V3's layout; no SGLang class at 0.5.23"),
    DpAttentionEmbedding("PanguUltraMoEForCausalLM", _DSV2, "DeepSeek-V3's layout; no SGLang class at 0.5.23"),
    DpAttentionEmbedding("Glm4MoeLiteForCausalLM", "Glm4MoeLiteModel", "models/glm4_moe_lite.py Glm4MoeLiteModel"),
    DpAttentionEmbedding("HYV4ForCausalLM", "HYV4Model", "models/hunyuan_v4.py HYV4Model"),
    DpAttentionEmbedding("KimiK3ForConditionalGeneration", "KimiK3LinearModel",
                         "models/kimi_k3.py `self.language_model = KimiK3LinearForCausalLM(` (0.5.17:2971, 0.5.23:3515)"),
    DpAttentionEmbedding("KimiK3LinearForCausalLM", "KimiK3LinearModel", "models/kimi_k3.py KimiK3LinearModel"),
    DpAttentionEmbedding("Glm5NextForConditionalGeneration", "Glm5NextModel", "models/glm5_next.py Glm5NextModel"),
    DpAttentionEmbedding("MuseSparkForConditionalGeneration", "MuseSpark1xModel",
                         "models/muse_spark_omni.py:140 (EntryClass :474) a MuseSparkTextForCausalLM, muse_spark.py "
                         "MuseSparkModel → MuseSpark1xModel (0.5.23)"),
    DpAttentionEmbedding("DeepseekV4ForCausalLM", "DeepseekV4Model", "models/deepseek_v4.py DeepseekV4Model"),
    DpAttentionEmbedding("SarvamMLAForCausalLM", "SarvamMLAModel", "models/sarvam_moe.py SarvamMLAModel"),
    DpAttentionEmbedding("Llama4ForCausalLM", "Llama4Model", "models/llama4.py Llama4Model"),
    DpAttentionEmbedding("Llama4ForConditionalGeneration", "Llama4Model", "models/mllama4.py:496 Llama4ForCausalLM"),
    DpAttentionEmbedding("Qwen2ForCausalLM", "Qwen2Model", "models/qwen2.py Qwen2ForCausalLM"),
    DpAttentionEmbedding("Qwen3ForCausalLM", "Qwen2Model", "models/qwen3.py Qwen3Model(Qwen2Model) (0.4.6.post5:204, 0.5.8:315)"),
    DpAttentionEmbedding("Qwen2MoeForCausalLM", "Qwen2MoeModel", "models/qwen2_moe.py Qwen2MoeForCausalLM"),
    DpAttentionEmbedding("Qwen3MoeForCausalLM", "Qwen2MoeModel",
                         "models/qwen3_moe.py Qwen3MoeModel(Qwen2MoeModel) (0.4.6.post5:618, 0.5.8:871)"),
    DpAttentionEmbedding("Glm4MoeForCausalLM", "Glm4MoeModel", "models/glm4_moe.py Glm4MoeForCausalLM (0.5.8:1015)"),
    DpAttentionEmbedding("GptOssForCausalLM", "GptOssModel", "models/gpt_oss.py GptOssForCausalLM (0.5.8:589)"),
    DpAttentionEmbedding("Qwen2VLForConditionalGeneration", "Qwen2Model",
                         "models/qwen2_vl.py `self.model = Qwen2Model(` (0.4.0:551, 0.5.8, 0.5.23:478)"),
    DpAttentionEmbedding("Qwen2_5_VLForConditionalGeneration", "Qwen2Model",
                         "models/qwen2_5_vl.py `self.model = Qwen2Model(` (0.4.6.post5:475, 0.5.23:720)"),
    DpAttentionEmbedding("Qwen2AudioForConditionalGeneration", "Qwen2Model",
                         "models/qwen2_audio.py `Qwen2ForCausalLM(` (0.4.9.post6:106, 0.5.23:99)"),
    DpAttentionEmbedding("LlavaQwenForCausalLM", "Qwen2Model",
                         "models/llava.py `self.language_model = Qwen2ForCausalLM(` (0.4.0:495, 0.5.8:554, 0.5.23:588)"),
    DpAttentionEmbedding("Qwen3NextForCausalLM", "Qwen3NextModel", "models/qwen3_next.py Qwen3NextModel (0.5.23:909)"),
    DpAttentionEmbedding("BailingMoeForCausalLM", "BailingMoEModel", "models/bailing_moe.py (0.5.1:336 … 0.5.23:1112)"),
    DpAttentionEmbedding("BailingMoeV2ForCausalLM", "BailingMoEModel",
                         "models/bailing_moe.py BailingMoeV2ForCausalLM(BailingMoEForCausalLM) (0.5.23:1116)"),
    DpAttentionEmbedding("BailingMoEForCausalLM", "BailingMoEModel", "models/bailing_moe.py (0.5.23:857)"),
    DpAttentionEmbedding("FalconH1ForCausalLM", "FalconH1Model", "models/falcon_h1.py FalconH1Model (0.5.23:370)"),
    DpAttentionEmbedding("Step3VLForConditionalGeneration", "Step3TextModel",
                         "models/step3_vl.py Step3TextModel (0.5.23:417)"),
    DpAttentionEmbedding("LongcatFlashForCausalLM", "LongcatFlashModel",
                         "models/longcat_flash.py LongcatFlashModel (0.5.23:543)"),
    DpAttentionEmbedding("LLaDA2MoeModelLM", "LLaDA2MoeModel", "models/llada2.py LLaDA2MoeModelLM (0.5.23:1315, :1506)"),
    DpAttentionEmbedding("MiMoV2FlashForCausalLM", "MiMoV2Model",
                         "models/mimo_v2_flash.py (0.5.9:939); MiMoV2FlashForCausalLM(MiMoV2ForCausalLM) mimo_v2.py "
                         "(0.5.23:1796)"),
    DpAttentionEmbedding("MiMoV2ForCausalLM", "MiMoV2Model", "models/mimo_v2.py MiMoV2Model (0.5.11, 0.5.23:1237)"),
    DpAttentionEmbedding("BailingMoeV2_5ForCausalLM", "BailingMoELinearModel",
                         "models/bailing_moe_linear.py BailingMoeV2_5ForCausalLM(BailingMoELinearForCausalLM) "
                         "(0.5.23:1581)"),
)  # fmt: skip
_BY_CLASS = {entry.architecture: entry for entry in DP_ATTENTION_EMBEDDING_CLASSES}
# the wrappers that build their language model from the config's text section, by release file:line
TEXT_PICKING_WRAPPERS: dict[str, str] = {
    "InternVLChatModel": "internvl.py 0.4.6.post5:506 … 0.5.23:546-565 `config.llm_config.architectures[0] ==`",
    "LlavaForConditionalGeneration": "llava.py 0.4.6.post5:723 … 0.5.23:779 `_get_sgl_model_cls(self.text_config, "
                                     "AutoModelForCausalLM)`",
}
# the text model's model_type -> the causal-LM class (transformers' MODEL_FOR_CAUSAL_LM_MAPPING_NAMES; the class
# internvl.py's chain names): only types whose class has a row above
TEXT_TYPE_CLASS: dict[str, str] = {
    "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM", "qwen2_moe": "Qwen2MoeForCausalLM",
    "qwen3_moe": "Qwen3MoeForCausalLM", "gpt_oss": "GptOssForCausalLM", "glm4_moe": "Glm4MoeForCausalLM",
    "llama4_text": "Llama4ForCausalLM", "deepseek_v2": "DeepseekV2ForCausalLM", "deepseek_v3": "DeepseekV3ForCausalLM",
}  # fmt: skip
# SGLang's PixtralForConditionalGeneration builds Mistral-Large-3 only (pixtral.py:126): kvtop reads Pixtral-12B's
# params.json under the same class over a Mistral MHA model, which that code does not build (no latent attention)
_LATENT_ONLY = frozenset({"PixtralForConditionalGeneration"})


def dp_attention_embedding_class(model: ModelSpec) -> DpAttentionEmbedding | None:
    """The table's entry for this model's class (None: SGLang splits its embedding over TP under DP attention too)."""
    if model.architecture in TEXT_PICKING_WRAPPERS:
        inner = _BY_CLASS.get(TEXT_TYPE_CLASS.get(model.model_type, ""))
        if inner is None:  # a language model of the book's split (InternLM2, Llama …)
            return None
        built = f"{TEXT_PICKING_WRAPPERS[model.architecture]}: {inner.architecture}"
        return DpAttentionEmbedding(model.architecture, inner.built_by, built)
    entry = _BY_CLASS.get(model.architecture)
    if entry is None or (entry.architecture in _LATENT_ONLY and model.mla is None):
        return None
    return entry


def sglang_vocab_split(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> VocabSplit:
    """Under --enable-dp-attention a class of DP_ATTENTION_EMBEDDING_CLASSES has its embedding whole on every rank
    (rows padded to 64) or split over attention TP, by its model code's release (GROUP_ERAS); the LM head over TP.
    Otherwise the book's TP split."""
    entry = dp_attention_embedding_class(model) if settings.enable_dp_attention else None
    if entry is None:
        return VocabSplit()
    where = f"SGLang {version.label}'s {entry.built_by}, vocab_split.py"
    group = GROUP_ERAS[entry.built_by].at(version)
    if group is SplitGroup.TP:
        return VocabSplit()
    if group is SplitGroup.WHOLE:
        return VocabSplit(embedding=group, embedding_rows_padded=True,
                          note=f"SGLang builds it without TP under DP attention ({where})")  # fmt: skip
    return VocabSplit(embedding=group, note=f"SGLang splits it over attention TP under DP attention ({where})")

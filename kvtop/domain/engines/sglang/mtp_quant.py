"""SGLang's Qwen3.5 MTP draft of a ModelOpt NVFP4 checkpoint: built with no quant config, so its whole layer is bf16
(docs/engines/sglang.md §19.1).

`Qwen3_5ForCausalLMMTP.__init__` drops the quant config before building the MTP decoder layer (a one-layer
`Qwen3_5ForCausalLM`, full attention) for `modelopt_fp4`, "the MTP model is unquantized in the nvfp4 checkpoint": from
the first release of the class (0.5.9 models/qwen3_5_mtp.py:52-53; 0.5.11 :57-58; 0.5.13 :61-62; 0.5.14 :62-63);
from 0.5.20 `_mtp_quant_config` keeps the gate for a serialized NVFP4 checkpoint (`is_checkpoint_nvfp4_serialized`,
0.5.20 :67-70, 0.5.23 :65-69), which every ModelOpt NVFP4 config kvtop reads is. Its attention and experts are then
`UnquantizedLinearMethod` / `UnquantizedFusedMoEMethod` weights in the model dtype, where the weights book would
otherwise hold them as the target's NVFP4 (the book's `StageParts.mtp_plain`). A MIXED_PRECISION checkpoint
(`modelopt_mixed`) builds it plain too unless its quantized_layers list an `mtp.` module: from 0.5.20 by the same gate
(0.5.20 :61-65, 0.5.23 :60-64), before it because `ModelOptMixedPrecisionConfig` quantizes only the listed prefixes and
the draft's are `mtp.…` (read at 0.5.13 layers/quantization/modelopt_quant.py:605-781).

DeepSeek-V3/V3.2's and GLM-5's draft (`DeepseekV3ForCausalLMNextN`, configs/model_config.py `_config_draft_model`) and
GLM-4.5/4.6/4.7's (`Glm4MoeForCausalLMNextN`) drop it alike for `modelopt_fp4` (`NEXTN_PLAIN_ERAS`): their layer is
named `model.decoder` (the checkpoint's `model.layers.{num_hidden_layers}` renamed on load), which the checkpoint's
`model.layers.61*` exclusion would not match (modelopt_quant.py 0.5.14 :347 is_layer_excluded), so the class, not the
exclusion, keeps it bf16. A ModelOpt MIXED_PRECISION DeepSeek/GLM checkpoint (`modelopt_mixed`) keeps its quant config there: not read, not changed.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.layout import StageParts
from kvtop.domain.model import ModelSpec
from kvtop.domain.quant_spec import MTP_PREFIX

# the classes whose SGLang draft is Qwen3_5ForCausalLMMTP (qwen3_5_mtp.py EntryClass; the target classes of qwen3_5.py
# and qwen3_5_text.py)
QWEN3_5 = frozenset({"Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
                     "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM"})  # fmt: skip
PLAIN_ERAS: Eras[bool] = Eras((
    Era("", False, "no qwen3_5_mtp.py before 0.5.9"),
    Era("0.5.9", True, "models/qwen3_5_mtp.py: quant_config None for modelopt_fp4 (0.5.9 :52-53, 0.5.14 :62-63; "
        "serialized NVFP4 from 0.5.20 :67-70, 0.5.23 :65-69)"),
))  # fmt: skip

# the targets whose SGLang draft is DeepseekV3ForCausalLMNextN (DeepSeek-V3/V3.2, GLM-5: model_config.py 0.5.14
# :526-531) or Glm4MoeForCausalLMNextN (GLM-4.5/4.6/4.7: :540-541)
NEXTN = frozenset({"DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM", "Glm4MoeForCausalLM"})
NEXTN_PLAIN_ERAS: Eras[bool] = Eras((
    Era("", False, "deepseek_nextn.py 0.4.7 DeepseekModelNextN: the quant config kept whatever its name"),
    Era("0.4.8", True, "DeepseekModelNextN.__init__: quant_config None for modelopt_fp4 (deepseek_nextn.py 0.4.8 "
        ":47-51, 0.5.3 :52-56, 0.5.9 :79-83, 0.5.14 :88-92, 0.5.23 :75-79; glm4_moe_nextn.py Glm4MoeModelNextN from "
        "its first, 0.4.10 :48-52, 0.5.3 :49-53, 0.5.14 :50-54, 0.5.23 :52-56)"),
))  # fmt: skip


def with_mtp_plain(parts: StageParts, model: ModelSpec, version: ResolvedVersion) -> StageParts:
    """`parts` with the MTP layer in the model dtype where `version` builds a ModelOpt Qwen3.5's or DeepSeek/GLM's
    draft so."""
    quant = model.quant
    nvfp4 = quant.scheme == "modelopt" and quant.method == "nvfp4"
    if nvfp4 and model.mtp_layers and model.architecture in NEXTN and NEXTN_PLAIN_ERAS.at(version):
        return parts.model_copy(update={"mtp_plain": True})
    mixed = quant.scheme == "modelopt" and quant.method == "mixed" and not any(m.startswith(MTP_PREFIX) for m, _ in quant.mixed)
    if not ((nvfp4 or mixed) and model.mtp_layers and model.architecture in QWEN3_5 and PLAIN_ERAS.at(version)):
        return parts
    return parts.model_copy(update={"mtp_plain": True})

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
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.layout import StageParts
from kvtop.domain.model import ModelSpec

# the classes whose SGLang draft is Qwen3_5ForCausalLMMTP (qwen3_5_mtp.py EntryClass; the target classes of qwen3_5.py
# and qwen3_5_text.py)
QWEN3_5 = frozenset({"Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
                     "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM"})  # fmt: skip
PLAIN_ERAS: Eras[bool] = Eras((
    Era("", False, "no qwen3_5_mtp.py before 0.5.9"),
    Era("0.5.9", True, "models/qwen3_5_mtp.py: quant_config None for modelopt_fp4 (0.5.9 :52-53, 0.5.14 :62-63; "
        "serialized NVFP4 from 0.5.20 :67-70, 0.5.23 :65-69)"),
))  # fmt: skip


def with_mtp_plain(parts: StageParts, model: ModelSpec, version: ResolvedVersion) -> StageParts:
    """`parts` with the MTP layer in the model dtype where `version` builds a ModelOpt Qwen3.5's draft so."""
    quant = model.quant
    nvfp4 = quant.scheme == "modelopt" and quant.method == "nvfp4"
    mixed = quant.scheme == "modelopt" and quant.method == "mixed" and not any(m.startswith("mtp.") for m, _ in quant.mixed)
    if not ((nvfp4 or mixed) and model.mtp_layers and model.architecture in QWEN3_5 and PLAIN_ERAS.at(version)):
        return parts
    return parts.model_copy(update={"mtp_plain": True})

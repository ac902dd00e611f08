"""How vLLM builds a Qwen3-Next/3.5 MTP layer's `fc` (2 × hidden → hidden), where SGLang builds a whole bf16 nn.Linear.

vLLM's `Qwen3NextMultiTokenPredictor` / `Qwen3_5MultiTokenPredictor` build `fc` as a ColumnParallelLinear
(gather_output=True): its output rows split over TP, given the checkpoint's quant config from v0.11.0 (v0.10.2 passes
none: the model dtype). A ModelOpt NVFP4 checkpoint stores it bf16 without excluding it, so later releases pass no quant
config then (`fc_quant`, vLLM PR 38650). SGLang's qwen3_next_mtp.py / qwen3_5_mtp.py build `nn.Linear(2 × hidden,
hidden)`: whole and bf16 on every rank (0.5.14 :67 / :87), the weights book's default (`StageParts.mtp_fc` '').
The predictor names its layer `mtp.layers.{i}` from v0.11.0 (`NAMES_ERAS`), the names the checkpoint's quant lists are
asked under (`StageParts.mtp_names`). The architectures are data (the classes whose draft is this predictor); the build
is the engine's, by release.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.layout import MtpFc, StageParts
from kvtop.domain.model import ModelSpec

# the target classes whose MTP draft is Qwen3-Next's predictor, and Qwen3.5's (registry.py Qwen3NextMTP, Qwen3_5MTP,
# Qwen3_5MoeMTP; the drafts vLLM's speculative config picks for these model types)
QWEN3_NEXT = frozenset({"Qwen3NextForCausalLM"})
QWEN3_5 = frozenset({"Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
                     "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM"})  # fmt: skip

# the names the predictor gives its MTP layer i, which the quant config matches (ModelOpt's exclude_modules by fnmatch
# and substring: modelopt.py is_layer_excluded v0.17.0 :167 – v0.34.0 :230), so NVIDIA's NVFP4 checkpoints' `mtp*`
# builds the whole layer bf16 from v0.11.0, whatever the target's last layer holds
NAMES_ERAS: Eras[str] = Eras((
    Era("", "model.layers.{layer}.", "qwen3_next_mtp.py v0.10.2 :75 `{prefix}.layers.{mtp_start_layer_idx + idx}`, "
        ":235 prefix 'model'"),
    Era("0.11.0", "mtp.layers.{index}.", "qwen3_next_mtp.py v0.11.0 :72/:232 – v0.34.0 :101/:203, qwen3_5_mtp.py "
        "v0.17.0 :92/:360 – v0.34.0 :124/:237: maybe_prefix(prefix, 'mtp') + `.layers.{idx}`"),
))  # fmt: skip

# the targets whose draft is deepseek_mtp.py (DeepSeek-V3/V3.2, GLM-5: speculative.py v0.34.0 :850-852) or
# glm4_moe_mtp.py: MTP layer i is `model.layers.{num_hidden_layers + i}` (deepseek_mtp.py v0.10.2 :89/:95 – v0.34.0
# :148/:155/:244, glm4_moe_mtp.py v0.10.2 :116/:123 – v0.34.0 :142/:149/:204), which NVIDIA's NVFP4 checkpoints
# exclude whole (`model.layers.61*`): the layer bf16 whatever the target's last layer holds
NEXTN = frozenset({"DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM", "Glm4MoeForCausalLM"})
NEXTN_NAMES = "model.layers.{layer}."

FC_QUANT_ERAS: Eras[bool] = Eras((
    Era("", False, "qwen3_next_mtp.py v0.10.2 :62: ColumnParallelLinear(hidden × 2, hidden, gather_output=True), "
        "no quant_config"),
    Era("0.11.0", True, "qwen3_next_mtp.py v0.11.0 :60 – v0.19.0 :64, qwen3_5_mtp.py v0.17.1 :78 – v0.34.0 :100: "
        "ColumnParallelLinear given the quant config"),
))  # fmt: skip

# the releases whose `fc_quant` passes no quant config for a ModelOpt NVFP4 checkpoint, by predictor
NVFP4_BF16_ERAS: dict[frozenset[str], Eras[bool]] = {
    QWEN3_5: Eras((
        Era("", False, "qwen3_5_mtp.py v0.17.1, v0.19.0: the quant config whatever it is"),
        Era("0.20.0", True, "qwen3_5_mtp.py v0.20.0 :89 – v0.34.0 :100 fc_quant: None for modelopt_fp4"),
    )),
    QWEN3_NEXT: Eras((
        Era("", False, "qwen3_next_mtp.py v0.10.2 – v0.23.0: the quant config whatever it is"),
        Era("0.33.0", True, "qwen3_next_mtp.py v0.33.0 :79, v0.34.0 :87 fc_quant: None for modelopt_fp4 "
            "(first read at v0.33.0; v0.24.0 – v0.32.0 not read)"),
    )),
}  # fmt: skip


def mtp_fc(model: ModelSpec, version: ResolvedVersion) -> MtpFc:
    """How `version` builds `model`'s MTP `fc`: '' where its draft is not a Qwen3-Next/3.5 predictor."""
    family = next((archs for archs in NVFP4_BF16_ERAS if model.architecture in archs), None)
    if family is None or not model.mtp_layers:
        return ""
    nvfp4 = model.quant.scheme == "modelopt" and model.quant.method == "nvfp4"
    quantized = FC_QUANT_ERAS.at(version) and not (nvfp4 and NVFP4_BF16_ERAS[family].at(version))
    return "split_quantized" if quantized else "split"


def with_mtp_build(parts: StageParts, model: ModelSpec, version: ResolvedVersion) -> StageParts:
    """`parts` with the MTP `fc` as `version` builds it for `model`."""
    fc = mtp_fc(model, version)
    if fc:
        return parts.model_copy(update={"mtp_fc": fc, "mtp_names": NAMES_ERAS.at(version)})
    return parts.model_copy(update={"mtp_names": NEXTN_NAMES}) if model.mtp_layers and model.architecture in NEXTN else parts

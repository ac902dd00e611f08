"""How vLLM builds a Qwen3-Next/3.5 MTP layer's `fc` (2 × hidden → hidden), where SGLang builds a whole bf16 nn.Linear.

vLLM's `Qwen3NextMultiTokenPredictor` / `Qwen3_5MultiTokenPredictor` build `fc` as a ColumnParallelLinear
(gather_output=True): its output rows split over TP, given the checkpoint's quant config from v0.11.0 (v0.10.2 passes
none: the model dtype). A ModelOpt NVFP4 checkpoint stores it bf16 without excluding it, so later releases pass no quant
config then (`fc_quant`, vLLM PR 38650). SGLang's qwen3_next_mtp.py / qwen3_5_mtp.py build `nn.Linear(2 × hidden,
hidden)`: whole and bf16 on every rank (0.5.14 :67 / :87), the weights book's default (`StageParts.mtp_fc` '').
The predictor names its layer `mtp.layers.{i}` from v0.11.0 (`NAMES_ERAS`), the names the checkpoint's quant lists are
asked under (`StageParts.mtp_names`). The architectures are data (the classes whose draft is this predictor); the build
is the engine's, by release. The other drafts' layer names by target class and release are `NEXTN_ERAS`.
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

# the names the other `*_mtp` drafts give MTP layer i (`layer`: num_hidden_layers + i, `index`: i), by target class:
# `{prefix}.layers.{mtp_start_layer_idx + idx}` under prefix 'model', mtp_start_layer_idx the draft config's
# num_hidden_layers, which speculative.py's hf_config_override sets to 0 for some (then `index`). NVIDIA's NVFP4
# checkpoints exclude DeepSeek's `model.layers.61*` whole: the layer bf16 whatever the target's last layer holds
_LAYER = "model.layers.{layer}."
_INDEX = "model.layers.{index}."
NEXTN_ERAS: dict[frozenset[str], Eras[str]] = {
    # deepseek_mtp.py (DeepSeek-V3/V3.2, GLM-5: speculative.py v0.34.0 :850-852) v0.10.2 :89/:95 – v0.34.0
    # :148/:155/:244; the override keeps num_hidden_layers (config/__init__.py v0.10.2 :1990-1997)
    frozenset({"DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM"}): Eras((
        Era("", _LAYER, "deepseek_mtp.py v0.10.2 :89/:95 – v0.34.0 :148/:155/:244"),
    )),
    frozenset({"Glm4MoeForCausalLM"}): Eras((
        Era("", _INDEX, "glm4_moe_mtp.py v0.10.2 :116/:123 with num_hidden_layers 0 (config/__init__.py v0.10.2 "
            ":2012, speculative.py v0.11.0 :171, v0.13.0 :202)"),
        Era("0.14.0", _LAYER, "speculative.py v0.14.0 :198-206 keeps num_hidden_layers; glm4_moe_mtp.py v0.14.0 "
            ":127/:134 – v0.34.0 :142/:149/:204"),
    )),
    frozenset({"MiMoForCausalLM"}): Eras((
        Era("", _INDEX, "mimo_mtp.py v0.10.2 :98/:110 – v0.33.0 :96/:108, num_hidden_layers 0 (config/__init__.py "
            "v0.10.2 :2003, speculative.py v0.19.1 :249, v0.24.0 :342, v0.33.0 :800)"),
    )),
    frozenset({"Ernie4_5_MoeForCausalLM"}): Eras((
        Era("", _LAYER, "ernie_mtp.py v0.10.2 :101/:108, v0.19.1 :93/:100, v0.33.0 :91/:98 (mtp_block under the "
            "layer's prefix)"),
    )),
    frozenset({"PanguUltraMoEForCausalLM"}): Eras((
        Era("", _LAYER, "openpangu_mtp.py v0.19.1 :72/:78, v0.33.0 :76/:82 (first read at v0.19.1)"),
    )),
    frozenset({"HYV3ForCausalLM"}): Eras((
        Era("", _LAYER, "hy_v3_mtp.py v0.24.0 :145/:153, v0.33.0 :149/:157 (first read at v0.24.0)"),
    )),
    frozenset({"Step3p5ForCausalLM", "Step3p7FlashForCausalLM", "Step3p7ForConditionalGeneration"}): Eras((
        Era("", "model.layers.{layer}.mtp_block.", "step3p5_mtp.py v0.19.1 :58/:89/:96 – v0.33.0 :74/:105/:112: "
            "the decoder under `{prefix}.mtp_block` (first read at v0.19.1)"),
    )),
}  # fmt: skip


def nextn_names(model: ModelSpec, version: ResolvedVersion) -> str:
    """The names `version`'s draft class gives `model`'s MTP layers ('' where not read: the target's last layer's)."""
    eras = next((eras for archs, eras in NEXTN_ERAS.items() if model.architecture in archs), None)
    return eras.at(version) if eras is not None and model.mtp_layers else ""


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
    names = nextn_names(model, version)
    return parts.model_copy(update={"mtp_names": names}) if names else parts

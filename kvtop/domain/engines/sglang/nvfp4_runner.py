"""The MoE runner SGLang's `auto` picks for ModelOpt NVFP4 experts, by release, model class and GPU: one table.

kvtop reads no `--moe-runner-backend` (flags_unmodelled_late.py: typed, it is refused; on a `--cmd` line named as
ignored), so every NVFP4 MoE rule (blockscale_leak.py, nvfp4_pad.py, weights_built.py) follows SGLang's own pick:

- DeepSeek-V4's hybrid FP8+NVFP4 checkpoints: its model overrides run `flashinfer_trtllm_routed` on any GPU
  (DSV4_ROUTED_ERAS), the TRT-LLM weight path, before the rules below.
- SM 8.0 – 9.x: the NVFP4 MoE raises below Blackwell until 0.5.12; from 0.5.13 `create_moe_runner` picks Marlin at
  `auto` (MARLIN_MOE_ERAS).
- SM 10.x: `ServerArgs._handle_model_specific_adjustments` sets `flashinfer_trtllm` per model class block (from
  0.5.15 the blocks moved to arg_groups/overrides.py, from 0.5.19 to arg_groups/model_overrides/*.py; MiniMax-M2's
  `flashinfer_trtllm_routed` from 0.5.18 takes the same TRT-LLM weight path in modelopt_quant.py) (SM10_DEFAULT_ERAS,
  by release: each block's classes and the quantization strings it takes). Every release from 0.5.3 to 0.5.23 was
  read whole (wheels from PyPI; 0.5.15 and 0.5.15.post1 alike), so a class without a block runs CUTLASS. A block's
  quantization string is the launch's `--quantization` where given (`runner_pick(..., quantization)`, read from
  LaunchSettings by the ledger and the budget), else config.json's top-level quant_method as written
  (QuantSpec.config_quant_method; none where config.json states no block), 0.5.4: the flag alone. A block
  whose pick turns on what kvtop does not read (a quant_method nested in text_config where no flag is given, the
  FlashInfer version, the checkpoint's shard headers, a MIXED_PRECISION checkpoint's per-layer formats, a
  `--quantization` choice other than modelopt / modelopt_fp4) is assumed CUTLASS and named not modelled
  (moe_runner_note.py).
- SM 11.x / 12.x (Thor, RTX 50, RTX PRO 6000, GB10): CUTLASS for every class; the server's flashinfer_trtllm defaults
  test `is_sm100_supported`, capability 10.x only (utils/common.py:258-262 at 0.5.9; 0.5.23
  arg_groups/model_overrides/*.py `get_platform().is_sm100`, the same majors [10]: utils/common.py:309-313). From
  0.5.14 `auto` with modelopt_fp4 on SM 12.x (and 11.x at 0.5.22 – 0.5.23) is set to flashinfer_cutlass
  (server_args.py:5096-5101 at 0.5.14, overrides.py:1518 at 0.5.23), the same CUTLASS branch.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engines.sglang.architectures import GEMMA4_CLASSES
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.gpus import compute_capability
from kvtop.domain.model import ModelSpec


class NvFp4MoeRunner(str, Enum):
    """SGLang's NVFP4 MoE runner paths through `ModelOptNvFp4FusedMoEMethod` (modelopt_quant.py)."""

    TRTLLM = "flashinfer_trtllm"  # shuffles the weights for FlashInfer's TRT-LLM kernels
    CUTLASS = "cutlass"  # the branch neither flashinfer_trtllm nor Marlin takes: swizzles the block scales
    MARLIN = "marlin"  # below Blackwell, from 0.5.13


class RunnerPick(BaseModel):
    """The runner SGLang's `auto` takes, and whether kvtop read it (False: assumed CUTLASS, `why` says why)."""

    model_config = ConfigDict(frozen=True)

    runner: NvFp4MoeRunner
    read: bool
    why: str = ""


# The quantization string a class block of `_handle_model_specific_adjustments` sees for a ModelOpt NVFP4 checkpoint:
# `--quantization` where given, else config.json's top-level `quantization_config.quant_method` as written
# (`get_quantization_config`, utils/common.py: hf_config only; hf_quant_config.json is read by ModelConfig, not here:
# without a config.json block the string is none), else none. QuantSpec.config_quant_method keeps that literal
# ("modelopt" in every NVIDIA checkpoint at hand); where kvtop did not read it (a block nested in text_config) the
# default is read only where every string of the checkpoint's form gives one runner (FORM_QUANTS).
NONE, MODELOPT, MODELOPT_FP4 = "none", "modelopt", "modelopt_fp4"
FORM_QUANTS = (MODELOPT, MODELOPT_FP4)  # a ModelOpt NVFP4 block's quant_method where its literal was not read
# `--quantization` as typed (LaunchSettings.quantization) is the string every block sees where given (the blocks fill
# it from config.json only where it is None: arg_groups/overrides.py:787-809 at 0.5.23, server_args.py:2022-2044 at
# 0.5.13, :921-931 at 0.5.5). The argparse choices a ModelOpt NVFP4 checkpoint loads under (arg_groups/choices.py:42-45
# at 0.5.23) kvtop reads: `modelopt` (ModelConfig reads the checkpoint's algorithm) and `modelopt_fp4`; any other
# choice on such a checkpoint is not read (named: moe_runner_note.py).
LAUNCH_QUANTS = frozenset({MODELOPT, MODELOPT_FP4})


class ClassDefault(BaseModel):
    """One class block's pick on SM 10.x: `flashinfer_trtllm` for the quantization strings in `trtllm`, unknown for
    those in `unsure` (a check of the checkpoint's files or the FlashInfer version), else CUTLASS; `fixed` where the
    block picks without the string (Nemotron-H reads ModelConfig's quantization, hf_quant_config.json included).
    `checkpoint` narrows the pick to the checkpoints whose form it was read for ("plain": ModelConfig's quantization
    is modelopt_fp4; "not_mixed": not a ModelOpt MIXED_PRECISION one): elsewhere it is unknown."""

    model_config = ConfigDict(frozen=True)

    trtllm: frozenset[str] = frozenset()
    unsure: frozenset[str] = frozenset()
    fixed: NvFp4MoeRunner | None = None
    checkpoint: Literal["any", "plain", "not_mixed"] = "any"
    flag_only: bool = False  # the block reads `--quantization` alone, never config.json's quant_method (0.5.4)

    def runner(self, quant: str) -> NvFp4MoeRunner | None:
        if self.fixed is not None:
            return self.fixed
        return None if quant in self.unsure else _T if quant in self.trtllm else _C

    def reads(self, model: ModelSpec) -> bool:
        """Whether the pick holds for this checkpoint's form (`checkpoint`)."""
        quant = model.quant
        if self.checkpoint == "plain":
            return plain_modelopt_fp4(model)
        return self.checkpoint == "any" or not quant.mixed


class Sm10Defaults(BaseModel):
    """A release's class blocks that set the NVFP4 MoE runner on SM 10.x; `complete` where every block of the
    release was read, so a class without one runs `auto` (CUTLASS)."""

    model_config = ConfigDict(frozen=True)

    classes: tuple[tuple[str, ClassDefault], ...]
    complete: bool

    def of(self, architecture: str) -> ClassDefault | None:
        return next((rule for name, rule in self.classes if name == architecture), None)


def _block(names: tuple[str, ...], rule: ClassDefault) -> tuple[tuple[str, ClassDefault], ...]:
    return tuple((name, rule) for name in names)


_T, _C = NvFp4MoeRunner.TRTLLM, NvFp4MoeRunner.CUTLASS
_FP4 = ClassDefault(trtllm=frozenset({MODELOPT_FP4}))  # `self.quantization in [..., "modelopt_fp4"]`
# 0.5.4's DeepSeek-V3 block: `self.quantization == "modelopt_fp4"`, the launch's flag as typed (nothing fills it from
# config.json before it at 0.5.4: server_args.py:895-901)
_FP4_FLAG = ClassDefault(trtllm=frozenset({MODELOPT_FP4}), flag_only=True)
_FP4_OR_NONE = ClassDefault(trtllm=frozenset({NONE, MODELOPT_FP4}))  # ... `or self.quantization is None`
_UNREAD = ClassDefault(unsure=frozenset({NONE, MODELOPT, MODELOPT_FP4}))  # a block whose condition kvtop did not read
_DSV3 = "DeepseekV3ForCausalLM"
# Llama4's block (0.5.5 on) sets flashinfer_trtllm for fp8 / modelopt_fp8 only: CUTLASS for NVFP4, no entry
_DEEPSEEK_057 = ("MistralLarge3ForCausalLM", "PixtralForConditionalGeneration")  # beside DeepSeek-V3 from 0.5.7
_DEEPSEEK_059 = _DEEPSEEK_057 + ("KimiK25ForConditionalGeneration", "GlmMoeDsaForCausalLM")
_QWEN_056 = ("Qwen3MoeForCausalLM", "Qwen3VLMoeForConditionalGeneration", "Qwen3NextForCausalLM")
_QWEN_059 = _QWEN_056 + ("Qwen3_5MoeForConditionalGeneration", "Qwen3_5ForConditionalGeneration")
_GLM4 = (("Glm4MoeForCausalLM", ClassDefault(unsure=frozenset({MODELOPT_FP4}))),)  # flashinfer-python >= 0.6.2/0.6.3
_NEMOTRON_CUTLASS = (("NemotronHForCausalLM", ClassDefault(fixed=_C)),)  # flashinfer_cutlass: the CUTLASS branch
_NEMOTRON_TRTLLM = (("NemotronHForCausalLM", ClassDefault(fixed=_T)),)  # flashinfer_trtllm on sm100, a2a none
# DeepSeek-V3 with no quantization string: `fp8` to 0.5.10 (in the list), from 0.5.11 `fp8` only where
# has_fp8_weights_in_checkpoint finds the first expert weight in float8 (utils/common.py:2734-2797 at 0.5.11;
# an NVFP4 checkpoint's is uint8 or its float8 scale, by the shard's key order: unsure); 0.5.13 adds `or None`
_DSV3_FP8 = ((_DSV3, _FP4_OR_NONE),)
_DSV3_FILES = ((_DSV3, ClassDefault(trtllm=frozenset({MODELOPT_FP4}), unsure=frozenset({NONE}))),)
_GEMMA4 = GEMMA4_CLASSES
_GEMMA4_0521 = _GEMMA4 + ("DiffusionGemmaForBlockDiffusion",)
_DEEPSEEK_0514 = (_DSV3, "DeepseekV32ForCausalLM") + _DEEPSEEK_059
_DEEPSEEK_0519 = _DEEPSEEK_0514 + ("Dots3NoteForCausalLM",)
_DEEPSEEK_0520 = _DEEPSEEK_0519 + ("Glm5NextForConditionalGeneration", "HYV4ForCausalLM", "HYV4ForCausalLMNextN")
_QWEN_0514 = _QWEN_059 + ("InternS2PreviewForConditionalGeneration",)
_MINIMAX_M2 = ("MiniMaxM2ForCausalLM",)
_MINIMAX_M3 = ("MiniMaxM3SparseForCausalLM", "MiniMaxM3SparseForConditionalGeneration")
_NEMOTRON = ("NemotronHForCausalLM", "NemotronHPuzzleForCausalLM")
_NEMOTRON_0514 = _block(_NEMOTRON, ClassDefault(fixed=_T))  # is_modelopt or none -> flashinfer_trtllm on sm100
# from 0.5.18 a MIXED_PRECISION config.json whose experts are W4A16_NVFP4 runs Marlin (not read: unknown there)
_NEMOTRON_0518 = _block(_NEMOTRON, ClassDefault(fixed=_T, checkpoint="not_mixed"))
_NEMOTRON_0520 = _block(_NEMOTRON + ("NemotronH_Omni_Reasoning_V3",), ClassDefault(fixed=_T, checkpoint="not_mixed"))
# `ModelConfig.quantization == "modelopt_fp4"` (Gemma-4; MiniMax-M2's flashinfer_trtllm_routed, the same weights)
_CONFIG_FP4 = ClassDefault(fixed=_T, checkpoint="plain")
# Beam: --quantization, else config.json's quant_method, `modelopt` read as its quant_algo (NVFP4)
_BEAM = ClassDefault(trtllm=frozenset({MODELOPT, MODELOPT_FP4}), checkpoint="not_mixed")

SM10_DEFAULT_ERAS: Eras[Sm10Defaults] = Eras((
    Era("", Sm10Defaults(classes=(), complete=False), "before 0.5.3: not read"),
    Era("0.5.3", Sm10Defaults(classes=(), complete=True), "server_args.py sets no flashinfer MoE runner (0.5.3 read)"),
    Era("0.5.4", Sm10Defaults(classes=((_DSV3, _FP4_FLAG),), complete=True),
        "server_args.py:879-901 (0.5.4): flashinfer_trtllm for DeepseekV3ForCausalLM on sm100 where quantization == "
        "modelopt_fp4 (the flag as typed: none without it)"),
    Era("0.5.5", Sm10Defaults(classes=_DSV3_FP8, complete=True),
        "server_args.py:915-940 (DeepSeek-V3: none -> config.json's quant_method, else fp8; fp8 / modelopt_fp8 / "
        "modelopt_fp4), :999-1013 (Llama4: fp8 / modelopt_fp8 only, CUTLASS for NVFP4) at 0.5.5"),
    Era("0.5.6", Sm10Defaults(classes=_DSV3_FP8 + _NEMOTRON_CUTLASS
                              + _block(_QWEN_056, _FP4), complete=True),
        "server_args.py at 0.5.6: DeepSeek-V3 :939-1057 (none -> fp8; fp8 / modelopt_fp8 / modelopt_fp4), Nemotron-H "
        ":1197-1213 (flashinfer_cutlass), Qwen3-MoE / VL-MoE :1214-1232 and Qwen3-Next :1237-1259 (fp8 / "
        "modelopt_fp4), Llama4 :1149 (fp8 / modelopt_fp8 only); 0.5.7 alike (Mistral-Large-3 / Pixtral in DeepSeek's "
        "block: :1023-1137; Llama4 :1261)"),
    Era("0.5.7", Sm10Defaults(classes=_DSV3_FP8 + _block(_DEEPSEEK_057, _FP4)
                              + _NEMOTRON_CUTLASS + _block(_QWEN_056, _FP4), complete=True),
        "server_args.py:1023-1137 (0.5.7): Mistral-Large-3 and Pixtral join DeepSeek-V3's block; Llama4 :1261"),
    Era("0.5.8", Sm10Defaults(classes=_DSV3_FP8 + _block(_DEEPSEEK_057, _FP4)
                              + _NEMOTRON_CUTLASS + _block(_QWEN_056, _FP4_OR_NONE) + _GLM4, complete=True),
        "server_args.py at 0.5.8: Qwen3 blocks :1466-1500 add `or self.quantization is None`; Glm4MoeForCausalLM "
        ":1519-1536 (modelopt_fp4 and flashinfer-python >= 0.6.2), Llama4 :1368"),
    Era("0.5.9", Sm10Defaults(classes=_DSV3_FP8 + _block(_DEEPSEEK_059, _FP4)
                              + _NEMOTRON_CUTLASS + _block(_QWEN_059, _FP4_OR_NONE) + _GLM4, complete=True),
        "server_args.py at 0.5.9: DeepSeek block :1197-1310 (Kimi-K2.5, GLM-5 join), Nemotron-H :1529-1546, Qwen3 "
        ":1558-1596 (Qwen3.5 joins), Glm4Moe :1607-1624, Llama4 :1470; 0.5.10rc0 and 0.5.10 alike (Qwen blocks "
        "merged; Llama4 :1860 at 0.5.10)"),
    Era("0.5.11", Sm10Defaults(classes=_DSV3_FILES + _block(_DEEPSEEK_059, _FP4)
                               + _NEMOTRON_TRTLLM + _block(_QWEN_059, _FP4_OR_NONE) + _GLM4, complete=True),
        "server_args.py at 0.5.11: DeepSeek-V3 :1805-1828 (has_fp8_weights_in_checkpoint), Nemotron-H :2143-2172 "
        "(flashinfer_trtllm on sm100), Llama4 :2069"),
    Era("0.5.12", Sm10Defaults(classes=_DSV3_FILES + _block(_DEEPSEEK_059 + ("DeepseekV32ForCausalLM",), _FP4)
                               + _NEMOTRON_TRTLLM + _GLM4
                               + _block(_QWEN_059 + ("InternS2PreviewForConditionalGeneration",), _FP4_OR_NONE),
                               complete=True),
        "server_args.py at 0.5.12: DeepSeek block :1786-1953 (DeepSeek-V3.2 joins), Qwen :2286-2310 (Intern-S2 "
        "joins), Glm4Moe :2357-2376, Llama4 :2206; arg_groups/nemotron_h_hook.py:30-40"),
    Era("0.5.13", Sm10Defaults(classes=_block((_DSV3,) + _DEEPSEEK_059 + ("DeepseekV32ForCausalLM",), _FP4_OR_NONE)
                               + _NEMOTRON_TRTLLM + _GLM4
                               + _block(_QWEN_059 + ("InternS2PreviewForConditionalGeneration",), _FP4_OR_NONE)
                               + _block(_GEMMA4, _CONFIG_FP4), complete=True),
        "server_args.py at 0.5.13: DeepSeek block :1839-2055 adds `or self.quantization is None`; Llama4 :2346-2351 "
        "(fp8 / modelopt_fp8 only: CUTLASS for NVFP4); Gemma-4 :2365-2407 (is_gemma4_modelopt_fp4 = ModelConfig's "
        "quantization == modelopt_fp4, :2370); arg_groups/nemotron_h_hook.py:34-56"),
    Era("0.5.14", Sm10Defaults(classes=_block(_DEEPSEEK_0514, _FP4_OR_NONE) + _NEMOTRON_0514
                               + (("Glm4MoeForCausalLM", _FP4),) + _block(_QWEN_0514, _FP4_OR_NONE)
                               + _block(_GEMMA4, _CONFIG_FP4), complete=True),
        "server_args.py at 0.5.14: DeepSeek block :3519-3526 / :3684-3733 (none, fp8, modelopt_fp8 / _fp4 / _mixed), "
        "Llama4 :4038-4040 (fp8 / modelopt_fp8 only), Gemma-4 :4087-4090 (ModelConfig's modelopt_fp4), Qwen "
        ":4152-4176 (fp8 / modelopt_fp4 or none), Glm4Moe :4221-4240 (modelopt_fp4, no FlashInfer check); "
        "arg_groups/nemotron_h_hook.py:14-58; SM 12.x modelopt_fp4 -> flashinfer_cutlass :5096-5101"),
    Era("0.5.15", Sm10Defaults(classes=_block(_DEEPSEEK_0514, _FP4_OR_NONE) + _NEMOTRON_0514
                               + (("Glm4MoeForCausalLM", _FP4_OR_NONE),) + _block(_QWEN_0514, _FP4_OR_NONE)
                               + _block(_GEMMA4, _CONFIG_FP4), complete=True),
        "arg_groups/overrides.py at 0.5.15 and 0.5.15.post1: Llama4 :575-601, Gemma-4 :609-631, Nemotron-H :727-789, "
        "Qwen :836-866, Glm4Moe :869-900 (modelopt_fp4 or none), DeepSeek family :1165-1247; 0.5.16 alike (:676-1391)"),
    Era("0.5.17", Sm10Defaults(classes=_block(_DEEPSEEK_0514, _FP4_OR_NONE) + _NEMOTRON_0514
                               + (("Glm4MoeForCausalLM", _FP4_OR_NONE),) + _block(_QWEN_0514, _FP4_OR_NONE)
                               + _block(_GEMMA4, _CONFIG_FP4) + _block(_MINIMAX_M3, _UNREAD), complete=True),
        "arg_groups/overrides.py at 0.5.17: MiniMax-M3 :704-776 (flashinfer_trtllm_routed for the string "
        "modelopt_mixed: a launch string not read), MiMo-V2 :678-691 (fp8 only), LongCat in the DeepSeek family but "
        "excluded from its pick (:1663-1740)"),
    Era("0.5.18", Sm10Defaults(classes=_block(_DEEPSEEK_0514, _FP4_OR_NONE) + _NEMOTRON_0518
                               + (("Glm4MoeForCausalLM", _FP4_OR_NONE),) + _block(_QWEN_0514, _FP4_OR_NONE)
                               + _block(_GEMMA4 + _MINIMAX_M2, _CONFIG_FP4) + _block(_MINIMAX_M3, _UNREAD),
                               complete=True),
        "arg_groups/overrides.py at 0.5.18: MiniMax-M2 :743-756 (flashinfer_trtllm_routed where ModelConfig's "
        "quantization is modelopt_fp4; modelopt_quant.py:2156-2159 takes the TRT-LLM weight path for it), Nemotron-H "
        ":1232-1305 (marlin for W4A16_NVFP4 experts of a MIXED_PRECISION config.json)"),
    Era("0.5.19", Sm10Defaults(classes=_block(_DEEPSEEK_0519, _FP4_OR_NONE) + _NEMOTRON_0518
                               + (("Glm4MoeForCausalLM", _FP4_OR_NONE),) + _block(_QWEN_0514, _FP4_OR_NONE)
                               + _block(_GEMMA4 + _MINIMAX_M2, _CONFIG_FP4) + _block(_MINIMAX_M3, _UNREAD),
                               complete=True),
        "arg_groups/model_overrides/*.py at 0.5.19: nemotron_h.py:51-77, minimax_m2.py:26-31, gemma4.py:39-40, "
        "qwen3_moe.py:41-45, glm4_moe.py:38, llama4.py:42 (fp8 only), cohere2_moe.py:36-48 (llm-compressor NVFP4 "
        "only); overrides.py:830 (DeepSeek)"),
    Era("0.5.20", Sm10Defaults(classes=_block(_DEEPSEEK_0520, _FP4_OR_NONE) + _NEMOTRON_0520
                               + (("Glm4MoeForCausalLM", _FP4_OR_NONE),)
                               + _block(_QWEN_0514 + ("Qwen4ExpForConditionalGeneration",), _FP4_OR_NONE)
                               + _block(_GEMMA4 + _MINIMAX_M2, _CONFIG_FP4) + _block(_MINIMAX_M3, _UNREAD),
                               complete=True),
        "at 0.5.20: Glm5Next / HYV4 join the DeepSeek family (overrides.py:800-874), Qwen4Exp the Qwen block "
        "(qwen3_moe.py:34-89; W4A16 marlin only for the string modelopt_mixed), Nemotron-H Omni (nemotron_h.py:87)"),
    Era("0.5.21", Sm10Defaults(classes=_block(_DEEPSEEK_0520, _FP4_OR_NONE) + _NEMOTRON_0520
                               + (("Glm4MoeForCausalLM", _FP4_OR_NONE),)
                               + _block(_QWEN_0514 + ("Qwen4ExpForConditionalGeneration",), _FP4_OR_NONE)
                               + _block(_GEMMA4_0521 + _MINIMAX_M2, _CONFIG_FP4) + _block(_MINIMAX_M3, _UNREAD),
                               complete=True),
        "at 0.5.21: DiffusionGemma joins Gemma-4 (model_overrides/gemma4.py:41-46), bailing_moe_v3.py (MXFP4 "
        "only); 0.5.22 alike (overrides.py:794 DeepSeek, gemma4.py:46, minimax_m2.py:28)"),
    Era("0.5.23", Sm10Defaults(classes=_block(_DEEPSEEK_0520, _FP4_OR_NONE) + _NEMOTRON_0520
                               + (("Glm4MoeForCausalLM", _FP4_OR_NONE),)
                               + _block(_QWEN_0514 + ("Qwen4ExpForConditionalGeneration",), _FP4_OR_NONE)
                               + _block(_GEMMA4_0521 + _MINIMAX_M2, _CONFIG_FP4) + _block(_MINIMAX_M3, _UNREAD)
                               + (("BeamForCausalLM", _BEAM),), complete=True),
        "at 0.5.23: overrides.py:745-818 (DeepSeek family: a config.json quant_method `modelopt` is not in the list), "
        ":1518 (SM 11.x / 12.x flashinfer_cutlass), model_overrides/beam.py:33-42, nemotron_h.py:68-103, "
        "minimax_m2.py:23-28, gemma4.py:45-46"),
))  # fmt: skip
MARLIN_MOE_ERAS: Eras[bool] = Eras((
    Era("", False, "the NVFP4 MoE raises below Blackwell (modelopt_quant.py:1525-1528 at 0.5.12; the same check read "
                   "in 0.5.9, 0.5.10, 0.5.11)"),
    Era("0.5.13", True, "create_moe_runner picks MARLIN at `auto` on SM 8.0 – 9.x (modelopt_quant.py:2183-2188 at "
                        "0.5.13, :3117-3120 at 0.5.23); process_weights_after_loading returns after "
                        "prepare_moe_nvfp4_layer_for_marlin (:1907-1914; :2738-2764 at 0.5.23), before the alias"),
))  # fmt: skip
CUTLASS_ONLY_MAJORS = (11, 12)  # Blackwell beyond SM 10.x: no flashinfer_trtllm default for any class
# DeepSeek-V4's own override: at `auto`, a hybrid FP8+NVFP4 checkpoint (ModelConfig.nvfp4_moe_meta set: a
# MIXED_PRECISION block with moe_quant_algo NVFP4 and a group_size, configs/model_config.py:351-370 at 0.5.14) runs
# `flashinfer_trtllm_routed`, which takes the TRT-LLM weight path in modelopt_quant.py (its experts are built by
# HybridFp8NvFp4Config's ModelOptFp4Config: model_loader/loader.py:249-270 at 0.5.14, :252-273 at 0.5.15), whatever
# the GPU (below Blackwell the engine then refuses it: checks.py). Read in the wheels: 0.5.13 has no nvfp4_moe_meta;
# 0.5.14 arg_groups/deepseek_v4_hook.py:63-70 (apply_deepseek_v4_defaults, server_args.py:3510-3517); 0.5.15
# arg_groups/overrides.py:713-722; 0.5.17 overrides.py:1110-1117; model_overrides/deepseek_v4.py:53-54 at 0.5.19 –
# 0.5.20, :69-70 at 0.5.21 – 0.5.22, :66-74 at 0.5.23. kvtop plans DeepSeek-V4 from 0.5.14 with the classes as read
# at 0.5.23 (dsv4.py).
DSV4_ROUTED_ERAS: Eras[bool] = Eras((
    Era("", False, "no nvfp4_moe_meta before 0.5.14 (configs/model_config.py at 0.5.13)"),
    Era("0.5.14", True, "arg_groups/deepseek_v4_hook.py:63-70 at 0.5.14 (overrides.py:713-722 at 0.5.15; "
                        "model_overrides/deepseek_v4.py:66-74 at 0.5.23): flashinfer_trtllm_routed where "
                        "nvfp4_moe_meta is set"),
))  # fmt: skip


def states_quant_block(model: ModelSpec) -> bool:
    """Whether the checkpoint's config.json states its quantization (else it came from hf_quant_config.json:
    `QuantSpec.from_quant_file`, set where the block is read)."""
    return not model.quant.from_quant_file


def plain_modelopt_fp4(model: ModelSpec) -> bool:
    """Whether SGLang's ModelConfig reads the checkpoint's quantization as modelopt_fp4 with or without
    `--quantization modelopt_fp4`: a ModelOpt NVFP4 block (config.json's or hf_quant_config.json's) that is not
    MIXED_PRECISION (`_parse_modelopt_quant_config`: "FP4" in quant_algo, configs/model_config.py:1029 at 0.5.13,
    :1152 at 0.5.14, :1757 at 0.5.22), and one ModelOpt claims (else ModelConfig may find no quantization)."""
    quant = model.quant
    return quant.method == "nvfp4" and quant.scheme == "modelopt" and not quant.mixed and not quant.modelopt_unclaimed


def launch_quantization(quantization: str | None) -> str | None:
    """`--quantization` as SGLang's blocks compare it (argparse keeps the choice's spelling; kvtop's flag value may
    carry case or spaces); None where not given."""
    method = (quantization or "").strip().lower()
    return method or None


def _quant_strings(rule: ClassDefault, model: ModelSpec, quantization: str | None) -> tuple[str, ...]:
    """The strings the block may see: the launch's `--quantization` where given, else NONE where the block reads
    the flag alone or config.json states no block, else config.json's quant_method as written (none where the
    block states none), else those of a ModelOpt NVFP4 block (FORM_QUANTS)."""
    if quantization is not None:
        return (quantization,)
    if rule.flag_only or not states_quant_block(model):
        return (NONE,)
    literal = model.quant.config_quant_method
    if literal is None:
        return FORM_QUANTS
    return (literal or NONE,)


def runner_pick(
    model: ModelSpec, gpu_name: str | None, version: ResolvedVersion, quantization: str | None = None
) -> RunnerPick:
    """SGLang's `auto` NVFP4 MoE runner for this model class on this GPU at this release (the module's docstring);
    `quantization`: the launch's `--quantization` as typed (LaunchSettings.quantization), None where not given."""
    quantization = launch_quantization(quantization)
    experts = model.quant.routed_experts
    if model.compressed is not None and experts is not None and experts.method == "nvfp4" and DSV4_ROUTED_ERAS.at(version):
        return RunnerPick(runner=_T, read=True)  # DeepSeek-V4's hybrid FP8+NVFP4 checkpoint (DSV4_ROUTED_ERAS)
    capability = compute_capability(gpu_name)
    if capability is None:
        return RunnerPick(runner=_C, read=False, why="the GPU is not known")
    if (8, 0) <= capability < (10, 0) and MARLIN_MOE_ERAS.at(version):
        return RunnerPick(runner=NvFp4MoeRunner.MARLIN, read=True)
    if capability[0] != 10:
        return RunnerPick(runner=_C, read=capability[0] in CUTLASS_ONLY_MAJORS, why="not read on this GPU")
    era = SM10_DEFAULT_ERAS.era(version)
    rule = era.value.of(model.architecture)
    if rule is None:
        if era.value.complete:
            return RunnerPick(runner=_C, read=True)
        why = f"its per-class defaults at this release were not read ({era.source})"
        return RunnerPick(runner=_C, read=False, why=why)
    if not rule.reads(model):
        form = "quantization as modelopt_fp4" if rule.checkpoint == "plain" else "MIXED_PRECISION layers' formats"
        why = f"its default turns on how SGLang's ModelConfig reads this checkpoint's {form} ({era.source})"
        return RunnerPick(runner=_C, read=False, why=why)
    if quantization is not None and rule.fixed is None and quantization not in LAUNCH_QUANTS:
        return RunnerPick(runner=_C, read=False, why=(
            f"kvtop does not read how its block takes --quantization {quantization} on a ModelOpt NVFP4 checkpoint "
            f"({era.source})"))  # fmt: skip
    quants = _quant_strings(rule, model, quantization)
    picks = {rule.runner(quant) for quant in quants}
    only = picks.pop() if len(picks) == 1 else None  # read where every string the block may see gives one runner
    if only is not None:
        return RunnerPick(runner=only, read=True)
    if quantization is not None:
        return RunnerPick(runner=_C, read=False, why=(
            f"its default for --quantization {quantization} turns on what the engine checks at start ({era.source})"))
    form = "config.json's quant_method" if states_quant_block(model) else "no quant_method in config.json"
    return RunnerPick(runner=_C, read=False, why=(
        f"its default turns on the quantization SGLang's server arguments see ({form}, or --quantization: "
        f"{' / '.join(quants)}) or on what the engine checks at start ({era.source})"))  # fmt: skip


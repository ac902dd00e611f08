"""The MoE runner SGLang's `auto` picks for ModelOpt NVFP4 experts, by release, model class and GPU: one table.

kvtop reads no `--moe-runner-backend` (flags_unmodelled_late.py: typed, it is refused; on a `--cmd` line named as
ignored), so every NVFP4 MoE rule (blockscale_leak.py, nvfp4_pad.py, weights_built.py) follows SGLang's own pick:

- SM 8.0 – 9.x: the NVFP4 MoE raises below Blackwell until 0.5.12; from 0.5.13 `create_moe_runner` picks Marlin at
  `auto` (MARLIN_MOE_ERAS).
- SM 10.x: `ServerArgs._handle_model_specific_adjustments` sets `flashinfer_trtllm` per model class block
  (SM10_DEFAULT_ERAS, by release: each block's classes and the quantization strings it takes). At a release whose
  blocks were all read (0.5.3 – 0.5.13, wheels from PyPI) a class without one runs CUTLASS; a block whose pick turns
  on what kvtop does not read (config.json's literal quant_method, `--quantization`, the FlashInfer version, the
  checkpoint's shard headers), or a release not read (0.5.14 – 0.5.22; 0.5.23 but for the DeepSeek family), is
  assumed CUTLASS and named not modelled (moe_runner_note.py).
- SM 11.x / 12.x (Thor, RTX 50, RTX PRO 6000, GB10): CUTLASS for every class; the server's flashinfer_trtllm defaults
  test `is_sm100_supported`, capability 10.x only (utils/common.py:258-262 at 0.5.9; 0.5.23
  arg_groups/model_overrides/*.py `get_platform().is_sm100`, the same majors [10]: utils/common.py:309-313).
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict

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
# `--quantization` where given, else config.json's `quantization_config.quant_method` (`get_quantization_config`,
# utils/common.py: hf_config only; hf_quant_config.json is read by ModelConfig, not here), else none. kvtop reads
# whether config.json states a block; not its literal method ("modelopt" in every NVIDIA checkpoint at hand,
# "modelopt_fp4" also taken) nor `--quantization` (modelopt_fp4 is what an NVFP4 launch names), so a class's default
# is read only where every string of the checkpoint's form gives one runner.
NONE, MODELOPT, MODELOPT_FP4 = "none", "modelopt", "modelopt_fp4"
FORM_QUANTS = {False: (NONE, MODELOPT_FP4), True: (MODELOPT, MODELOPT_FP4)}  # config.json states a block?


class ClassDefault(BaseModel):
    """One class block's pick on SM 10.x: `flashinfer_trtllm` for the quantization strings in `trtllm`, unknown for
    those in `unsure` (a check of the checkpoint's files or the FlashInfer version), else CUTLASS; `fixed` where the
    block picks without the string (Nemotron-H reads ModelConfig's quantization, hf_quant_config.json included)."""

    model_config = ConfigDict(frozen=True)

    trtllm: frozenset[str] = frozenset()
    unsure: frozenset[str] = frozenset()
    fixed: NvFp4MoeRunner | None = None

    def runner(self, quant: str) -> NvFp4MoeRunner | None:
        if self.fixed is not None:
            return self.fixed
        return None if quant in self.unsure else _T if quant in self.trtllm else _C


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
_FP4_OR_NONE = ClassDefault(trtllm=frozenset({NONE, MODELOPT_FP4}))  # ... `or self.quantization is None`
_UNREAD = ClassDefault(unsure=frozenset({NONE, MODELOPT, MODELOPT_FP4}))  # a block whose condition kvtop did not read
_DSV3 = "DeepseekV3ForCausalLM"
_LLAMA4 = ("Llama4ForConditionalGeneration", "Llama4ForCausalLM")  # `"Llama4" in model_arch`: its condition not read
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
# arg_groups/overrides.py _DEEPSEEK_FAMILY_ARCHS at 0.5.23 (those kvtop plans)
DEEPSEEK_FAMILY = frozenset({_DSV3, "DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM"})
_ALWAYS_TRTLLM = ClassDefault(fixed=_T)

SM10_DEFAULT_ERAS: Eras[Sm10Defaults] = Eras((
    Era("", Sm10Defaults(classes=(), complete=False), "before 0.5.3: not read"),
    Era("0.5.3", Sm10Defaults(classes=(), complete=True), "server_args.py sets no flashinfer MoE runner (0.5.3 read)"),
    Era("0.5.4", Sm10Defaults(classes=((_DSV3, _FP4),), complete=True),
        "server_args.py:879-899 (0.5.4): flashinfer_trtllm for DeepseekV3ForCausalLM on sm100 where quantization == "
        "modelopt_fp4"),
    Era("0.5.5", Sm10Defaults(classes=((_DSV3, _FP4),) + _block(_LLAMA4, _UNREAD), complete=True),
        "server_args.py:899-937 (DeepSeek-V3), :999-1013 (Llama4) at 0.5.5"),
    Era("0.5.6", Sm10Defaults(classes=_DSV3_FP8 + _block(_LLAMA4, _UNREAD) + _NEMOTRON_CUTLASS
                              + _block(_QWEN_056, _FP4), complete=True),
        "server_args.py at 0.5.6: DeepSeek-V3 :939-1057 (none -> fp8; fp8 / modelopt_fp8 / modelopt_fp4), Nemotron-H "
        ":1197-1213 (flashinfer_cutlass), Qwen3-MoE / VL-MoE :1214-1232 and Qwen3-Next :1237-1259 (fp8 / "
        "modelopt_fp4); 0.5.7 alike (Mistral-Large-3 / Pixtral in DeepSeek's block: :1023-1137)"),
    Era("0.5.7", Sm10Defaults(classes=_DSV3_FP8 + _block(_DEEPSEEK_057, _FP4) + _block(_LLAMA4, _UNREAD)
                              + _NEMOTRON_CUTLASS + _block(_QWEN_056, _FP4), complete=True),
        "server_args.py:1023-1137 (0.5.7): Mistral-Large-3 and Pixtral join DeepSeek-V3's block"),
    Era("0.5.8", Sm10Defaults(classes=_DSV3_FP8 + _block(_DEEPSEEK_057, _FP4) + _block(_LLAMA4, _UNREAD)
                              + _NEMOTRON_CUTLASS + _block(_QWEN_056, _FP4_OR_NONE) + _GLM4, complete=True),
        "server_args.py at 0.5.8: Qwen3 blocks :1466-1500 add `or self.quantization is None`; Glm4MoeForCausalLM "
        ":1519-1536 (modelopt_fp4 and flashinfer-python >= 0.6.2)"),
    Era("0.5.9", Sm10Defaults(classes=_DSV3_FP8 + _block(_DEEPSEEK_059, _FP4) + _block(_LLAMA4, _UNREAD)
                              + _NEMOTRON_CUTLASS + _block(_QWEN_059, _FP4_OR_NONE) + _GLM4, complete=True),
        "server_args.py at 0.5.9: DeepSeek block :1197-1310 (Kimi-K2.5, GLM-5 join), Nemotron-H :1529-1546, Qwen3 "
        ":1558-1596 (Qwen3.5 joins), Glm4Moe :1607-1624; 0.5.10rc0 and 0.5.10 alike (Qwen blocks merged)"),
    Era("0.5.11", Sm10Defaults(classes=_DSV3_FILES + _block(_DEEPSEEK_059, _FP4) + _block(_LLAMA4, _UNREAD)
                               + _NEMOTRON_TRTLLM + _block(_QWEN_059, _FP4_OR_NONE) + _GLM4, complete=True),
        "server_args.py at 0.5.11: DeepSeek-V3 :1805-1828 (has_fp8_weights_in_checkpoint), Nemotron-H :2143-2172 "
        "(flashinfer_trtllm on sm100)"),
    Era("0.5.12", Sm10Defaults(classes=_DSV3_FILES + _block(_DEEPSEEK_059 + ("DeepseekV32ForCausalLM",), _FP4)
                               + _block(_LLAMA4, _UNREAD) + _NEMOTRON_TRTLLM + _GLM4
                               + _block(_QWEN_059 + ("InternS2PreviewForConditionalGeneration",), _FP4_OR_NONE),
                               complete=True),
        "server_args.py at 0.5.12: DeepSeek block :1786-1953 (DeepSeek-V3.2 joins), Qwen :2286-2310 (Intern-S2 "
        "joins), Glm4Moe :2357-2376; arg_groups/nemotron_h_hook.py:30-40"),
    Era("0.5.13", Sm10Defaults(classes=_block((_DSV3,) + _DEEPSEEK_059 + ("DeepseekV32ForCausalLM",), _FP4_OR_NONE)
                               + _block(_LLAMA4, _UNREAD) + _NEMOTRON_TRTLLM + _GLM4
                               + _block(_QWEN_059 + ("InternS2PreviewForConditionalGeneration",), _FP4_OR_NONE)
                               + _block(("Gemma4ForConditionalGeneration", "Gemma4ForCausalLM",
                                         "Gemma4UnifiedForConditionalGeneration"), _UNREAD), complete=True),
        "server_args.py at 0.5.13: DeepSeek block :1839-2055 adds `or self.quantization is None`; Gemma-4 :2365-2407 "
        "(ModelConfig's modelopt_fp4: not read); arg_groups/nemotron_h_hook.py:34-56"),
    Era("0.5.14", Sm10Defaults(classes=_DSV3_FP8, complete=False),
        "0.5.14 - 0.5.22 not read: DeepSeek-V3's 0.5.13 pick kept (a GB300 start of 0.5.15.post1 with "
        "--quantization modelopt_fp4 in the corpus)"),
    Era("0.5.23", Sm10Defaults(classes=_block(tuple(sorted(DEEPSEEK_FAMILY)), _ALWAYS_TRTLLM), complete=False),
        "arg_groups/overrides.py _DEEPSEEK_FAMILY_ARCHS, _deepseek_moe_quant_resolution (0.5.23); its other "
        "model_overrides not read"),
))  # fmt: skip
MARLIN_MOE_ERAS: Eras[bool] = Eras((
    Era("", False, "the NVFP4 MoE raises below Blackwell (modelopt_quant.py:1525-1528 at 0.5.12; the same check read "
                   "in 0.5.9, 0.5.10, 0.5.11)"),
    Era("0.5.13", True, "create_moe_runner picks MARLIN at `auto` on SM 8.0 – 9.x (modelopt_quant.py:2183-2188 at "
                        "0.5.13, :3117-3120 at 0.5.23); process_weights_after_loading returns after "
                        "prepare_moe_nvfp4_layer_for_marlin (:1907-1914; :2738-2764 at 0.5.23), before the alias"),
))  # fmt: skip
CUTLASS_ONLY_MAJORS = (11, 12)  # Blackwell beyond SM 10.x: no flashinfer_trtllm default for any class


def states_quant_block(model: ModelSpec) -> bool:
    """Whether the checkpoint's config.json states its quantization (else it came from hf_quant_config.json)."""
    return not model.quant.source.endswith("hf_quant_config.json")


def runner_pick(model: ModelSpec, gpu_name: str | None, version: ResolvedVersion) -> RunnerPick:
    """SGLang's `auto` NVFP4 MoE runner for this model class on this GPU at this release (the module's docstring)."""
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
        return RunnerPick(runner=_C, read=False, why=f"its per-class defaults at this release were not read ({era.source})")
    quants = FORM_QUANTS[states_quant_block(model)]
    picks = {rule.runner(quant) for quant in quants}
    for runner in picks:
        if runner is not None and len(picks) == 1:
            return RunnerPick(runner=runner, read=True)
    form = "config.json's quant_method" if states_quant_block(model) else "no quant_method in config.json"
    return RunnerPick(runner=_C, read=False, why=(
        f"its default turns on the quantization SGLang's server arguments see ({form}, or --quantization: "
        f"{' / '.join(quants)}) or on what the engine checks at start ({era.source})"))  # fmt: skip


"""Whether SGLang turns its prefill (piecewise / breakable) CUDA graphs off before it sizes the automatic fraction:
if so, the reserve holds none of their 8 MiB a captured size (1.5 GiB for MLA) (docs/engines/sglang.md §5).

Every release below runs the switch-off before `_handle_gpu_memory_settings`, whose reserve adds the graphs only
where they stay on (0.5.10.post1 server_args.py:778 then :784, reserve `if not self.disable_piecewise_cuda_graph`
:1305; 0.5.15.post1 `_handle_cuda_graph_config` :2693 then :2709, reserve :3660-3670; 0.5.23 arg_groups/
resolution_hooks.py:44 then :52, reserve memory_hook.py:381).

The multimodal model (each backend with its allowlist, the union kept):
- v0.5.10 … v0.5.13 server_args.py `_handle_piecewise_cuda_graph` (every `model_config.is_multimodal`;
  0.5.10.post1:1109, 0.5.11:1228, 0.5.13:1374);
- v0.5.15.post1 `_disable_tc_piecewise_cudagraph_if_incompatible` (:3301, unless
  `is_multimodal_piecewise_cuda_graph_supported`, configs/model_config.py:1716) and
  `_disable_breakable_cudagraph_if_incompatible` (:3374, every multimodal model: the CUDA default's);
- v0.5.16 … v0.5.22 the piecewise list's classes switched to tc_piecewise (0.5.16 server_args.py:3663-3671), the
  breakable list's kept (0.5.16 :3800-3805, configs/model_config.py:1785; `MULTIMODAL_GRAPH_ERAS`);
- v0.5.23 arg_groups/cuda_graph_hook.py:231 (configs/model_config.py :2489 piecewise, :2501 breakable allowlists).

The launch (only the flags kvtop reads; `LAUNCH_ERAS`):
- v0.5.10 … v0.5.13, first, the model class (`is_piecewise_cuda_graph_disabled_model`, 0.5.10 server_args.py:1086,
  0.5.11:1202, 0.5.12:1309, 0.5.13:1350; the classes by release in `PCG_REFUSED_ERAS`);
- v0.5.10 … v0.5.10.post1 `_handle_piecewise_cuda_graph` (0.5.10.post1:1078-1139): speculative decoding (:1089),
  DP attention (:1092), PP > 1 (:1098), any MoE A2A backend (:1104), LoRA (:1107), hierarchical cache (:1123),
  any PD disaggregation mode (:1129), EPLB (:1135), and `--enable-torch-compile` (0.5.10 :1095; torch_compile.py);
- v0.5.11 … v0.5.13 the same less speculative decoding (0.5.11:1194-1261, 0.5.12:1301-1368, 0.5.13:1342-1410; torch
  compile :1208, :1315, :1356);
- v0.5.15, v0.5.15.post1 (0.5.15's server_args.py differs from 0.5.15.post1's in one line, :4807, and its
  cuda_graph_config.py not at all): the prefill default on CUDA is the breakable backend (model_executor/cuda_graph_config.py
  `default_prefill_backend`, 0.5.15.post1:95), which drops its graphs for an MLA model, DeepSeek-V4 (`is_deepseek_v4`,
  configs/model_config.py:118-122), LoRA, any MoE A2A backend and DP attention (0.5.15.post1 server_args.py:3352,
  :3355-3358, :3365-3372); a PD decode node reserves none (`disaggregation_mode != "decode"`, 0.5.15.post1:3662);
- v0.5.16 (server_args.py `_disable_breakable_cudagraph_if_incompatible` :3763-3815): the same plus DCP > 1 (:3787-3790;
  MLA :3774, DeepSeek-V4 :3777-3780 with a third class, configs/model_config.py:123-128, LoRA :3792, A2A :3794-3797,
  DP attention :3799); a PD decode node `_apply_cuda_graph_disaggregation_roles` :3684-3686;
- v0.5.17 (server_args.py `_disable_breakable_cudagraph_if_incompatible` :4452-4512): LoRA, DP attention and the
  deepep / megamoe / flashinfer A2A backends keep the graphs (so DeepEP's 1 GiB capture term applies:
  deployment_eras.BREAKABLE_DEEPEP_ERAS); off for an MLA model other than DSA (`is_deepseek_dsa`: `_DSA_ARCHS` with an
  indexer, configs/model_config.py:106-121), NemotronH (:136-141), DeepSeek-V4 (:128-133), DCP > 1, any other A2A
  backend, and a PD decode node (`_apply_cuda_graph_disaggregation_roles` :4373-4375);
- v0.5.18 (server_args.py :4666): the MLA and NemotronH rules are gone;
- v0.5.19 … v0.5.23 (arg_groups/cuda_graph_hook.py): PP > 1 turns them off by default (0.5.19 :122, 0.5.23 :150);
  the rest as 0.5.18 (0.5.19 :262, 0.5.20 :267, 0.5.21 :275, 0.5.22 :138, 0.5.23 :170; decode node 0.5.19 :580,
  0.5.23 :568-575; memory_hook.py:381); 0.5.23 keeps DeepSeek-V4's graphs only for a prefill CP kvtop refuses.
- v0.5.20 … v0.5.23: KDA hybrid linear attention too (`uses_kda_attention`, configs/model_config.py:183-205 at 0.5.20:
  Kimi-Linear's `linear_attn_config.kda_layers`, `StateSpec.kda_layers_listed`).
Where tc_piecewise is the prefill backend (every model at v0.5.14, an allowlisted multimodal class at v0.5.16 …
v0.5.21: `runs_tc_piecewise`), its own switch-offs apply instead (`TC_LAUNCH_ERAS`).
Not modelled: two-batch overlap and attention CP are refused flags (flags_unmodelled.py).

The launch's own switch (`PREFILL`, from v0.5.14: 0.5.13 server_args.py has neither): `--cuda-graph-backend-prefill
disabled` or `--disable-prefill-cuda-graph` folds into cuda_graph_config's prefill backend in `_handle_cuda_graph_config`
(0.5.14 server_args.py:2949-2958, called at :2508 before `_handle_gpu_memory_settings` :2524; 0.5.23
arg_groups/cuda_graph_hook.py:60-71), which the reserve then skips (`prefill.backend != Backend.DISABLED`, 0.5.16
server_args.py:4187, 0.5.23 memory_hook.py:381). `tc_piecewise` (0.5.14 … 0.5.21) keeps that reserve under its own
switch-offs (`TC_LAUNCH_ERAS`; a multimodal model under it is refused); the other values (`full`, `breakable`) force a
backend whose reserve and switch-offs kvtop does not model: refused by name (graph_phase_flags.check_phase_flags). Symmetric memory,
CPU offload, context parallel and the other switches read flags kvtop does not model (flags_unmodelled.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.deployment_flags import flag_set, flag_text
from kvtop.domain.engines.base import EngineInputs
from kvtop.domain.engines.sglang.deployment import setup as deployment_setup
from kvtop.domain.engines.sglang.graph_phase_flags import ALL_GRAPHS_OFF, GraphPhase, phase_switch_off
from kvtop.domain.engines.sglang.multimodal import is_multimodal
from kvtop.domain.engines.sglang.span import serving_role
from kvtop.domain.engines.sglang.torch_compile import torch_compile_on
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import AttentionKind, ModelSpec, StateKind
from kvtop.domain.span import ServingRole

_MINIMAX_M3 = frozenset({"MiniMaxM3SparseForCausalLM", "MiniMaxM3SparseForConditionalGeneration"})
_QWEN3_5 = frozenset({"Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration"})
_KIMI_K25, _COHERE2_VISION = "KimiK25ForConditionalGeneration", "Cohere2VisionForConditionalGeneration"
# configs/model_config.py multimodal_{piecewise,breakable}_cuda_graph_supported_model_archs, by release
_PIECEWISE_0_5_16 = _MINIMAX_M3 | {_COHERE2_VISION, _KIMI_K25}  # 0.5.16 … 0.5.18
_PIECEWISE_0_5_19 = _MINIMAX_M3 | {_KIMI_K25}  # 0.5.19 … 0.5.23: Cohere2-Vision moved to the breakable list
_BREAKABLE_0_5_18 = _QWEN3_5 | {"InternS2MobiusForConditionalGeneration", "MuseGlimmerForConditionalGeneration",
                                "KimiK3ForConditionalGeneration", _KIMI_K25}
_BREAKABLE_0_5_19 = _BREAKABLE_0_5_18 | {_COHERE2_VISION, "PaddleOCRVLForConditionalGeneration"}
_BREAKABLE_0_5_20 = _BREAKABLE_0_5_19 | {"Glm5NextForConditionalGeneration"}
# 0.5.22 (the PyPI wheel's model_config.py:2388-2401) adds Qwen4-Exp and both MiniMax-M3 classes (:2399-2400),
# which stay on the piecewise list too (:2376-2380)
_BREAKABLE_0_5_22 = _BREAKABLE_0_5_20 | _MINIMAX_M3 | {"Qwen4ExpForConditionalGeneration"}


@dataclass(frozen=True)
class MultimodalGraphs:
    """A release's multimodal prefill graphs: the classes whose graphs may stay on (`kept`), those of them whose
    backend is tc_piecewise (`tc_piecewise`), and whether tc_piecewise is every model's default (0.5.14)."""

    kept: frozenset[str]
    tc_piecewise: frozenset[str] = frozenset()
    tc_every: bool = False


def _lists(piecewise: frozenset[str], breakable: frozenset[str], *, switch: str) -> MultimodalGraphs:
    """The classes kept (either allowlist) and switched to tc_piecewise: `switch` "piecewise" (0.5.16, 0.5.17: the
    piecewise list), "breakable first" (0.5.18 … 0.5.21: a class on both lists keeps breakable) or "none" (0.5.22 on:
    no tc_piecewise backend)."""
    tc = {"piecewise": piecewise, "breakable first": piecewise - breakable, "none": frozenset()}[switch]
    return MultimodalGraphs(kept=piecewise | breakable, tc_piecewise=frozenset(tc))


# One table by release: which multimodal classes keep their prefill graphs and which of them run tc_piecewise. From
# 0.5.16 a class on the piecewise list leaves the breakable default for tc_piecewise (0.5.16 server_args.py:3663-3671);
# from 0.5.18 not if it is on the breakable list too ("Archs also on the breakable allowlist keep it", 0.5.18
# server_args.py:4558-4569, 0.5.19 arg_groups/cuda_graph_hook.py:136-158, 0.5.21 :144-166). 0.5.15.x has no such
# switch, so its breakable rule drops every multimodal model (0.5.15.post1 server_args.py:3374; its piecewise list,
# model_config.py:1716, Cohere2-Vision, only serves a tc_piecewise the CUDA default is not). Not applied: from 0.5.18
# the switch also skips a launch whose attention backend resolves to trtllm_mla (0.5.18 server_args.py:4568, its
# third condition after `not is_multimodal_breakable_cuda_graph_supported`; 0.5.19 cuda_graph_hook.py:148, 0.5.21
# :156), an MLA backend: the piecewise-only classes then (Cohere2-Vision at 0.5.18, MiniMax-M3 to 0.5.21) are not MLA
# models. Re-read (session 62) for the multimodal classes on SGLang's default trtllm_mla list (default_mla.py):
# Kimi-K2.5 (from 0.5.9) is on the breakable list from 0.5.18, so that condition is never reached for it, and 0.5.16 /
# 0.5.17 switch it to tc_piecewise without one (0.5.16 :3663-3671, 0.5.17 :4352-4360); Pixtral (Mistral-Large-3)
# and Glm5Next are on no piecewise list. `_disable_prefill_cuda_graph_for_deepseek_trtllm_mla` (DeepseekV3ForCausalLM
# on trtllm_mla, 0.5.15 … 0.5.23) runs after the reserve is sized (0.5.15.post1 server_args.py :2709 before :2722,
# 0.5.18 :3677 before :3690; 0.5.23 arg_groups/pipeline.py:218 before :245): no change to the reserve either
# (tests/engines/sglang/test_prefill_graphs_default_trtllm_mla.py).
MULTIMODAL_GRAPH_ERAS: Eras[MultimodalGraphs] = Eras((
    Era("", MultimodalGraphs(frozenset()),
        "server_args.py _handle_piecewise_cuda_graph: every multimodal model off (0.5.10 … 0.5.13)"),
    Era("0.5.14", MultimodalGraphs(frozenset({_COHERE2_VISION}), tc_every=True),
        "configs/model_config.py:1725 piecewise allowlist read by is_multimodal_piecewise_cuda_graph_supported :1795 "
        "(the MiniMax list :1789 unread); model_executor/cuda_graph_config.py:91: default prefill backend "
        "tc_piecewise"),
    Era("0.5.15", MultimodalGraphs(frozenset()), "server_args.py:3374 breakable rule: every multimodal model "
        "(0.5.15.post1); cuda_graph_config.py default_prefill_backend breakable (0.5.15.post1:101), no multimodal "
        "switch in server_args.py _apply_cuda_graph_compatibility (0.5.15:3255-3268)"),
    Era("0.5.16", _lists(_PIECEWISE_0_5_16, _QWEN3_5, switch="piecewise"),
        "configs/model_config.py:1776 (piecewise) and :1785 (breakable) allowlists (0.5.17 :1839, :1848); "
        "server_args.py:3663-3671 (0.5.17 :4352-4360) switches the piecewise list to tc_piecewise"),
    Era("0.5.18", _lists(_PIECEWISE_0_5_16, _BREAKABLE_0_5_18, switch="breakable first"),
        "configs/model_config.py:1908 (piecewise) and :1921 (breakable) allowlists; server_args.py:4562-4569"),
    Era("0.5.19", _lists(_PIECEWISE_0_5_19, _BREAKABLE_0_5_19, switch="breakable first"),
        "configs/model_config.py:1973 (piecewise) and :1985 (breakable) allowlists; "
        "arg_groups/cuda_graph_hook.py:140-149"),
    Era("0.5.20", _lists(_PIECEWISE_0_5_19, _BREAKABLE_0_5_20, switch="breakable first"),
        "configs/model_config.py:2195 (piecewise) and :2207 (breakable) allowlists (0.5.21 :2295, :2307); "
        "arg_groups/cuda_graph_hook.py:140-149 (0.5.21 :148-157)"),
    Era("0.5.22", _lists(_PIECEWISE_0_5_19, _BREAKABLE_0_5_22, switch="none"),
        "configs/model_config.py:2376 (piecewise) and :2388 (breakable) allowlists; arg_groups/cuda_graph_hook.py: "
        "no tc_piecewise backend (0.5.22, 0.5.23)"),
    Era("0.5.23", _lists(_PIECEWISE_0_5_19, _BREAKABLE_0_5_22 | {"MuseSparkForConditionalGeneration"}, switch="none"),
        "configs/model_config.py:2489 (piecewise) and :2501 (breakable) allowlists"),
))  # fmt: skip


# the launch conditions that turn the prefill graphs off, by the words the reserve's reason prints
SPECULATIVE = "speculative decoding"
DP_ATTENTION = "DP attention"
PIPELINE = "PP > 1"
A2A_ANY = "an MoE A2A backend"
A2A_UNVALIDATED = "an A2A backend breakable graphs do not take"
LORA = "LoRA"
HICACHE = "hierarchical cache"
PD_ANY = "PD disaggregation"
PD_DECODE = "a PD decode node"
EPLB = "EPLB"
TORCH_COMPILE = "--enable-torch-compile"  # refused before 0.5.10 (torch_compile.py); turns them off until 0.5.15
MLA = "an MLA model"  # the model, not the launch: breakable graphs drop MLA (0.5.15.post1 … 0.5.16)
MLA_NOT_DSA = "an MLA model other than DSA"  # 0.5.17 only
NEMOTRON_H = "NemotronH"  # 0.5.17 only
DSV4 = "DeepSeek-V4"  # 0.5.15 … 0.5.23 (0.5.15.post1 server_args.py:3355-3358)
DCP = "decode context parallel"
KDA = "KDA hybrid linear attention"  # 0.5.20 … 0.5.23
REFUSED_CLASS = "a model class piecewise graphs refuse"  # 0.5.10 … 0.5.13, `PCG_REFUSED_ERAS`
# `--enable-deterministic-inference` (DETERMINISTIC_FLAG): piecewise graphs off 0.5.10 … 0.5.13 ("13. Deterministic
# inference", 0.5.10.post1 server_args.py:1125-1127, 0.5.13 :1390-1392) and tc_piecewise's 0.5.14 … 0.5.21 (0.5.14
# server_args.py:3038-3040, 0.5.15 :3317-3319, 0.5.17 :4423-4425; 0.5.19 arg_groups/cuda_graph_hook.py:223-225,
# 0.5.21 :239-240); the breakable backend's rules never read it (0.5.15 server_args.py:3350-3375, 0.5.23
# cuda_graph_hook.py), so from 0.5.15 the CUDA default keeps its reserve
DETERMINISTIC = "deterministic inference"
DETERMINISTIC_FLAG = "--enable-deterministic-inference"
_UNTIL_0_5_13 = (REFUSED_CLASS, DP_ATTENTION, TORCH_COMPILE, PIPELINE, A2A_ANY, LORA, HICACHE, PD_ANY, EPLB,
                 DETERMINISTIC)
LAUNCH_ERAS: Eras[tuple[str, ...]] = Eras((
    Era("", (SPECULATIVE, *_UNTIL_0_5_13), "server_args.py _handle_piecewise_cuda_graph (0.5.10.post1:1078-1139)"),
    Era("0.5.11", _UNTIL_0_5_13, "server_args.py _handle_piecewise_cuda_graph: no speculative rule (0.5.11:1194)"),
    Era("0.5.15", (MLA, DSV4, LORA, A2A_ANY, DP_ATTENTION, PD_DECODE),  # 0.5.15 server_args.py = .post1 but :4807
        "server_args.py _disable_breakable_cudagraph_if_incompatible (0.5.15.post1:3352-3372), decode node :3662"),
    Era("0.5.16", (MLA, DSV4, DCP, LORA, A2A_ANY, DP_ATTENTION, PD_DECODE),
        "server_args.py _disable_breakable_cudagraph_if_incompatible (0.5.16:3774-3799, DCP :3787), decode node :3686"),
    Era("0.5.17", (MLA_NOT_DSA, NEMOTRON_H, DSV4, DCP, A2A_UNVALIDATED, PD_DECODE),
        "server_args.py _disable_breakable_cudagraph_if_incompatible (0.5.17:4452-4512), decode node :4373"),
    Era("0.5.18", (DSV4, DCP, A2A_UNVALIDATED, PD_DECODE),
        "server_args.py _disable_breakable_cudagraph_if_incompatible (0.5.18:4666): no MLA or NemotronH rule"),
    Era("0.5.19", (PIPELINE, DSV4, DCP, A2A_UNVALIDATED, PD_DECODE),
        "arg_groups/cuda_graph_hook.py PP > 1 (0.5.19:122, 0.5.23:150), breakable rules (0.5.19:262, 0.5.23:170)"),
    Era("0.5.20", (PIPELINE, KDA, DSV4, DCP, A2A_UNVALIDATED, PD_DECODE),
        "arg_groups/cuda_graph_hook.py breakable rules open with KDA (0.5.20:281-286, 0.5.21:290, 0.5.22:153, "
        "0.5.23:185)"),
))  # fmt: skip
# The torch.compile piecewise backend (`tc_piecewise`) has its own switch-offs
# (`_disable_tc_piecewise_cudagraph_if_incompatible`), run where it is the prefill backend: every model at 0.5.14 (its
# CUDA default, model_executor/cuda_graph_config.py:91), a multimodal class on the piecewise allowlist at 0.5.16 …
# 0.5.21 and not on the breakable one from 0.5.18 (`MULTIMODAL_GRAPH_ERAS`), nowhere else (0.5.15.x: the breakable
# default and no switch; 0.5.22: no such backend).
# Its multimodal rule is prefill_graphs_off_for_multimodal's (the class is on the allowlist), the rest by the words
# above (deterministic inference `DETERMINISTIC`); hardware, GGUF, DLLM, symmetric memory, CPU offload, CP and debug read flags kvtop
# does not model (flags_unmodelled.py).
_TC_0_5_14 = (REFUSED_CLASS, DP_ATTENTION, TORCH_COMPILE, PIPELINE, A2A_ANY, LORA, HICACHE, PD_ANY, EPLB,
              DETERMINISTIC)
TC_LAUNCH_ERAS: Eras[tuple[str, ...]] = Eras((
    Era("", (), "before 0.5.14: no tc_piecewise backend (LAUNCH_ERAS)"),
    Era("0.5.14", _TC_0_5_14, "server_args.py _disable_tc_piecewise_cudagraph_if_incompatible (0.5.14:2997-3056, "
        "0.5.15:3271-3335)"),
    Era("0.5.16", (*_TC_0_5_14, DCP), "the same + dcp_size > 1 (0.5.16 server_args.py:3688-3757, 0.5.17 :4377, "
        "0.5.18 :4591; 0.5.19 arg_groups/cuda_graph_hook.py:169-246, 0.5.21 :177-259)"),
))  # fmt: skip
# configs/model_config.py is_deepseek_dsa (0.5.17:106-121): these classes with an indexer (index_topk)
_DSA_ARCHS = frozenset({
    "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "DeepseekV3ForCausalLMNextN", "MistralLarge3ForCausalLM",
    "PixtralForConditionalGeneration", "GlmMoeDsaForCausalLM", "GlmMoeDsaForCausalLMNextN",
    "LongcatFlashForCausalLM", "LongcatFlashForCausalLMNextN",
})  # fmt: skip
_NEMOTRON_H = frozenset({"NemotronHForCausalLM", "NemotronHPuzzleForCausalLM", "NemotronHForCausalLMMTP"})  # :136
# configs/model_config.py is_deepseek_v4 (0.5.15.post1:118-122; DSpark from 0.5.16:123-128, 0.5.17:128-133)
_DSV4 = frozenset({"DeepseekV4ForCausalLM", "DeepseekV4ForCausalLMNextN", "DeepseekV4ForCausalLMDSpark"})
# `_handle_piecewise_cuda_graph`'s first rule, `is_piecewise_cuda_graph_disabled_model`: the classes of
# configs/model_config.py `piecewise_cuda_graph_disabled_model_archs`, and (to 0.5.12) any DSA model (`is_deepseek_nsa`,
# 0.5.10:55-79: `_DSA_ARCHS` less the Longcat and NextN GLM classes, taken as `_DSA_ARCHS`)
_REFUSED_ALWAYS = frozenset({"Qwen3NextForCausalLM", "BailingMoeV2_5ForCausalLM", "LLaDAModelLM"})
_DSV4_0_5_12 = frozenset({"DeepseekV4ForCausalLM", "DeepseekV4ForCausalLMNextN"})
PCG_REFUSED_ERAS: Eras[tuple[frozenset[str], bool]] = Eras((  # (classes, every DSA model too)
    Era("", (_REFUSED_ALWAYS | {"DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM"}, True),
        "configs/model_config.py:1352-1358 and is_deepseek_nsa :212-215 (0.5.10, 0.5.10.post1; 0.5.11:1446, :259)"),
    Era("0.5.12", (_REFUSED_ALWAYS | _DSV4_0_5_12 | {"DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM"}, True),
        "configs/model_config.py:1558-1566 (+ DeepSeek-V4) and is_deepseek_nsa :330-333"),
    Era("0.5.13", (_REFUSED_ALWAYS | _DSV4_0_5_12, False),
        "configs/model_config.py:1579-1585 (no DeepSeek-V3.2 / GLM-5 DSA), no is_deepseek_nsa :330-332"),
))  # fmt: skip
# configs/model_config.py uses_kda_attention (0.5.20:183-205, 0.5.23:230): `linear_attn_config.kda_layers` listed in the
# config or its text_config — the family's description says so (StateSpec.kda_layers_listed, set by the kimi_linear
# family's state rule: Kimi-Linear, Kimi-K3); Ling-3's KDA (BailingMoeV3) lists none, and the other branch (layer_types
# "linear_attention" with linear_num_heads / linear_head_dim) matches no family kvtop describes
_BREAKABLE_A2A = frozenset({"deepep", "megamoe", "flashinfer"})  # cuda_graph_hook.py:225 (0.5.23)


# --cuda-graph-backend-prefill / --disable-prefill-cuda-graph (graph_phase_flags.py; from v0.5.14: flag_releases.READ)
# `--cuda-graph-backend-prefill tc_piecewise`: a prefill choice from 0.5.14 to 0.5.21 (model_executor/
# cuda_graph_config.py ALLOWED_BACKENDS_PER_PHASE, 0.5.14:58, 0.5.21:61-66; 0.5.22's Backend.ALL has it no more, :48),
# its reserve the breakable backend's (`prefill.backend != Backend.DISABLED`, 0.5.16 server_args.py:4187), its
# switch-offs TC_LAUNCH_ERAS (runs_tc_piecewise)
TC_PIECEWISE = "tc_piecewise"
PREFILL = GraphPhase("prefill", Eras((
    Era("", frozenset(), "before 0.5.14: no --cuda-graph-backend-prefill (flag_releases.READ)"),
    Era("0.5.14", frozenset({TC_PIECEWISE}), "model_executor/cuda_graph_config.py:58 (0.5.14), :61-66 (0.5.21)"),
    Era("0.5.22", frozenset(), "model_executor/cuda_graph_config.py:48 (0.5.22): Backend.ALL has no tc_piecewise"),
)))  # fmt: skip


# `--disable-cuda-graph` disables both phases' backends first thing in `_parse_cuda_graph_config` from v0.5.14 (0.5.14
# server_args.py:2942-2944, 0.5.23 arg_groups/cuda_graph_hook.py:55-57), so the reserve holds no prefill graphs; to
# v0.5.13 `_handle_piecewise_cuda_graph` never reads it (0.5.12 server_args.py:1301-1368)
ALL_OFF_ERAS: Eras[bool] = Eras((
    Era("", False, "0.5.12 server_args.py:1301-1368: the prefill graphs' switch-offs do not read it"),
    Era("0.5.14", True, "0.5.14 server_args.py:2942-2944: both phases' backends disabled"),
))  # fmt: skip


def _launch_switch_off(inputs: EngineInputs) -> str | None:
    """The launch's own prefill-graph switch-off, as typed, or None (`--disable-cuda-graph` from v0.5.14)."""
    typed = phase_switch_off(inputs.settings, PREFILL)
    return None if typed == ALL_GRAPHS_OFF and not ALL_OFF_ERAS.at(inputs.version) else typed


def prefill_graphs_off_for_multimodal(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> bool:
    """Whether SGLang turns the prefill graphs off because the model is multimodal (`is_multimodal`) and its class is
    on no allowlist of the release: the automatic fraction then reserves nothing for them."""
    kept = MULTIMODAL_GRAPH_ERAS.at(version).kept
    return is_multimodal(model, settings, version) and model.architecture not in kept


def _conditions_met(inputs: EngineInputs) -> dict[str, bool]:
    """Which conditions of `LAUNCH_ERAS` the launch meets (the launch read once, every condition answered)."""
    s, lay, m = inputs.settings, inputs.layout, inputs.model
    setup = deployment_setup(s)
    role = serving_role(s)  # --disaggregation-mode, read once (span.py)
    dsa = m.architecture in _DSA_ARCHS and m.attention_kind is AttentionKind.DSA
    refused, refused_dsa = PCG_REFUSED_ERAS.at(inputs.version)
    return {
        REFUSED_CLASS: m.architecture in refused or (refused_dsa and dsa),
        SPECULATIVE: setup.spec_method is not None,
        DP_ATTENTION: lay.dp_attention,
        PIPELINE: lay.pp > 1,
        A2A_ANY: setup.a2a_backend is not None,
        A2A_UNVALIDATED: setup.a2a_backend is not None and setup.a2a_backend not in _BREAKABLE_A2A,
        LORA: setup.lora,
        HICACHE: setup.host_kv is not None,
        PD_ANY: role is not ServingRole.WHOLE,
        PD_DECODE: role is ServingRole.DECODE,
        EPLB: flag_set(s, "enable-eplb"),
        DETERMINISTIC: flag_set(s, DETERMINISTIC_FLAG.removeprefix("--")),
        TORCH_COMPILE: torch_compile_on(inputs),
        MLA: m.mla is not None,
        MLA_NOT_DSA: m.mla is not None and not dsa,
        NEMOTRON_H: m.architecture in _NEMOTRON_H,
        DSV4: m.architecture in _DSV4,
        DCP: s.dcp > 1,
        KDA: m.state is not None and m.state.kind is StateKind.KIMI_DELTA and m.state.kda_layers_listed,
    }


def prefill_graphs_off_reason(inputs: EngineInputs) -> str | None:
    """Why SGLang turns the prefill graphs off before sizing the reserve ('a multimodal model', 'DP attention', …),
    None where they stay on (for a release whose prefill graphs are on by default)."""
    if (typed := _launch_switch_off(inputs)) is not None:
        return typed
    if prefill_graphs_off_for_multimodal(inputs.model, inputs.settings, inputs.version):
        return "a multimodal model"
    if named_tc_piecewise(inputs.settings) and is_multimodal(inputs.model, inputs.settings, inputs.version):
        raise UnsupportedModelError("a multimodal model under a named tc_piecewise prefill backend: its allowlist "
                                    "(`is_multimodal_piecewise_cuda_graph_supported`) is not followed for a named "
                                    "backend; plan without it", field=PREFILL.backend_flag)  # fmt: skip
    met = _conditions_met(inputs)
    rules = TC_LAUNCH_ERAS if runs_tc_piecewise(inputs) else LAUNCH_ERAS
    return next((c for c in rules.at(inputs.version) if met[c]), None)


def runs_tc_piecewise(inputs: EngineInputs) -> bool:
    """Whether the release's prefill backend for this model is torch.compile's piecewise one (`MULTIMODAL_GRAPH_ERAS`),
    whose switch-offs are `TC_LAUNCH_ERAS`, not the breakable backend's."""
    if named_tc_piecewise(inputs.settings):
        return True
    graphs = MULTIMODAL_GRAPH_ERAS.at(inputs.version)
    return graphs.tc_every or (inputs.model.architecture in graphs.tc_piecewise
                               and is_multimodal(inputs.model, inputs.settings, inputs.version))


def named_tc_piecewise(settings: LaunchSettings) -> bool:
    """Whether the launch names `--cuda-graph-backend-prefill tc_piecewise` (check_phase_flags takes it 0.5.14 …
    0.5.21 only)."""
    return flag_text(settings, PREFILL.backend_flag[2:]) == TC_PIECEWISE

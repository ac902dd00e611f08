"""Whether SGLang keeps its prefill (piecewise) CUDA graphs for a multimodal model: if not, the automatic fraction
reserves nothing for them (docs/engines/sglang.md §5).

SGLang turns the prefill graphs off for a multimodal model before it sizes the automatic fraction, and its reserve
adds the graphs' 8 MiB a captured size (1.5 GiB for MLA) only where they stay on:
- v0.5.10 … v0.5.13 server_args.py `_handle_piecewise_cuda_graph` ("Multimodal / VLM models": every
  `model_config.is_multimodal`; 0.5.10.post1:1109, 0.5.11, 0.5.13:1374), called before `_handle_gpu_memory_settings`
  (0.5.10.post1:778, 784), whose reserve reads `if not self.disable_piecewise_cuda_graph` (0.5.10.post1:1305);
- v0.5.15.post1 server_args.py `_disable_tc_piecewise_cudagraph_if_incompatible` ("multimodal model", :3301, unless
  `is_multimodal_piecewise_cuda_graph_supported`, configs/model_config.py:1780) and
  `_disable_breakable_cudagraph_if_incompatible` (:3374, every multimodal model), from `_handle_cuda_graph_config`
  (:2693) before `_handle_gpu_memory_settings` (:2709), whose reserve reads the prefill backend (:3660-3670);
- v0.5.23 arg_groups/cuda_graph_hook.py:231 (the same rules, each backend with its allowlist: configs/model_config.py
  :2489 piecewise, :2501 breakable): `handle_cuda_graph_config` runs before `handle_gpu_memory_settings`
  (arg_groups/resolution_hooks.py:44, :52), whose reserve reads the prefill backend (memory_hook.py:386).
An allowlisted class may keep the graphs under one backend: kvtop keeps their reserve for it (the union of the lists).
0.5.14 and 0.5.16 … 0.5.22 were not read for the allowlists: the earlier release's list is taken.
"""

from __future__ import annotations

from kvtop.domain.engines.sglang.multimodal import is_multimodal
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec

_MINIMAX_M3 = frozenset({"MiniMaxM3SparseForCausalLM", "MiniMaxM3SparseForConditionalGeneration"})
# the multimodal classes whose prefill graphs may stay on (a backend's allowlist, the union over backends)
PCG_KEPT_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "server_args.py _handle_piecewise_cuda_graph: every multimodal model off (0.5.10 … 0.5.13)"),
    Era("0.5.15.post1", _MINIMAX_M3, "configs/model_config.py:1780 multimodal_piecewise_cuda_graph_supported_archs"),
    Era("0.5.23", _MINIMAX_M3 | {
        "KimiK25ForConditionalGeneration", "Cohere2VisionForConditionalGeneration", "Glm5NextForConditionalGeneration",
        "InternS2MobiusForConditionalGeneration", "PaddleOCRVLForConditionalGeneration",
        "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration", "Qwen4ExpForConditionalGeneration",
        "MuseGlimmerForConditionalGeneration", "MuseSparkForConditionalGeneration", "KimiK3ForConditionalGeneration",
    }, "configs/model_config.py:2489 (piecewise) and :2501 (breakable) allowlists"),
))  # fmt: skip


def prefill_graphs_off_for_multimodal(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> bool:
    """Whether SGLang turns the prefill graphs off because the model is multimodal (`is_multimodal`) and its class is
    on no allowlist of the release: the automatic fraction then reserves nothing for them."""
    return is_multimodal(model, settings, version) and model.architecture not in PCG_KEPT_ERAS.at(version)

"""The MXFP4 MoE's Marlin workspace that vLLM's profile keeps through the sampler, from v0.17.0 (the V1 runner's
sampler count, `sampler_peak.py`).

From v0.17.0 the MXFP4 method builds its Marlin experts as a modular kernel, `mk.FusedMoEKernel(prepare_finalize,
MarlinExperts(...))` (quantization/mxfp4.py:443-452 at v0.17.0 and v0.17.1, :469-478 at v0.18.0; the oracle's
fused_moe/oracle/mxfp4.py:854 at v0.19.0), whose `_allocate_buffers` takes workspace13 (with the output, one buffer
of the larger when the batch is one chunk) and workspace2 from `current_workspace_manager().get_simultaneous`
(modular_kernel.py:1140-1160 at v0.17.1): the manager grows one tensor and keeps it, so the buffers stay allocated
from the forward through `_dummy_sampler_run`, as the unquantized Triton experts' do. `MarlinExperts.workspace_shapes`
(fused_moe/fused_marlin_moe.py:664-694 at v0.17.1, :692-693 at v0.19.0, :711-712 at v0.20.0; experts/marlin_moe.py:691-717
at v0.33.0) gives (M × top-k, max(N, K)) and M × top-k × max(2N, K), N the rank's expert width
(`marlin_moe_intermediate_size`) rounded up to 128 and K the hidden size rounded up to 256 (mxfp4.py:295-310 at
v0.17.1; the runner pads the hidden states to it, runner/default_moe_runner.py:413-420): `dp_marlin.
marlin_workspace_bytes`, the one count of them. Up to v0.16.0 the method called `fused_marlin_moe` itself
(quantization/mxfp4.py:904 at v0.16.0), whose caches are `torch.empty` per call (fused_marlin_moe.py:91-98),
freed when the layer returns: nothing kept.

RTX PRO 6000 (SM 12.0, Marlin whatever the install: mxfp4_sm12.py) with gpt-oss-120b at v0.17.1, 8,192 tokens:
8,192 × 4 × 3,072 × 2 + 8,192 × 4 × 5,888 × 2 B = 0.55 GiB, of the 0.63 GiB its plan left above the 1.71 GiB of
KV the start printed.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.dp_marlin import marlin_workspace_bytes
from kvtop.domain.engines.vllm.mxfp4_backend import MARLIN, mxfp4_backend
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import MlpKind, ModelSpec

MARLIN_KEPT_ERAS: Eras[bool] = Eras((
    Era("", False, "up to v0.16.0 Mxfp4MoEMethod.apply calls fused_marlin_moe, whose caches die with the layer "
                   "(quantization/mxfp4.py:904, fused_marlin_moe.py:91-98 at v0.16.0)"),
    Era("0.17.0", True, "MarlinExperts in the modular kernel over the WorkspaceManager (quantization/mxfp4.py:443-452 "
                        "at v0.17.0/v0.17.1; oracle/mxfp4.py:854 at v0.19.0)"),
))  # fmt: skip


def marlin_kept_bytes(
    model: ModelSpec,
    layout: ParallelLayout,
    version: ResolvedVersion,
    gpu_name: str | None,
    settings: LaunchSettings | None,
    rows: int,
) -> int:
    """The Marlin MXFP4 experts' workspace the profile keeps on one rank for `rows` tokens (one chunk's at most); 0
    before v0.17.0, for another checkpoint or backend, and where the install may run Triton instead (`other`)."""
    if not MARLIN_KEPT_ERAS.at(version) or model.moe is None or MlpKind.MOE not in model.layer_mlp:
        return 0
    if model.quant.method != "mxfp4":
        return 0
    found = mxfp4_backend(settings, gpu_name, version)
    if found is None or found.name != MARLIN or found.other is not None:
        return 0
    return marlin_workspace_bytes(model, layout, rows)

"""vLLM's MXFP4 MoE backend on SM 11.x / 12.x (RTX PRO 6000 Blackwell, RTX 5090), release by release
(docs/engines/vllm.md §20.1).

- v0.10.1 … v0.11.2 (`HOPPER_CHECKS`): vLLM sets apart capability 9.0 and 10.0 only, so SM 12 takes Hopper's checks.
  v0.10.1's `_should_use_marlin` (quantization/mxfp4.py:123-135): the variable, then `not is_device_capability(100)`
  → Marlin below 9.0, without triton_kernels, or on torch < 2.8.0; v0.10.2's `get_mxfp4_backend` (mxfp4.py:89-98,
  v0.11.0 :94-102, v0.11.2 :134-145): `capability[0] < 9 or not has_triton_kernels() or torch < 2.8.0` → Marlin,
  else Triton. SM 12 so runs Triton where the install adds the optional triton_kernels package, Marlin otherwise:
  mxfp4_backend.py's package rule (Marlin assumed, Triton the other). Triton's swizzled copies there take
  triton_kernels' Blackwell layouts (`make_default_matmul_mxfp4_w_scale_layout`: `cuda_capability_geq(10)` →
  BlackwellMXScaleLayout, rows to 128, blocks to 8; read in v0.12.0's vendored copy), not the Hopper layout kvtop
  counts: a Triton start on SM 12 is not modelled, and the assumed Marlin's error counts Triton's copies as Hopper's
  (gpt-oss-120b: 107 against 103 MB a layer).
- v0.12.0 … v0.20.x (`MARLIN_ONLY`): `get_mxfp4_backend` (mxfp4.py:107-172 at v0.12.0, :108-172 at v0.17.1) takes
  FlashInfer on 9.0 / family 100 only, and Triton only where `(9, 0) <= capability < (11, 0)` ("SM120 needs this fix:
  triton-lang/triton#8498", v0.12.0 mxfp4.py:158-159, LoRA's :96-97); v0.19.0's oracle keeps the bound for LoRA
  (fused_moe/oracle/mxfp4.py:204-207) and excludes Triton elsewhere by `_supports_current_device`
  (gpt_oss_triton_kernels_moe.py:555-564), FlashInfer's CUTLASS by its MXFP4-BF16 scheme on 9.0 only
  (flashinfer_cutlass_moe.py:143-177): SM 12 runs Marlin ('Using Marlin backend'). Marlin's `create_weights` (:295-312
  at v0.17.1) pads the expert width per partition to 128 and the hidden size to 256 (weights_built.MARLIN_PAD):
  gpt-oss-120b at TP 1, 128 experts × 3 × (2,944 × 3,072 − 2,880 × 2,880) × 17/32 B a layer, 36 layers, 5.13 GiB
  over the checkpoint's experts; the RTX PRO 6000 v0.17.1 start logged 65.97 GiB of weights.
- from v0.21.0 (`NOT_READ`): the oracle's priority list (fused_moe/oracle/mxfp4.py) is not read for SM 12.x (0.33.0
  adds a family-120 path): not modelled.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion

HOPPER_CHECKS, MARLIN_ONLY, NOT_READ = "hopper_checks", "marlin_only", "not_read"
SM12_ERAS: Eras[str] = Eras((
    Era("", HOPPER_CHECKS, "v0.10.1 mxfp4.py:123-135 _should_use_marlin, v0.10.2 :89-98 / v0.11.2 :134-145 "
                           "get_mxfp4_backend: no capability bound above 9.0, so Hopper's triton_kernels / torch checks"),
    Era("0.12.0", MARLIN_ONLY, "get_mxfp4_backend: Triton only on 9.0 <= capability < 11.0 (v0.12.0 mxfp4.py:153-165; "
                               "v0.19.0 gpt_oss_triton_kernels_moe.py:555-564 _supports_current_device)"),
    Era("0.21.0", NOT_READ, "fused_moe/oracle/mxfp4.py's priority list on SM 12.x not read"),
))  # fmt: skip


def is_sm12(capability: tuple[int, int] | None) -> bool:
    """SM 11.x / 12.x (the Blackwell parts outside family 100)."""
    return capability is not None and capability[0] in (11, 12)


def sm12_rule(capability: tuple[int, int] | None, version: ResolvedVersion) -> str | None:
    """Which rule picks vLLM's MXFP4 backend on this SM 11.x / 12.x GPU at this release (HOPPER_CHECKS, MARLIN_ONLY,
    NOT_READ); None on another capability."""
    return SM12_ERAS.era(version).value if is_sm12(capability) else None


def sm12_marlin(capability: tuple[int, int] | None, version: ResolvedVersion) -> str | None:
    """Why vLLM runs Marlin's MXFP4 experts on this SM 11.x / 12.x GPU whatever the install holds (v0.12.0 …
    v0.20.x); None where the rule does not apply (another capability, Hopper's checks, or a release not read)."""
    era = SM12_ERAS.era(version)
    return era.source if is_sm12(capability) and era.value == MARLIN_ONLY else None

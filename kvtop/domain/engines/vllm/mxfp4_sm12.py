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
- v0.21.0 … v0.31.x (`MARLIN_ONLY`, the wheels read): `select_mxfp4_moe_backend` walks
  `_get_priority_backends_for_gpt_oss` (fused_moe/oracle/mxfp4.py:231-250 at v0.21.0: FlashInfer TRTLLM, AITER,
  Triton, FlashInfer CUTLASS, Marlin; from v0.22.0 BF16 variants only where no activation is asked,
  `_filter_by_activation` :386-401) and takes the first whose kernel class `is_supported_config`: TRTLLM on family 100
  only (experts/trtllm_mxfp4_moe.py:91), Triton on 9.0 <= capability < 11.0 (experts/gpt_oss_triton_kernels_moe.py:535
  at v0.21.0, :49 at v0.22.0), FlashInfer CUTLASS's `(kMxfp4Static, None)` on 9.0 only (experts/flashinfer_cutlass_moe.py
  :164-167 at v0.21.0, :168-171 at v0.28.0); Marlin on any CUDA capability >= 7.5 (experts/marlin_moe.py:585): SM 11.x
  and 12.x run Marlin, padded by `mxfp4_round_up_hidden_size_and_intermediate_size` (oracle/mxfp4.py:570-574 at
  v0.21.0, :650-654 at v0.28.0): the width to 128, the hidden size to 256, as before.
- from v0.32.0 (`MARLIN_FIRST`): Triton's gate widens to `(9, 0) <= capability < (13, 0)`
  (gpt_oss_triton_kernels_moe.py:53), but on family 120 the list moves Triton after BATCHED_MARLIN ("MARLIN prefills
  ~10% faster … Keep TRITON as an opt-in", oracle/mxfp4.py:413-420 at v0.32.0, :426-433 at v0.33.0): SM 12.x runs
  Marlin still. SM 11.x (Jetson Thor) is not moved at v0.32.0 … v0.33.x, so Triton's Blackwell layouts run there
  (`SM11_TRITON_ERAS`: not modelled, said so); v0.34.0 moves family 110 too (oracle/mxfp4.py:446-457): Marlin.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion

HOPPER_CHECKS, MARLIN_ONLY, MARLIN_FIRST = "hopper_checks", "marlin_only", "marlin_first"
TRITON_FIRST = "triton_first"  # SM 11.x at v0.32.0 … v0.33.x: Triton's Blackwell layouts, not modelled
SM12_ERAS: Eras[str] = Eras((
    Era("", HOPPER_CHECKS, "v0.10.1 mxfp4.py:123-135 _should_use_marlin, v0.10.2 :89-98 / v0.11.2 :134-145 "
                           "get_mxfp4_backend: no capability bound above 9.0, so Hopper's triton_kernels / torch checks"),
    Era("0.12.0", MARLIN_ONLY, "get_mxfp4_backend: Triton only on 9.0 <= capability < 11.0 (v0.12.0 mxfp4.py:153-165; "
                               "v0.19.0 gpt_oss_triton_kernels_moe.py:555-564 _supports_current_device)"),
    Era("0.21.0", MARLIN_ONLY, "fused_moe/oracle/mxfp4.py:231-250 (v0.21.0) gpt-oss priority list: FlashInfer TRTLLM on "
                               "family 100 only (trtllm_mxfp4_moe.py:91), Triton on 9.0 <= capability < 11.0 "
                               "(gpt_oss_triton_kernels_moe.py:535), FlashInfer CUTLASS's BF16 scheme on 9.0 only "
                               "(flashinfer_cutlass_moe.py:164-167), then Marlin (the same at v0.22.0 … v0.31.0)"),
    Era("0.32.0", MARLIN_FIRST, "fused_moe/oracle/mxfp4.py:413-420 (v0.32.0; :426-433 at v0.33.0): on family 120 "
                                "Triton is moved after BATCHED_MARLIN (an opt-in), so Marlin comes first"),
))  # fmt: skip
# SM 11.x only: Triton ahead of Marlin where its gate reaches 11.x and the family-120 reorder does not
SM11_TRITON_ERAS: Eras[bool] = Eras((
    Era("", False, "Triton's gate stops below 11.0 (gpt_oss_triton_kernels_moe.py:535 at v0.21.0)"),
    Era("0.32.0", True, "gpt_oss_triton_kernels_moe.py:53 (v0.32.0): Triton on 9.0 <= capability < 13.0, and "
                        "oracle/mxfp4.py:413 moves it after Marlin on family 120 only"),
    Era("0.34.0", False, "oracle/mxfp4.py:446-457 (v0.34.0): family 110 or 120 moves Triton after Marlin"),
))  # fmt: skip


def is_sm12(capability: tuple[int, int] | None) -> bool:
    """SM 11.x / 12.x (the Blackwell parts outside family 100)."""
    return capability is not None and capability[0] in (11, 12)


def sm12_rule(capability: tuple[int, int] | None, version: ResolvedVersion) -> str | None:
    """Which rule picks vLLM's MXFP4 backend on this SM 11.x / 12.x GPU at this release (HOPPER_CHECKS, MARLIN_ONLY,
    MARLIN_FIRST, or TRITON_FIRST on SM 11.x at v0.32.0 … v0.33.x); None on another capability."""
    if not is_sm12(capability):
        return None
    if capability is not None and capability[0] == 11 and SM11_TRITON_ERAS.at(version):
        return TRITON_FIRST
    return SM12_ERAS.at(version)


def sm12_triton_source(version: ResolvedVersion) -> str:
    """Where SM 11.x takes Triton first at this release (SM11_TRITON_ERAS' source)."""
    return SM11_TRITON_ERAS.era(version).source


def sm12_marlin(capability: tuple[int, int] | None, version: ResolvedVersion) -> str | None:
    """Why vLLM runs Marlin's MXFP4 experts on this SM 11.x / 12.x GPU whatever the install holds (from v0.12.0);
    None where the rule does not apply (another capability, Hopper's checks, Triton first on SM 11.x)."""
    if sm12_rule(capability, version) not in (MARLIN_ONLY, MARLIN_FIRST):
        return None
    return SM12_ERAS.era(version).source

"""vLLM's MXFP4 MoE backend on SM 11.x / 12.x (RTX PRO 6000 Blackwell, RTX 5090): Marlin, the only one it has there
(docs/engines/vllm.md §20.1).

`get_mxfp4_backend` (quantization/mxfp4.py:108-172 at v0.17.1; the same checks at v0.12.0 :97, v0.13.0 :96-158,
v0.17.0, v0.18.0 :98-163; `select_mxfp4_moe_backend` in fused_moe/oracle/mxfp4.py:207-223 at v0.19.0 and :255 at
v0.20.0) takes FlashInfer's paths on capability 9.0 or family 100 only, and Triton only where
`(9, 0) <= capability < (11, 0)` ("SM120 needs this fix: triton-lang/triton#8498"): on SM 12.0 it falls through to
`Mxfp4Backend.MARLIN` ('Using Marlin backend'), with LoRA too (`get_mxfp4_backend_with_lora`, :84-105). Marlin's
`create_weights` (:295-312 at v0.17.1) pads the expert width per partition to 128 and the hidden size to 256
(weights_built.MARLIN_PAD). gpt-oss-120b at TP 1: 128 experts × 3 × (2,944 × 3,072 − 2,880 × 2,880) × 17/32 B a
layer, 36 layers, 5.13 GiB over the checkpoint's experts: the RTX PRO 6000 v0.17.1 start's 'Your GPU does not have
native support for FP4 computation … Marlin' logged 65.97 GiB of weights, as Marlin's gpt-oss-120b on an H100
(vllm#23278). v0.10.2 … v0.11.2 bound Triton the same way (mxfp4_backend.py). From v0.21.0 the oracle's priority list
(fused_moe/oracle/mxfp4.py) is not read for SM 12.x (0.33.0 adds a family-120 path): not modelled there.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion

SM12_MARLIN_ERAS: Eras[bool] = Eras((
    Era("", False, "v0.10.1's _should_use_marlin on SM 12.x not read"),
    Era("0.10.2", True, "get_mxfp4_backend: Triton only on 9.0 <= capability < 11.0, FlashInfer on 9.0 / family 100 "
                        "(quantization/mxfp4.py:108-172 at v0.17.1; fused_moe/oracle/mxfp4.py:207-223 at v0.19.0)"),
    Era("0.21.0", False, "fused_moe/oracle/mxfp4.py's priority list on SM 12.x not read"),
))  # fmt: skip


def sm12_marlin(capability: tuple[int, int] | None, version: ResolvedVersion) -> str | None:
    """Why vLLM runs Marlin's MXFP4 experts on this SM 11.x / 12.x GPU at this release; None where the rule does not
    apply (another capability, or a release not read)."""
    if capability is None or capability[0] not in (11, 12):
        return None
    era = SM12_MARLIN_ERAS.era(version)
    return era.source if era.value else None

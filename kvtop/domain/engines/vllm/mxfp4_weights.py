"""The weights of vLLM's MXFP4 experts on Hopper under the backend the launch runs, and under the one it may run
instead (mxfp4_backend.py; docs/engines/vllm.md §20.1).

The book's row pads the experts as Hopper's Triton backend does (weights_built.py) and the loader's Triton copies are
held beside it (weights_held.py). Marlin builds another layout (`create_weights`: the width per partition to 128
and the hidden size to 256, 4-bit weights and their block-32 scales) and repacks in place, so holds no copy.
- A launch that states Marlin (VLLM_MXFP4_USE_MARLIN=1), a log that printed it, or a release whose wheel runs it
  (torch below 2.8.0, or no triton_kernels: mxfp4_backend.py): Marlin's padding less Triton's is added beside the
  book, and the Triton copies are not (weights_held.py reads the backend).
- A plan whose backend is assumed (an optional package decides it: v0.10.2 … v0.11.2 assume the wheel's Marlin): the
  other backend's weights less the assumed one's is the weights term's error beside the fitted one (independent:
  root of squares). gpt-oss-120b at TP 1 on an H100: Marlin pads each of 128 experts from 2,880 × 2,880 to
  2,944 × 3,072 on gate, up and down, 128 × 3 × (9,043,968 − 8,294,400) × 17/32 B = 152,911,872 B a layer, 36 layers
  5,504,827,392 B; Triton pads nothing (2,880 = 45 × 64) and holds 3,795,517,440 B of copies and float32 biases and
  48 MiB of the allocator's rounding: Marlin holds 1.55 GiB more (the Kaggle v0.11.2 log printed Marlin's 65.97 GiB,
  llm-d's v0.11.0 start Triton's 64.38).
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.vllm.mxfp4_backend import MARLIN, Mxfp4Backend, mxfp4_backend
from kvtop.domain.engines.vllm.weights_built import mxfp4_experts, padding_bytes
from kvtop.domain.engines.vllm.weights_held import triton_built, triton_held
from kvtop.domain.wording import gib


def marlin_over_triton(inputs: CalibrationInputs) -> int | None:
    """Marlin's weights less Triton's on the largest rank (their padding, Triton's copies); None where the launch has
    no MXFP4 experts vLLM builds for both (only Hopper does)."""
    model, triton = inputs.model, triton_built(inputs)
    if model is None or triton is None:
        return None
    marlin = mxfp4_experts(model, inputs.layout, inputs.gpu_name, inputs.version, backend=MARLIN)
    layers, stages = range(model.num_layers), max(inputs.layout.pp, 1)
    return (padding_bytes(model, layers, marlin) - padding_bytes(model, layers, triton)) // stages - triton_held(inputs)


def backend_weights(inputs: CalibrationInputs) -> tuple[int, int, str] | None:
    """(bytes beside the book, error bytes beside the fitted one, why) the launch's MXFP4 backend adds to the weights
    term; None where it adds nothing (no MXFP4 experts on Hopper, or Triton as the release's)."""
    backend = mxfp4_backend(inputs.settings, inputs.gpu_name, inputs.version)
    difference = marlin_over_triton(inputs)
    if backend is None or difference is None:
        return None
    if backend.name == MARLIN:  # the book's row is Triton's padding: Marlin's instead (its copies already left out)
        error = abs(difference) if backend.other is not None else 0
        why = _assumed(backend, -difference) if error else f"vLLM's MXFP4 experts as Marlin builds them ({backend.why})"
        return difference + triton_held(inputs), error, why
    if backend.other is None:
        return None
    return 0, abs(difference), _assumed(backend, difference)


def _assumed(backend: Mxfp4Backend, difference: int) -> str:
    """The assumed backend in words, and the other's weights less its own (`difference`, bytes)."""
    return (f"MXFP4 backend {backend.name} ({backend.source}): {backend.why}; ± {gib(abs(difference))}, "
            f"{backend.other}'s weights less {backend.name}'s (quantization/mxfp4.py create_weights)")  # fmt: skip

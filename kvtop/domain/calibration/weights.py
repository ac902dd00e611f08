"""The weights term: kvtop's weights book (`kvtop/domain/weights.py`), with the error the corpus measured.

The book counts parameters × bytes per parameter ÷ the shards that split each component; the engine's
resident weights add buffers and padding, or drop a part the book counts. Where a corpus log printed
the engine's weights and its model's config is at hand, the difference is measured: the 90th
percentile of |book − logged| ÷ logged is the relative half-width the term adds to a plan.

A launch that re-casts a 16-bit checkpoint as it loads is the book of the cast model: `--dtype float32`
holds every unquantized tensor in 4 bytes (the model is built in that dtype and the checkpoint's tensors
copied into it), and `--quantization fp8` on an unquantized checkpoint holds each linear layer's matrix
in FP8 with one fp32 scale, its embedding, LM head, norms and router as they were (vLLM
`Fp8LinearMethod`/`Fp8MoEMethod` with a 16-bit checkpoint: `process_weights_after_loading` quantizes
per tensor; judged on llm-d-planner's vLLM 0.19.0 runs, docs/calibration.md). An engine adds what its
own loader holds beside the book (`extra`: vLLM's MXFP4 experts, `engines/vllm/weights_held.py`).
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.model import ModelSpec
from kvtop.domain.quant import QuantSpec
from kvtop.domain.weights import weights_book

# 90th percentile of |book − logged| ÷ logged over the corpus, and its records (launches that re-cast
# their weights at load left out)
# BEGIN FITTED by `python benchmarks/calibration/run.py --write` from tests/data/calibration/ (docs/calibration.md)
WEIGHTS_RELATIVE_ERROR = 0.0142
WEIGHTS_RECORDS = 51
# END FITTED


# dtypes a launch may ask for that leave a 16-bit checkpoint's bytes as the book counts them
_BOOK_DTYPES = frozenset({"auto", "bfloat16", "bf16", "float16", "fp16", "half"})
_FP32_DTYPES = frozenset({"float32", "float", "fp32"})
RUNTIME_CAST_ERROR = 0.5  # the book's half-width where the launch re-casts the weights in a way it does not model
# --quantization fp8 on a 16-bit checkpoint: FP8 matrices, one fp32 scale each (online, per tensor)
ONLINE_FP8 = QuantSpec(method="fp8", weight_bits=8, scale_bytes=4, per_tensor=True, scheme="fp8",
                       source="--quantization fp8 (quantized at load)")  # fmt: skip


def runtime_cast(inputs: CalibrationInputs) -> str | None:
    """The flag with which the engine re-casts or quantizes the weights as it loads them (the book counts
    the checkpoint's own bytes), or None."""
    s = inputs.settings
    if s.quantization and (inputs.model is None or not inputs.model.quant.quantized):
        return f"--quantization {s.quantization}"
    if s.dtype and s.dtype.lower() not in _BOOK_DTYPES:
        return f"--dtype {s.dtype}"
    return None


def recast_bytes(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """The largest rank's weights after the launch's cast at load, and the cast in words; None where the
    launch casts nothing, or casts in a way the book does not model (another runtime method)."""
    model, s = inputs.model, inputs.settings
    if model is None or runtime_cast(inputs) is None:
        return None
    target, done = model, []
    if s.quantization and not model.quant.quantized:
        if s.quantization.lower() != "fp8":
            return None
        target = target.model_copy(update={"quant": ONLINE_FP8})
        done.append("--quantization fp8: each linear matrix in FP8, one fp32 scale per tensor")
    if s.dtype and s.dtype.lower() in _FP32_DTYPES and model.dtype_bytes != 4:
        target = target.model_copy(update={"dtype_bytes": 4})
        done.append(f"--dtype {s.dtype}: every unquantized tensor in 4 bytes")
    elif s.dtype and s.dtype.lower() not in _BOOK_DTYPES:
        return None
    ratio = _whole_book(target, inputs) / _whole_book(model, inputs)
    return round(inputs.weights_bytes * ratio), "; ".join(done)


def _whole_book(model: ModelSpec, inputs: CalibrationInputs) -> int:
    """One TP rank's book of every layer (the cast's ratio; pipeline stages scale alike)."""
    layers = range(model.num_layers)
    return weights_book(model, inputs.layout, layers, first_stage=True, last_stage=True).total_bytes or 1


def weights_estimate(
    inputs: CalibrationInputs,
    relative_error: float = WEIGHTS_RELATIVE_ERROR,
    records: int = WEIGHTS_RECORDS,
    extra: tuple[int, str] | None = None,  # (bytes, why): what the engine's loader holds beside the book
) -> TermEstimate:
    model = inputs.model
    if model is not None and model.weights_as_stored and model.checkpoint_bytes == inputs.weights_bytes:
        return TermEstimate(
            term=Term.WEIGHTS, label="weights", bytes=inputs.weights_bytes, error_bytes=0, source="measured",
            basis="the model file's tensors, loaded as stored (their bytes read from its header)",
        )  # fmt: skip
    book, how = inputs.weights_bytes, "kvtop's weights book (parameters × bytes per parameter ÷ shards)"
    if runtime_cast(inputs) is not None:
        recast = recast_bytes(inputs)
        if recast is None:
            return TermEstimate(
                term=Term.WEIGHTS, label="weights", bytes=book, error_bytes=round(book * RUNTIME_CAST_ERROR),
                source="assumed",
                basis=f"the checkpoint's bytes: the book does not model {runtime_cast(inputs)} at load (± 50 %)",
            )  # fmt: skip
        book, how = recast[0], f"kvtop's weights book as the load casts it ({recast[1]})"
    if extra is not None:
        book, how = book + extra[0], f"{how}, and {extra[1]}"
    return TermEstimate(
        term=Term.WEIGHTS,
        label="weights",
        bytes=book,
        error_bytes=round(book * relative_error),
        source="calibrated",
        basis=f"{how}; ± {relative_error:.1%} (the corpus's 90th percentile over {records} logged weights)",
    )

"""vLLM's profiled activation peak is the larger of the forward's transient and the sampler's copies of its logits:
`profile_run` runs the forward over `max_num_batched_tokens`, then the sampler over `max_num_seqs` requests, and the
MLP holds its gate-up output (tokens × 2 × intermediate) and the activation's output (tokens × intermediate) at once.

The figures are a real start's (tests/data/calibration/vllm.jsonl, search-index id 60168338778): Qwen3-14B-AWQ on
one L40S, vLLM 0.28.0, `--gpu-memory-utilization 0.95 --max-model-len 1024 --block-size 16 --enable-prefix-caching
--max-num-seqs 8 --max-num-batched-tokens 8192`: `31.02 GiB (203,264 tok)` of KV, and the same checkpoint's default
start printed 9.44 GiB of weights. So the profile (activation, non-torch memory and CUDA graphs together) charged
0.95 × 44.45 − 9.44 − 31.02 = 1.77 GiB (44.45: the L40S's CUDA total as the corpus fits it, 44.39–44.42 logged),
where the forward's MLP transient alone is 8,192 × (3 × 17,408 + 5,120) × 2 B = 0.875 GiB (Qwen3-14B: intermediate
17,408, hidden 5,120, TP 1) and the fits, made on sampler-bound starts, give about half of that.
"""

from __future__ import annotations

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.vllm.calibration import FITS
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import DATA

QWEN3_14B_AWQ = DATA / "calibration" / "configs" / "Qwen--Qwen3-14B-AWQ.RECONSTRUCTED.json"
# bytes: the gate-up output and the activation's output, bf16, at 8,192 tokens
MLP_TRANSIENT = 8192 * (3 * 17408 + 5120) * 2
LOGGED_BESIDE_WEIGHTS = (0.95 * 44.45 - 9.44 - 31.02) * GIB  # what the tuned start's profile charged in all
LOGGED_TOKENS = 203_264


def _plan(*flags: str):  # type: ignore[no-untyped-def]
    model = load_config_file(QWEN3_14B_AWQ)
    settings = parse_flags("vllm", ["--engine-version", "0.28.0", "--max-model-len", "1024", *flags])
    return planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes("L40S"), gpu_name="L40S",
                            measured=MeasuredInputs(weights_bytes=round(9.44 * GIB)))  # fmt: skip


def test_a_forward_bound_profile_charges_the_mlp_transient() -> None:
    plan = _plan("--gpu-memory-utilization", "0.95", "--max-num-seqs", "8", "--max-num-batched-tokens", "8192",
                 "--block-size", "16", "--enable-prefix-caching")  # fmt: skip
    activation = plan.estimate.term(Term.ACTIVATION)
    assert activation is not None and activation.source == "calibrated"
    assert activation.bytes == MLP_TRANSIENT
    fit = FITS["vllm.activation.v17"]
    # its features: the dummy run's hidden states (8,192 × 5,120 × 2 B), the logits, the dense MLP transient, MoE's
    fitted = fit.predict((8192 * 5120 * 2 / GIB, 8 * 151936 * 4 / GIB, MLP_TRANSIENT / GIB, 0.0))
    assert fitted < MLP_TRANSIENT  # the fit alone charges less
    assert MLP_TRANSIENT < LOGGED_BESIDE_WEIGHTS  # and the log's profile charged more than the floor
    assert abs(plan.ledger.token_capacity / LOGGED_TOKENS - 1) < 0.02


def test_a_sampler_bound_profile_keeps_the_fit() -> None:
    # vllm serve's 2,048 tokens on an L40S at 1,024 seqs: 1,024 × 151,936 × 4 B = 0.58 GiB of logits a copy (at its
    # default 256 seqs FlashInfer's one copy, 0.145 GiB, is below the forward's 0.219 GiB: forward-bound)
    plan = _plan("--max-num-seqs", "1024")
    activation = plan.estimate.term(Term.ACTIVATION)
    assert activation is not None
    # the fit's sampler copies exceed the forward's transient
    assert activation.bytes > 2048 * (3 * 17408 + 5120) * 2
    assert "larger than the fit" not in activation.basis

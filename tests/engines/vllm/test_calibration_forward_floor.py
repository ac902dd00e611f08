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
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.versions import from_flag
from kvtop.domain.engines.vllm.calibration import FITS
from kvtop.domain.engines.vllm.calibration_activation import fit_features, forward_bound
from kvtop.domain.engines.vllm.release_calendar import CALENDAR as VLLM_CALENDAR
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS, DATA

QWEN3_14B_AWQ = DATA / "calibration" / "configs" / "Qwen--Qwen3-14B-AWQ.RECONSTRUCTED.json"
# bytes: the gate-up output and the activation's output, bf16, at 8,192 tokens
MLP_TRANSIENT = 8192 * (3 * 17408 + 5120) * 2
LOGGED_BESIDE_WEIGHTS = (0.95 * 44.45 - 9.44 - 31.02) * GIB  # what the tuned start's profile charged in all
LOGGED_TOKENS = 203_264


def _plan(*flags: str, version: str = "0.28.0"):  # type: ignore[no-untyped-def]
    model = load_config_file(QWEN3_14B_AWQ)
    settings = parse_flags("vllm", ["--engine-version", version, "--max-model-len", "1024", *flags])
    return planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes("L40S"), gpu_name="L40S",
                            measured=MeasuredInputs(weights_bytes=round(9.44 * GIB)))  # fmt: skip


TUNED = ("--gpu-memory-utilization", "0.95", "--max-num-seqs", "8", "--max-num-batched-tokens", "8192", "--block-size",
         "16", "--enable-prefix-caching")  # fmt: skip
# the forward holds the residual and the normed input beside its MLP (2 × 8,192 × 5,120 × 2 B; v2_profile.py, and
# V1's floor from session 52)
HELD_HIDDEN = 2 * 8192 * 5120 * 2


def test_a_forward_bound_profile_charges_the_mlp_transient() -> None:
    """The V1 runner (v0.21.0, the last release before V2 ran listed classes such as this Qwen3ForCausalLM by
    default: runner_eras.MODEL_RUNNER_ERAS) charges the fit floored by the forward:
    the MLP transient beside the residual and the normed input its decoder layer holds (as V0's and V2's counts, session
    52); the start's own v0.28.0 runs V2, whose profile is counted from its code (test_calibration_v2_profile)."""
    v1 = _plan(*TUNED, version="0.21.0").estimate.term(Term.ACTIVATION)
    assert v1 is not None and v1.source == "calibrated"
    assert v1.bytes == MLP_TRANSIENT + HELD_HIDDEN == 1_107_296_256
    plan = _plan(*TUNED)
    activation = plan.estimate.term(Term.ACTIVATION)
    assert activation is not None and activation.source == "assumed"
    assert activation.bytes == MLP_TRANSIENT + HELD_HIDDEN
    fit = FITS["vllm.activation.v17"]
    # its features: the dummy run's hidden states (8,192 × 5,120 × 2 B), the logits, the dense MLP transient, MoE's
    fitted = fit.predict((8192 * 5120 * 2 / GIB, 8 * 151936 * 4 / GIB, MLP_TRANSIENT / GIB, 0.0))
    assert fitted < MLP_TRANSIENT  # the fit alone charges less
    assert MLP_TRANSIENT + HELD_HIDDEN < LOGGED_BESIDE_WEIGHTS  # and the log's profile charged more than the count
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


def test_a_forward_bound_log_is_no_row_of_the_sampler_fits() -> None:
    """The V1 profile's peak is the larger of its forward and its sampler, while a fit sums its features: a log whose
    forward binds is left out of the fit, as V0's are. Qwen2.5-3B (hidden 2,048, intermediate 11,008, vocabulary
    151,936) at `vllm serve`'s 2,048 tokens and `--max-num-seqs 1`, v0.10.2 on an RTX 4090 (github.com/ShanghaoLi0913/
    memory-aware_RLHF `vllm.log`, printed 0.60 and 0.17 GiB): MLP transient 2,048 × (3 × 11,008 + 2,048) × 2 B =
    143,654,912 B, the sampler's 8 sorted copies (below 128 rows) 8 × 151,936 × 4 B = 4,861,952 B beside 2,048 × 2,048
    × 2 B = 8,388,608 B of hidden states. Qwen3-32B at 8,192 tokens and 1,024 seqs (llm-d-planner, 5.64 GiB printed):
    9.5 × 1,024 × 151,936 × 4 B = 5.51 GiB of sampler against 1.25 GiB of MLP transient, a row."""
    assert 143_654_912 > 4_861_952 + 8_388_608
    small = load_config_file(DATA / "configs" / "heldout" / "mlc--qwen2.5_3b.json")
    settings = parse_flags("vllm", ["--engine-version", "0.10.2", "--max-model-len", "4096", "--max-num-seqs", "1",
                                    "--dtype", "float16"])  # fmt: skip
    inputs = CalibrationInputs(model=small, settings=settings, layout=ParallelLayout(), gpu_name="RTX4090",
                               gpu_total_bytes=gpu_total_bytes("RTX4090"), version=from_flag("0.10.2", VLLM_CALENDAR),
                               weights_bytes=round(5.79 * GIB), context_length=4096)  # fmt: skip
    assert forward_bound(inputs)
    assert fit_features("vllm.activation.v1", inputs) is None
    big = load_config_file(CONFIGS / "Qwen--Qwen3-32B.json")
    sweep = inputs.model_copy(update={
        "model": big, "gpu_name": "H100", "gpu_total_bytes": gpu_total_bytes("H100"),
        "settings": parse_flags("vllm", ["--engine-version", "0.14.0", "--max-model-len", "16000"]),
        "version": from_flag("0.14.0", VLLM_CALENDAR), "context_length": 16000,
    })  # fmt: skip
    assert not forward_bound(sweep)
    assert fit_features("vllm.activation.v1", sweep) is not None

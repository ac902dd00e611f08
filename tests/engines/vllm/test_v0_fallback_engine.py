"""A V1-era release (v0.8.0-v0.10.1.1) on a GPU below compute capability 8.0 runs V0 ('Compute Capability < 8.0 is not
supported by the V1 Engine. Falling back to V0', engine/arg_utils.py `_is_v1_supported_oracle`; v0.10.2's oracle asks
no capability, engine/arg_utils.py:1431-1570 of its PyPI wheel), as does any start of v0.8.0-v0.10.2 whose launch sets
VLLM_USE_V1=0 (`create_engine_config`, :1121-1136): V0's scheduler
defaults (`_set_default_args_v0`: chunked prefill only above 32K, so max(max_model_len, 2048) tokens a batch) and V0's
profile and fits, not V1's 2048-token batch. v0.11.0 removed the V0 engine (vllm#25033).

The start: Qwen/Qwen3-4B in a vLLM image of May 2025 (0.8.5's `[worker.py:267]` V0 lines) on an RTX 2060 12GB under
Docker on Windows, `dtype=float16 max_num_seqs=1 max_model_len=10000 gpu_memory_utilization=0.95` (search-index id
40791855483): 'the current vLLM instance can use total_gpu_memory (12.00GiB) x gpu_memory_utilization (0.95) =
11.40GiB', 'model weights take 7.56GiB; non_torch_memory takes 0.04GiB; PyTorch activation peak memory takes 0.74GiB;
the rest of the memory reserved for KV Cache is 3.06GiB', '# cuda blocks: 1394' (22,304 tokens).
"""

from __future__ import annotations

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.batching import engine_era
from kvtop.domain.engines.vllm.calibration_eras import activation_key, non_torch_key
from kvtop.domain.engines.vllm.profile_run import batch_limits
from kvtop.domain.engines.vllm.v0_charge import falls_back_to_v0
from kvtop.domain.gpus import compute_capability
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_line import parse_launch_command
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_config_file
from tests.calibration_fits import CORPUS, ONE_WORKER, corpus_fits
from tests.data_paths import CONFIGS, DATA

pytestmark = ONE_WORKER  # its fits are tests/calibration_fits.py's: made once per run

QWEN3_4B = load_config_file(CONFIGS / "heldout" / "wave3" / "Qwen--Qwen3-4B.json")
FLAGS = ["--dtype", "float16", "--max-num-seqs", "1", "--max-model-len", "10000", "--gpu-memory-utilization", "0.95"]


def _inputs(version: str, gpu: str) -> CalibrationInputs:
    settings = parse_flags("vllm", FLAGS, strict=True)
    return CalibrationInputs(
        model=None, settings=settings, layout=ParallelLayout(), gpu_name=gpu, gpu_total_bytes=12 * GIB,
        version=ResolvedVersion(text=version), weights_bytes=0, context_length=10000,
    )  # fmt: skip


def test_the_fallback_window_is_v0_8_to_v0_10_below_compute_capability_8() -> None:
    turing, ampere = compute_capability("RTX2060"), compute_capability("A10")
    assert falls_back_to_v0(ResolvedVersion(text="0.8.5"), turing)
    assert falls_back_to_v0(ResolvedVersion(text="0.10.1.1"), turing)  # prints the fallback on a T4 (70080757471)
    assert not falls_back_to_v0(ResolvedVersion(text="0.10.2"), turing)  # the oracle's check dropped
    assert not falls_back_to_v0(ResolvedVersion(text="0.11.0"), turing)  # V0 removed
    assert not falls_back_to_v0(ResolvedVersion(text="0.7.3"), turing)  # V0 is the release's own engine
    assert not falls_back_to_v0(ResolvedVersion(text="0.8.5"), ampere)
    assert not falls_back_to_v0(ResolvedVersion(text="0.8.5"), None)  # an unnamed GPU: V1's


def test_a_turing_start_of_0_8_5_profiles_v0_s_batch_and_reads_v0_s_fits() -> None:
    inputs = _inputs("0.8.5", "RTX2060")
    assert engine_era(inputs.version, inputs.gpu_name) == "v0"
    assert batch_limits(inputs)[:2] == (10000, 1)  # max(context, 2048), no chunked prefill at 10K; V1 would take 2048
    assert (activation_key(inputs), non_torch_key(inputs)) == ("vllm.activation.v0", "vllm.non_torch.v0")
    ampere = _inputs("0.8.5", "A10")
    assert batch_limits(ampere)[:2] == (2048, 1)
    assert activation_key(ampere) == "vllm.activation.v1"


RTX2060_ID = "file40791855483-qwen3-4b-rtx2060-12gb-v0"
KYAUSHEV_ID = "kyaushev-ecg-phi-4-mini-colab-t4-v0102"


def test_the_rtx_2060_start_is_planned_within_its_log() -> None:
    """The log's pool: 1,394 blocks × 16 = 22,304 tokens. With V1's 2,048-token batch the plan charged 0.21 GiB
    beside the weights (26,464 tokens, +18.7 %); V0's 10,000-token profile, with V0's fits that left this source out
    (`evaluate.fit_all(leave_out=…)`: the log is no row of them), charges about the 0.74 + 0.04 GiB it printed."""
    settings = parse_flags("vllm", ["--engine-version", "0.8.5", *FLAGS])
    measured = MeasuredInputs(gpu_total_bytes=12 * GIB)  # the log's CUDA total, as `kvtop plan --gpu-memory 12GiB`
    fits = corpus_fits(next(r.source for r in CORPUS["vllm"] if r.id == RTX2060_ID))
    plan = planned_capacity(QWEN3_4B, settings, gpu_total_bytes=12 * GIB, gpu_name="RTX2060", measured=measured,
                            fits=fits)  # fmt: skip
    logged = 1394 * 16
    assert plan.token_capacity_min <= logged <= plan.token_capacity_max
    assert abs(plan.ledger.token_capacity - logged) / logged < 0.02  # 22,192 planned


def test_vllm_use_v1_0_on_the_launch_runs_v0_in_the_releases_that_hold_it() -> None:
    """`VLLM_USE_V1=0 vllm serve …` (envs.py:745-746 `bool(int(...))`) turns V1 off from v0.8.0 to v0.10.2, on any GPU;
    before v0.8.0 V0 is the default, and v0.11.0 has no V0. Read from a --cmd line's leading assignment."""
    off = parse_launch_command("VLLM_USE_V1=0 vllm serve facebook/opt-125m")
    assert off is not None and off.flags.get("VLLM_USE_V1") == "0"
    turing, ampere = compute_capability("T4"), compute_capability("A10")
    assert falls_back_to_v0(ResolvedVersion(text="0.10.2"), turing, off.flags)
    assert falls_back_to_v0(ResolvedVersion(text="0.9.2"), ampere, off.flags)
    assert engine_era(ResolvedVersion(text="0.10.2"), "T4", off.flags) == "v0"
    assert not falls_back_to_v0(ResolvedVersion(text="0.11.0"), turing, off.flags)  # V0 removed
    assert not falls_back_to_v0(ResolvedVersion(text="0.10.2"), ampere, {"VLLM_USE_V1": "1"})


def test_the_t4_start_of_0_10_2_is_planned_as_v1_within_its_log() -> None:
    """kyaushev/ecg_classifier `vllm_test.ipynb` (a03f282): Phi-4-mini-instruct on a Colab T4, 'Initializing a V1 LLM
    engine (v0.10.2)', 'GPU KV cache size: 22,704 tokens'. Planned as V0 (the fallback read to v0.10.x) the plan
    charged V0's 4,096-token profile: 21,456 tokens (−5.5 %); V1's 2,048-token batch: 21,792 (−4.0 %), and with fits
    that left this source out (`evaluate.fit_all(leave_out=…)`) 21,728 (−4.3 %)."""
    phi = load_config_file(DATA / "calibration" / "configs" / "microsoft--Phi-4-mini-instruct.json")
    settings = parse_flags("vllm", ["--engine-version", "0.10.2", "--trust-remote-code", "--max-model-len", "4096",
                                    "--gpu-memory-utilization", "0.8"])  # fmt: skip
    inputs = CalibrationInputs(
        model=None, settings=settings, layout=ParallelLayout(), gpu_name="T4", gpu_total_bytes=15 * GIB,
        version=ResolvedVersion(text="0.10.2"), weights_bytes=0, context_length=4096,
    )  # fmt: skip
    assert activation_key(inputs) != "vllm.activation.v0"
    fits = corpus_fits(next(r.source for r in CORPUS["vllm"] if r.id == KYAUSHEV_ID))
    plan = planned_capacity(phi, settings, gpu_total_bytes=15360 * 2**20, gpu_name="T4", fits=fits)
    logged = 22704
    assert abs(plan.ledger.token_capacity - logged) / logged < 0.05

"""From v0.21.0 vLLM's V1 profile warms the native top-k/top-p path after FlashInfer's (sampler_path.py
NATIVE_WARMUP_ERAS): `_dummy_sampler_run` samples again with `generators={0: torch.Generator(...)}`
(v1/worker/gpu_model_runner.py:5743-5765 at v0.21.0, :6015-6037 at v0.23.0), and FlashInfer's `forward_cuda` hands a
batch with generators to `forward_native` (v1/sample/ops/topk_topp_sampler.py:143 at v0.21.0, :166 at v0.23.0).

The start: unsloth/gpt-oss-20b-BF16 on one H100 at vLLM 0.23.0 (RohanAwhad/rohans-sdft `logs/vllm_0.log`,
tests/data/calibration/vllm.jsonl), `--max-model-len 8192 --enforce-eager --gpu-memory-utilization 0.8`, vllm serve's
defaults there (8,192 batched tokens, 1,024 seqs): 'Model loading took 39.15 GiB memory', 'Available KV cache memory:
20.57 GiB'. It leaves 0.8 × 79.18 (the H100's CUDA total, gpus.jsonl) − 39.15 − 20.57 = 3.624 GiB for the profile's
peak and non-torch memory, where FlashInfer's path alone (its logits copies beyond one taken off) left 1.70 planned.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.runner_eras import runs_v2
from kvtop.domain.engines.vllm.sampler_path import NATIVE_WARMUP_ERAS, profiled_sampler_path, sampler_path
from kvtop.domain.engines.vllm.sampler_peak import counted_sampler_bytes
from kvtop.sources.hub import load_config_file
from kvtop.units import GIB
from tests.data_paths import CONFIGS

RECORDS = {record.id: record for record in load("vllm")}
GPT_OSS_20B = "rohans-sdft-gpt-oss-20b-bf16-h100-v0230-weight-transfer"
LEFT_BESIDE_WEIGHTS_AND_KV = (0.8 * 79.18 - 39.15 - 20.57) * GIB


def test_the_warm_up_starts_at_v0_21_0() -> None:
    assert not NATIVE_WARMUP_ERAS.at(ResolvedVersion(text="0.20.1"))
    assert NATIVE_WARMUP_ERAS.at(ResolvedVersion(text="0.21.0"))
    assert NATIVE_WARMUP_ERAS.at(ResolvedVersion(text="0.33.0"))


def test_the_start_served_on_flashinfer_and_profiled_the_native_path() -> None:
    model = RECORDS[GPT_OSS_20B].model
    assert model is not None
    version = ResolvedVersion(text="0.23.0")
    assert sampler_path(version, "H100")[0] == "flashinfer"
    assert profiled_sampler_path(version, "H100", model)[0] == "native"
    # a launch that states FlashInfer's sampler profiles the native path too from v0.21.0, not before
    stated = {"VLLM_USE_FLASHINFER_SAMPLER": "1"}
    assert profiled_sampler_path(version, "H100", model, stated)[0] == "native"
    assert profiled_sampler_path(ResolvedVersion(text="0.20.1"), "H100", model, stated)[0] == "flashinfer"
    # the warm-up is a typed flag, not the wording: set where the native path is profiled beside FlashInfer's, not
    # where the launch serves on the native path itself (VLLM_USE_FLASHINFER_SAMPLER=0)
    assert profiled_sampler_path(version, "H100", model).warms_native
    native = profiled_sampler_path(version, "H100", model, {"VLLM_USE_FLASHINFER_SAMPLER": "0"})
    assert native.path == "native" and not native.warms_native


def test_the_v2_runner_keeps_its_own_sampler() -> None:
    """A dense model at v0.25.0+ runs on the V2 runner (runner_eras.runs_v2), whose `_dummy_sampler_run`
    (v1/worker/gpu/model_runner.py:993-1014 at v0.33.0) has no generator pass: the serving path stays the profile's."""
    model = load_config_file(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
    for text in ("0.29.0", "0.33.0"):
        version = ResolvedVersion(text=text)
        assert runs_v2(version, model)
        assert profiled_sampler_path(version, "H100", model)[0] == sampler_path(version, "H100")[0] == "flashinfer"
    # V1 runner: Llama is listed for V2 from v0.23.0 (runner_eras.DEFAULT_V2_ARCHITECTURES_ERAS), dense for all
    # from v0.25.0
    assert profiled_sampler_path(ResolvedVersion(text="0.22.1"), "H100", model)[0] == "native"


def test_the_native_count_is_what_the_start_left_less_its_non_torch_memory() -> None:
    """The native path's count at 1,024 seqs × gpt-oss's 201,088-token vocabulary (sampler_peak.py): the bf16 logits,
    the float32 copy, the probabilities and the noise (3.5 × 1,024 × 201,088 × 4 B), the Triton kernel's cached rows
    (an H100's 132 SMs × 201,088 × 4 B), the forward's output and the dummy rows ((8,192 + 1,024) × 2,880 × 2 B),
    and the unquantized experts' workspace the WorkspaceManager keeps (8,192 × top-4 × max(2,880, 2,880) × 2 B +
    8,192 × 4 × 5,760 × 2 B): 3.36 GiB, leaving 0.26 GiB of the 3.624 for non-torch memory (a TP 1 H100 start's,
    0.26 GiB in vLLM's fit)."""
    record = RECORDS[GPT_OSS_20B]
    inputs = record.inputs()
    assert inputs.model is not None
    expected = (round(3.5 * 1024 * 201_088 * 4) + 132 * 201_088 * 4 + (8192 + 1024) * 2880 * 2
                + 8192 * 4 * 2880 * 2 + 8192 * 4 * 5760 * 2)  # fmt: skip
    counted = counted_sampler_bytes(inputs.model, inputs.layout, inputs.version, "H100", 8192, 1024)
    assert counted == expected
    assert 0 < LEFT_BESIDE_WEIGHTS_AND_KV - counted < 0.3 * GIB

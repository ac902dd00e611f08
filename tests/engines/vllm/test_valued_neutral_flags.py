"""vLLM flags moved from "not modelled" to "no effect on memory" (session 53): each plans as without it.

Two held-out starts were refused for a flag the operator passed: the weight-transfer start
(tests/data/calibration/vllm.jsonl `rohans-sdft-gpt-oss-20b-bf16-h100-v0230-weight-transfer`, vLLM 0.23.0, one H100:
'non-default args: {… 'weight_transfer_config': WeightTransferConfig(backend='nccl')}', 'GPU KV cache size: 448,969
tokens') and a Llama-3.1-8B start with a torch `--profiler-config` (job 8998343, named beside its twin record). Each
moved flag's reason is the vLLM line in its row (read in the wheels, flags_neutral.py STEP and flags_valued.py); the
figure the plan gives must not move with it, and a value whose effect was not read is refused with exit 2.
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from kvtop.domain.engines.vllm.flags import MEMORY_NEUTRAL, UNMODELLED_SPELLINGS
from kvtop.domain.launch_notes import ignored_flags_note
from kvtop.sources.processes import ProcessRecord, _engine_from_server
from tests.data_paths import CONFIGS, DATA

GPT_OSS_20B = str(DATA / "calibration" / "configs" / "unsloth--gpt-oss-20b-BF16.RECONSTRUCTED.json")
LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
# the weight-transfer start's own flags (its record's `flags`), at its release and GPU
WEIGHT_TRANSFER_START = ["--model", GPT_OSS_20B, "--engine", "vllm", "--gpu", "H100", "--dtype", "bfloat16",
                         "--max-model-len", "8192", "--enforce-eager", "--gpu-memory-utilization", "0.8"]  # fmt: skip
LOGGED_TOKENS = 448_969  # its log: 'GPU KV cache size: 448,969 tokens'


def _capacity(capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[str, str, list[str]]:
    assert main(["plan", *args]) == 0
    lines = capsys.readouterr().out.splitlines()
    capacity = next(line for line in lines if line.startswith("Token capacity"))
    interval = next(line for line in lines if line.startswith("Interval"))
    return capacity, interval, lines


def _llama(version: str) -> list[str]:
    return ["--model", LLAMA_8B, "--engine", "vllm", "--engine-version", version, "--gpu", "H100",
            "--max-model-len", "32768", "--dtype", "float16"]  # fmt: skip


# (the launch without the flag, the flag as typed, the vLLM line that shows it changes no memory before the KV cache
# is sized)
MOVED = [
    pytest.param(
        [*WEIGHT_TRANSFER_START, "--engine-version", "0.23.0"], ["--weight-transfer-config", '{"backend": "nccl"}'],
        "distributed/weight_transfer/nccl_engine.py:111 (v0.19.0): the engine keeps its config; the NCCL group is the "
        "trainer's init_transfer_engine call, after the start",
        id="weight-transfer-nccl",
    ),
    pytest.param(
        [*WEIGHT_TRANSFER_START, "--engine-version", "0.23.0"], ["--weight-transfer-config", "{}"],
        "config/weight_transfer.py:12 (v0.19.0): backend's default is 'nccl'",
        id="weight-transfer-default",
    ),
    pytest.param(
        _llama("0.13.0"), ["--profiler-config", '{"profiler": "torch", "torch_profiler_dir": "/traces"}'],
        "v1/worker/gpu_worker.py:647 (v0.13.0): Worker.profile starts the profiler, on /start_profile only",
        id="profiler-torch",
    ),
    pytest.param(
        _llama("0.33.0"), ["--profiler-config", '{"profiler": "cuda"}'],
        "v1/worker/gpu_worker.py:1397 (v0.33.0): made on the first /start_profile call",
        id="profiler-cuda",
    ),
    pytest.param(
        _llama("0.9.2"), ["--device", "cuda"],
        "config.py:2374 (v0.9.2): DeviceConfig 'auto' detects cuda on an NVIDIA GPU",
        id="device-cuda",
    ),
    pytest.param(
        _llama("0.9.2"), ["--max-num-partial-prefills", "1", "--max-long-partial-prefills", "1"],
        "config.py:1439, :1443 (v0.7.3) and config/scheduler.py:70, :74 (v0.26.0): 1 is the default",
        id="partial-prefills-default",
    ),
    pytest.param(
        _llama("0.33.0"), ["--load-format", "safetensors"],
        "model_executor/model_loader/default_loader.py:170-191 (v0.33.0): DefaultModelLoader, the same tensors as auto",
        id="load-format-safetensors",
    ),
    pytest.param(
        _llama("0.6.3.post1"), ["--load-format", "auto"],
        "model_executor/model_loader/loader.py:272 (v0.6.3.post1): the default",
        id="load-format-auto",
    ),
    pytest.param(
        _llama("0.19.0"), ["--disable-cascade-attn"],
        "v1/worker/gpu_model_runner.py:3865 (v0.19.0): chosen per scheduled batch; :5961 the dummy run passes "
        "use_cascade_attn=False",
        id="disable-cascade-attn",
    ),
    pytest.param(
        _llama("0.19.0"), ["--no-disable-cascade-attn"],
        "engine/arg_utils.py:1018 (v0.33.0): a BooleanOptionalAction, so --no- is vLLM's too",
        id="no-disable-cascade-attn",
    ),
    pytest.param(
        _llama("0.30.0"), ["--dp-sync-interval", "32"],
        "v1/engine/core.py:2267 (v0.30.0): steps between DP state all-reduces, a runtime cadence",
        id="dp-sync-interval",
    ),
]


@pytest.mark.parametrize(("launch", "flag", "line"), MOVED)
def test_a_moved_flag_is_accepted_and_the_capacity_does_not_move(
    capsys: pytest.CaptureFixture[str], launch: list[str], flag: list[str], line: str
) -> None:
    assert line  # the row's reason: the vLLM code line read
    without = _capacity(capsys, launch)
    capacity, interval, lines = _capacity(capsys, [*launch, *flag])
    assert (capacity, interval) == without[:2]
    named = next(text for text in lines if text.startswith("  no effect on memory"))
    assert flag[0] in named.split()
    assert flag[0].replace("--no-", "--") in MEMORY_NEUTRAL and flag[0] not in UNMODELLED_SPELLINGS


@pytest.mark.parametrize(
    ("launch", "flag", "message"),
    [
        pytest.param(
            _llama("0.33.0"), ["--profiler-config", '{"profiler": "torch", "capture_torch_profiler": true}'],
            "--profiler-config: a profiler that runs during the start (capture_torch_profiler, or proton) is not "
            "modelled by kvtop",
            id="profiler-capture",  # v1/worker/gpu_model_runner.py:6443 (v0.33.0): profiles CUDA-graph capture
        ),
        pytest.param(
            _llama("0.33.0"), ["--profiler-config", '{"profiler": "proton"}'],
            "--profiler-config: a profiler that runs during the start",
            id="profiler-proton",  # profiler/wrapper.py:812 (v0.33.0): wraps graph capture
        ),
        pytest.param(
            _llama("0.33.0"), ["--profiler-config", "torch"],
            "--profiler-config: is not JSON (Expecting value at character 0: 'torch'); expected a JSON object",
            id="profiler-not-json",  # engine/arg_utils.py parse_dataclass: TypeAdapter.validate_json
        ),
        pytest.param(
            [*WEIGHT_TRANSFER_START, "--engine-version", "0.23.0"], ["--weight-transfer-config", '{"backend": "ipc"}'],
            "--weight-transfer-config: weight-transfer backend 'ipc' is not modelled by kvtop",
            id="weight-transfer-ipc",
        ),
        pytest.param(
            _llama("0.9.2"), ["--device", "cpu"],
            "--device: device 'cpu' is not modelled by kvtop",
            id="device-cpu",
        ),
        pytest.param(
            _llama("0.9.2"), ["--max-num-partial-prefills", "4"],
            "--max-num-partial-prefills: '4' is not modelled by kvtop: only the default 1 is read",
            id="partial-prefills-4",  # engine/arg_utils.py:1408-1414 (v0.9.2): V1 falls back to V0 for it
        ),
        pytest.param(
            _llama("0.33.0"), ["--load-format", "bitsandbytes"],
            "--load-format: load format 'bitsandbytes' is not modelled by kvtop",
            id="load-format-bitsandbytes",  # BitsAndBytesModelLoader: 4-bit weights at load
        ),
        pytest.param(
            _llama("0.33.0"), ["--enable-cumem-allocator"],
            "--enable-cumem-allocator: a flag of vLLM whose effect on memory kvtop does not model",
            id="cumem-allocator-kept",  # v1/worker/gpu_worker.py:399 (v0.33.0): the CuMem pool's accounting
        ),
        pytest.param(
            _llama("0.33.0"), ["--data-parallel-rank", "1"],
            "--data-parallel-rank: a flag of vLLM whose effect on memory kvtop does not model",
            id="data-parallel-rank-kept",  # the node layout span.py does not read yet
        ),
        pytest.param(
            _llama("0.33.0"), ["--config-format", "mistral"],
            "--config-format: a flag of vLLM whose effect on memory kvtop does not model",
            id="config-format-kept",  # mistral: params.json, not the config kvtop reads
        ),
    ],
)
def test_an_unread_value_or_a_kept_flag_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str], launch: list[str], flag: list[str], message: str
) -> None:
    assert main(["plan", *launch, *flag]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_moved_flag_in_a_launch_line_is_named_not_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """The weight-transfer start as its operator typed it (`--cmd`): it plans, the flag named as neutral."""
    cmd = ("vllm serve unsloth/gpt-oss-20b-BF16 --port 8001 --dtype bfloat16 --max-model-len 8192 --enforce-eager "
           "--gpu-memory-utilization 0.8 --weight-transfer-config '{\"backend\": \"nccl\"}'")  # fmt: skip
    base = ["--model", GPT_OSS_20B, "--engine-version", "0.23.0", "--gpu", "H100"]
    capacity, interval, lines = _capacity(capsys, [*base, "--cmd", cmd])
    assert (capacity, interval) == _capacity(capsys, [*WEIGHT_TRANSFER_START, "--engine-version", "0.23.0"])[:2]
    low, high = (int(n.replace(",", "")) for n in interval.split()[1:4:2])
    assert low <= LOGGED_TOKENS <= high


def test_a_running_server_with_an_unread_value_is_read_and_the_flag_named() -> None:
    """The live view reads what ran: `--load-format bitsandbytes` (4-bit weights at load, not modelled) is kept and
    named as not modelled, as an unmodelled flag is, never a refusal that loses the server's settings."""
    argv = ("vllm", "serve", "unsloth/llama-3-8b-bnb-4bit", "--quantization", "bitsandbytes", "--load-format",
            "bitsandbytes", "--profiler-config", '{"profiler": "torch"}')  # fmt: skip
    engine = _engine_from_server(ProcessRecord(pid=4243, parent_pid=1, cmdline=argv), "vllm")
    assert engine.settings_message is None and engine.settings is not None
    assert engine.settings.flags["load-format"] == "bitsandbytes"
    assert ignored_flags_note(engine.settings) == (
        "--cmd: kvtop ignored 1 flag of vLLM whose effect on memory it does not model: --load-format"
    )

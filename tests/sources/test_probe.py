"""The probe through its real child process, on host memory with an injected memory limit.

The three runs that import torch start together in one module fixture (about 6 s in all); the
others never import torch, so the file stays well under 20 s.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from kvtop.commands.probe import add_probe_arguments, render_probe_result, run_probe_command
from kvtop.domain.probe import (
    MeasuredPerToken,
    ProbeBuffer,
    ProbeOutcome,
    ProbeRequest,
    ProbeResult,
    mha_buffers,
)
from kvtop.domain.wording import GIB
from kvtop.sources.probe import WORKER_MODULE, _Ending, _parse, run_probe
from tests.data_paths import CONFIGS

MIB = 2**20


def _qwen25_7b_buffers() -> tuple[ProbeBuffer, ...]:
    """K and V per layer for Qwen2.5-7B at TP1, from its real config.json."""
    config = json.loads((CONFIGS / "Qwen--Qwen2.5-7B.json").read_text())
    head_dim = config["hidden_size"] // config["num_attention_heads"]
    return mha_buffers(config["num_hidden_layers"], config["num_key_value_heads"], head_dim, "bfloat16")


QWEN = _qwen25_7b_buffers()


def _cpu_request(**fields: object) -> ProbeRequest:
    values: dict[str, object] = {"device": "cpu", "buffers": QWEN, "chunk_tokens": 4096, "timeout_s": 60.0}
    values.update(fields)
    return ProbeRequest.model_validate(values)


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_probe_arguments(parser)
    return parser.parse_args(list(argv))


def _command(*argv: str, gpu_processes: tuple[str, ...] = ()) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_probe_command(_args(*argv), QWEN, 1, 0, gpu_processes, out, err=err)
    return code, out.getvalue(), err.getvalue()


def _shadow_torch(tmp_path: Path) -> dict[str, str]:
    """A child environment where `import torch` fails as it does when torch is not installed."""
    shadow = tmp_path / "no_torch" / "torch"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'torch'\")\n")
    return {"PYTHONPATH": str(shadow.parent)}


def _pid_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@dataclass(frozen=True)
class TorchRuns:
    """The three runs that import torch: two through the runner, one through the command."""

    target: ProbeResult
    fill: ProbeResult
    limit_hit: tuple[int, str, str]


# the tests reading `torch_runs` run on one xdist worker under `--dist loadgroup` (.ci/run): the three torch runs are
# started once per run, not once on each worker (the slowest-80 list had the fixture set up on both, 21 s + 19 s)
ONE_TORCH_RUN = pytest.mark.xdist_group("probe-torch-runs")


@pytest.fixture(scope="module")
def torch_runs(needs_torch: None) -> TorchRuns:
    """The runs that really allocate, started side by side (each pays for importing torch)."""
    with ThreadPoolExecutor(max_workers=3) as pool:
        target = pool.submit(run_probe, _cpu_request(target_tokens=20_000, memory_limit_bytes=4 * GIB))
        fill = pool.submit(
            run_probe, _cpu_request(fill=True, memory_limit_bytes=1 * GIB, reserve_bytes=256 * MIB)
        )
        limit_hit = pool.submit(
            _command, "--device", "cpu", "--memory-limit", "1GiB", "--tokens", "10000000", "--json"
        )
        return TorchRuns(target=target.result(), fill=fill.result(), limit_hit=limit_hit.result())


def test_qwen_buffers_predict_57344_bytes_per_token() -> None:
    assert sum(buffer.bytes_per_token for buffer in QWEN) == 57_344


@ONE_TORCH_RUN
def test_target_met_measures_the_predicted_bytes_and_releases(torch_runs: TorchRuns) -> None:
    result = torch_runs.target
    assert result.outcome is ProbeOutcome.OK, result.message
    assert result.tokens_allocated == 20_000
    assert result.bytes_allocated == 20_001 * 57_344  # the engine's size + page rows
    # on cpu the probe measures the bytes it allocated: 20,001 rows × 57,344 B ÷ 20,000 tokens = 57,346.87 → 57,347
    assert result.measured == MeasuredPerToken(total_bytes=20_001 * 57_344, tokens=20_000)
    assert result.measured.bytes_per_token == 57_347
    assert result.touched and result.released
    assert result.free_at_peak_bytes == 4 * GIB - 20_001 * 57_344
    assert _pid_gone(result.worker_pid or 0)


@ONE_TORCH_RUN
def test_fill_stays_inside_the_budget_and_gets_close(torch_runs: TorchRuns) -> None:
    result = torch_runs.fill
    usable_tokens = (768 * MIB) // 57_344  # 14,043
    assert result.outcome is ProbeOutcome.OK, result.message
    assert 0.8 * usable_tokens <= result.tokens_allocated <= usable_tokens
    assert result.bytes_allocated <= 768 * MIB
    assert result.free_at_peak_bytes is not None and result.free_at_peak_bytes >= 256 * MIB
    assert result.released


@ONE_TORCH_RUN
def test_limit_hit_is_target_not_met_exit_1_with_the_json_contract(torch_runs: TorchRuns) -> None:
    code, out, _ = torch_runs.limit_hit
    data = json.loads(out)
    assert code == 1
    assert data["outcome"] == "target_not_met" and data["target_met"] is False
    assert 0 < data["tokens_allocated"] <= GIB // 57_344
    assert data["bytes_allocated"] <= GIB
    for key in ("device", "measured", "bytes_per_token_predicted", "released", "seconds"):
        assert key in data
    assert data["schema"] == "kvtop.probe/2"
    assert "measured_bytes" not in data  # one figure, in `measured`; the contract's flat key is that same integer
    measured = data["measured"]
    assert data["bytes_per_token_measured"] == measured["bytes_per_token"]  # on cpu the bytes allocated: (tokens + the padding page) × 57,344 B
    assert measured["tokens"] == data["tokens_allocated"]
    assert measured["total_bytes"] == data["bytes_allocated"] == (data["tokens_allocated"] + 1) * 57_344
    total, tokens = measured["total_bytes"], measured["tokens"]
    assert isinstance(measured["bytes_per_token"], int) and abs(measured["bytes_per_token"] - total / tokens) <= 0.5
    assert data["device"] == "cpu" and data["released"] is True


@ONE_TORCH_RUN
def test_human_output_states_measured_predicted_and_release(torch_runs: TorchRuns) -> None:
    result = torch_runs.target
    text = render_probe_result(result)
    assert "20,000 allocated" in text
    assert "predicted 57,344" in text
    # on the CPU the probe measures the bytes it allocated: the 20,000 tokens and the padding page, 20,001 × 57,344 B
    # = 1,146,937,344 B, ÷ 20,000 = 57,346.87, shown as whole bytes with what was measured
    assert "measured 57,347 B (1,146,937,344 B ÷ 20,000 tokens)" in text
    # session 54's trial: "released yes (process exited (no free-memory reading to compare))" beside "after 2.00 GiB":
    # nothing outside read free memory after the CPU probe, and the 'after' figure is the probe's own reading
    assert "released       yes: its process exited; the 'after' figure is the probe's own reading before it exited" in text
    assert result.free_after_bytes is not None and "((" not in text


def test_bytes_per_token_measured_are_whole_bytes_with_their_total() -> None:
    """`probe` printed 'bytes/token measured 131,137.5': 4,297,113,600 B over 32,768 tokens is 131,137.5, a ratio;
    the byte figure is rounded to the nearest whole byte (a half up) and shown beside the total and the tokens."""
    measured = MeasuredPerToken(total_bytes=4_297_113_600, tokens=32_768)
    result = ProbeResult(
        outcome=ProbeOutcome.OK, message="", device="cuda:0", tokens_allocated=32_768,
        bytes_allocated=4_297_113_600, bytes_per_token_predicted=131_072, measured=measured,
    )  # fmt: skip
    assert measured.bytes_per_token == 131_138
    assert result.describe_measured() == "131,138 B (4,297,113,600 B ÷ 32,768 tokens)"
    assert "bytes/token    measured 131,138 B (4,297,113,600 B ÷ 32,768 tokens) · predicted" in render_probe_result(result)
    # the delta reads the same whole figure: 131,138 ÷ 131,072 − 1 = 66 ÷ 131,072 = +0.0504 % (shown +0.05%)
    assert result.measured_vs_predicted == 66 / 131_072
    assert result.measured_vs_predicted_said == "+0.05%" and "(+0.05%, padding page included)" in render_probe_result(result)
    assert result.to_json_dict()["measured"] == {
        "total_bytes": 4_297_113_600, "tokens": 32_768, "bytes_per_token": 131_138,
    }  # fmt: skip


def test_a_measurement_over_other_tokens_than_allocated_is_refused() -> None:
    """The measured figure's tokens are the tokens allocated: a result that says otherwise is not built."""
    with pytest.raises(ValueError, match="measured over 100 tokens, but 200 were allocated"):
        ProbeResult(
            outcome=ProbeOutcome.OK, message="", device="cpu", tokens_allocated=200,
            measured=MeasuredPerToken(total_bytes=100 * 4_096, tokens=100),
        )  # fmt: skip


def test_timeout_kills_the_child() -> None:
    started = time.monotonic()
    result = run_probe(
        _cpu_request(target_tokens=1000, memory_limit_bytes=GIB),
        timeout_s=1.0,
        extra_env={"KVTOP_PROBE_TEST_SLEEP_S": "30"},
    )
    assert result.outcome is ProbeOutcome.TIMEOUT
    assert time.monotonic() - started < 25.0  # the child sleeps 30 s: a hang guard, not a speed target
    assert result.worker_pid is not None and _pid_gone(result.worker_pid)


def test_cancel_event_kills_the_child() -> None:
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    result = run_probe(
        _cpu_request(target_tokens=1000, memory_limit_bytes=GIB),
        cancel=cancel,
        extra_env={"KVTOP_PROBE_TEST_SLEEP_S": "30"},
    )
    assert result.outcome is ProbeOutcome.CANCELLED
    assert result.worker_pid is not None and _pid_gone(result.worker_pid)


def test_killing_the_parent_takes_the_worker_with_it() -> None:
    parent_code = (
        "import sys; from kvtop.domain.probe import ProbeRequest; from kvtop.sources.probe import run_probe; "
        "run_probe(ProbeRequest.model_validate_json(sys.argv[1]), extra_env={'KVTOP_PROBE_TEST_SLEEP_S': '30'})"
    )
    request = _cpu_request(target_tokens=1000, memory_limit_bytes=GIB).model_dump_json()
    parent = psutil.Popen([sys.executable, "-c", parent_code, request])
    deadline = time.monotonic() + 10
    while not parent.children() and time.monotonic() < deadline:
        time.sleep(0.05)
    (worker,) = parent.children()
    time.sleep(0.5)  # let the worker reach its sleep, past the PR_SET_PDEATHSIG call
    parent.kill()
    parent.wait(timeout=5)
    gone, alive = psutil.wait_procs([worker], timeout=5)
    assert worker in gone and not alive


def _worker(stdin: str) -> ProbeResult:
    done = subprocess.run(
        [sys.executable, "-m", WORKER_MODULE], input=stdin, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0
    return ProbeResult.model_validate_json(done.stdout)


def test_malformed_json_is_bad_request() -> None:
    result = _worker("{not json")
    assert result.outcome is ProbeOutcome.BAD_REQUEST


def test_negative_tokens_in_the_request_is_bad_request() -> None:
    request = _cpu_request(target_tokens=1000, memory_limit_bytes=GIB).model_dump(mode="json")
    request["target_tokens"] = -5
    result = _worker(json.dumps(request))
    assert result.outcome is ProbeOutcome.BAD_REQUEST
    assert "target_tokens" in result.message


def test_negative_tokens_on_the_command_line_is_exit_2() -> None:
    code, _, err = _command("--device", "cpu", "--memory-limit", "1GiB", "--tokens", "-5")
    assert code == 2
    assert "--tokens" in err


def test_torch_missing_is_a_named_result(tmp_path: Path) -> None:
    result = run_probe(
        _cpu_request(target_tokens=1000, memory_limit_bytes=GIB), extra_env=_shadow_torch(tmp_path)
    )
    assert result.outcome is ProbeOutcome.TORCH_MISSING
    assert "pip install" in result.message


def test_other_gpu_processes_refuse_without_yes() -> None:
    code, _, err = _command("--gpu", "0", "--tokens", "1000", gpu_processes=("pid 812 sglang 76.1 GiB",))
    assert code == 2
    assert "--yes" in err and "pid 812" in err


def test_read_only_refuses() -> None:
    code, _, err = _command("--device", "cpu", "--memory-limit", "1GiB", "--fill", "--read-only")
    assert code == 2
    assert "read-only" in err


@pytest.mark.parametrize(
    ("argv", "outcome", "line"),
    [
        (("--device", "cpu", "--tokens", "5"), "bad_request",
         "kvtop: error: --memory-limit: --device cpu needs --memory-limit SIZE (the stand-in for free memory)\n"),
        (("--device", "cpu", "--memory-limit", "1GiB", "--fill", "--read-only"), "refused",
         "kvtop: error: the probe allocates memory and is disabled by --read-only\n"),
    ],
)  # fmt: skip
def test_a_probe_that_does_not_run_says_so_as_every_command_does(
    argv: tuple[str, ...], outcome: str, line: str
) -> None:
    """An operator trial: probe said "kvtop probe: bad_request: …" where every other command says "kvtop: error:
    …". One form on stderr; --json still names the outcome, nothing on stderr."""
    code, out, err = _command(*argv)
    assert (code, out, err) == (2, "", line)
    code, out, err = _command(*argv, "--json")
    assert (code, err, json.loads(out)["outcome"]) == (2, "", outcome)


def _cuda_request() -> ProbeRequest:
    return ProbeRequest(
        device="cuda:0", buffers=QWEN, target_tokens=1000, chunk_tokens=1000, reserve_bytes=2 * GIB
    )


def test_free_memory_that_does_not_come_back_is_reported_loudly(tmp_path: Path) -> None:
    readings = iter([80 * GIB] + [70 * GIB] * 1000)  # 10 GiB stays missing after the child exits
    result = run_probe(
        _cuda_request(),
        free_memory_reader=lambda: next(readings),
        extra_env=_shadow_torch(tmp_path),
        release_settle_s=0.5,
    )
    assert result.released is False
    assert result.free_after_exit_bytes == 70 * GIB
    assert "MEMORY NOT RELEASED" in result.message


def test_free_memory_that_comes_back_counts_as_released(tmp_path: Path) -> None:
    result = run_probe(
        _cuda_request(), free_memory_reader=lambda: 80 * GIB, extra_env=_shadow_torch(tmp_path)
    )
    assert result.released is True
    assert result.driver_free_before_bytes == 80 * GIB
    assert result.free_after_exit_bytes == 80 * GIB


def test_a_crashed_workers_last_stderr_line_is_shown_redacted() -> None:
    """The one line from outside a crash result quotes (the child's stderr) shows no secret, like every other:
    both keys after `--api-key` are masked, the rest of the line is kept."""
    ending = _Ending(returncode=1, killed_for=None, stdout="",
                     stderr="Traceback …\nValueError: bad --api-key alphaLEAK1 bravoLEAK2 --port 9000\n")  # fmt: skip
    result = _parse(_cuda_request(), ending, 60.0)
    assert result.outcome is ProbeOutcome.WORKER_CRASHED
    assert result.message == (
        "the probe worker exited with code 1 without a result: ValueError: bad --api-key *** *** --port 9000"
    )


@pytest.mark.parametrize(("argv", "device"), [(("--tokens", "5"), "cuda"), (("--gpu", "1"), "cuda:1")])
def test_an_unrun_probes_json_names_the_device_it_was_asked_for(argv: tuple[str, ...], device: str) -> None:
    """An operator trial: `kvtop probe --model M --json` without --gpu said `"device": "cuda:None"`."""
    code, out, _ = _command(*argv, "--json")
    assert code == 2 and json.loads(out)["device"] == device


@pytest.mark.parametrize(
    ("limit", "line"),
    [
        ("0", "kvtop: error: --memory-limit: must be a positive size, the stand-in for free memory (got '0')\n"),
        ("0.5", "kvtop: error: --memory-limit: must be a positive size, the stand-in for free memory (got '0.5')\n"),
        ("-1GiB", "kvtop: error: --memory-limit: a size cannot be negative (got '-1GiB')\n"),
    ],
)  # fmt: skip
def test_a_memory_limit_that_leaves_no_memory_is_refused_naming_the_flag(limit: str, line: str) -> None:
    """An operator trial: `--memory-limit 0` started a worker that found room for 0 of 5 tokens and exited 1
    ("target not met"), a measurement of nothing; it is a wrong flag (exit 2) and says which."""
    code, out, err = _command("--device", "cpu", f"--memory-limit={limit}", "--tokens", "5")
    assert (code, out, err) == (2, "", line)

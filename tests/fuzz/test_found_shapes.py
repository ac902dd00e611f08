"""Each shape the input fuzz suite found (tests/fuzz/, benchmarks/fuzz_inputs.py), kept as a regression
test at the door where it was fixed: what the input was, and the one line or named state it gives now.

Before the fix each of these was a traceback or a hang (noted per test); the expected values come from
the inputs themselves (the log's own numbers, the page's metric names), never from the code under test.
"""

from __future__ import annotations

import gzip
import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from kvtop.domain.observe import EndpointState
from kvtop.sources.engine_http import fetch_engine_live
from kvtop.sources.engine_logs import read_engine_log
from tests.data_paths import CASES, SAMPLES
from tests.fuzz.kinds_cli import ALIAS_BOMB
from tests.fuzz.runner import Outcome, run_cli, run_main
from tests.sources.test_lmdeploy_sources import METRICS_TWO_DP
from tests.sources.test_trtllm_sources import ITERATION_STATS

ROOT = Path(__file__).resolve().parents[2]
VLLM_PAGE = (SAMPLES / "vllm_metrics/v1-nim-qwen3-vl-235b-awq-tp2-grep-fragment.txt").read_text()


def one_line(*argv: str) -> str:
    """The command's only stderr line, asserting exit 2 and nothing on stdout."""
    failed, code, out, err = run_main(argv)
    assert failed is None, err
    assert (code, out, err.count("\n")) == (2, "", 1), (code, out[:200], err)
    return err.strip()


# --- the CLI's own line ---------------------------------------------------------------------------------


def test_an_error_quoting_a_line_separator_stays_one_line() -> None:
    """Was two lines: the message quoted the argument, whose U+2028 splits a line for `splitlines`."""
    line = one_line("plan", "--model", "no\u2028such.json")
    assert line == "kvtop: error: --model: config file not found: no\\u2028such.json"  # the file once (session 69)


def test_a_model_path_of_a_user_with_no_home_names_model() -> None:
    """Was `RuntimeError: Could not determine home directory.` from `Path.expanduser`."""
    line = one_line("plan", "--model", "~no-such-user-kvtop/config.json")
    assert line.startswith("kvtop: error: --model: not a path kvtop can read (no such user's home)")


@pytest.mark.parametrize("flag", ["--free-after-load", "--weights-memory", "--free-memory"])
def test_a_size_of_400_digits_names_its_flag(flag: str) -> None:
    """Was `OverflowError: cannot convert float infinity to integer` in `parse_size`."""
    line = one_line("plan", "--model", "llama-3.1-8b", flag, "9" * 400)
    assert line.startswith(f"kvtop: error: {flag}: '999") and "larger than any memory (at most 1 EiB)" in line


# --- TensorRT-LLM's --extra_llm_api_options YAML ---------------------------------------------------------


@pytest.mark.parametrize(
    ("yaml", "says"),
    [
        (ALIAS_BOMB, "expands to more than 10,000 values or 32 levels"),  # was a hang (10^8 values flattened)
        (b"kv_cache_config: &a {k: *a}\n", "expands to more than 10,000 values"),  # was a RecursionError
        (b"[" * 5000 + b"]" * 5000, "nested too deeply"),  # was a RecursionError inside PyYAML
        (b"x: " + b"9" * 5000 + b"\n", "a number of thousands of digits"),  # was Python's int digit limit
    ],
    ids=["alias-bomb", "holds-itself", "deep", "digits"],
)
def test_an_options_yaml_that_never_ends_is_one_line(tmp_path: Path, yaml: bytes, says: str) -> None:
    options = tmp_path / "options.yaml"
    options.write_bytes(yaml)
    argv = ["plan", "--model", "llama-3.1-8b", "--engine", "trtllm", "--extra_llm_api_options", str(options)]
    outcome, line = run_cli(argv, watchdog_s=10)
    assert outcome is Outcome.CLEAN_ERROR, line
    assert (
        line.startswith("kvtop: error: --extra_llm_api_options: ") and says in line and str(options) in line
    )


# --- engine logs -----------------------------------------------------------------------------------------


def test_a_sizing_line_pasted_20000_times_is_read_once_per_end(tmp_path: Path) -> None:
    """Was 5-10 s per input (a hang under load): every copy became a pool the explanation checked."""
    lines = (CASES / "trtllm/trtllm-4275-llama31-8b-fp8kv-rtx5090-v019/engine.log").read_text().splitlines()
    allocation = next(line for line in lines if "Allocated" in line)
    assert allocation.endswith("(263008)")  # the log's own pool: 263,008 tokens
    repeated = tmp_path / "engine.log"
    repeated.write_text("\n".join([allocation] * 20_000 + lines))
    log = read_engine_log(repeated)
    kept = [a for rank in log.records for a in getattr(rank, "allocations", ())]
    assert 2 <= len(kept) <= 64
    outcome, detail = run_cli(
        ["explain", str(repeated), "--model", "llama-3.1-8b", "--json"], watchdog_s=10, json_key="verdict"
    )
    assert outcome is Outcome.OK, detail


# --- engine endpoints ------------------------------------------------------------------------------------


def live(engine: str, pages: dict[str, bytes], **headers: dict[str, str]):  # type: ignore[no-untyped-def]
    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path not in pages:
            return httpx.Response(404, text="not found")
        return httpx.Response(200, content=pages[request.url.path], headers=headers.get(request.url.path, {}))

    client = httpx.Client(transport=httpx.MockTransport(answer))
    return fetch_engine_live(engine, "127.0.0.1", 8000, client=client)  # type: ignore[arg-type]


def test_a_negative_count_is_a_bad_payload_naming_the_metric() -> None:
    """Was `running_requests = -3` passed on as a figure (and a negative block size from a label)."""
    page = VLLM_PAGE + 'vllm:num_requests_running{engine="0",model_name="m"} -3.0\n'
    result = live("vllm", {"/metrics": page.encode()})
    assert result.state is EndpointState.BAD_PAYLOAD
    assert (
        result.message
        == "http://127.0.0.1:8000: vllm:num_requests_running = -3: not a count, size or share an engine reports"
    )


def test_an_infinite_usage_is_a_bad_payload_and_a_nan_one_is_absent() -> None:
    """Was `kv_usage_fraction = inf` passed on; `int(inf)` and `int(nan)` raised where a count was read."""
    infinite = METRICS_TWO_DP.replace("} 0.25\n", "} +Inf\n")
    assert live("lmdeploy", {"/metrics": infinite.encode()}).message.endswith(
        "lmdeploy:gpu_cache_usage_perc = inf: not a count, size or share an engine reports"
    )
    absent = live("lmdeploy", {"/metrics": METRICS_TWO_DP.replace("} 0.25\n", "} NaN\n").encode()})
    assert absent.state is EndpointState.OK and absent.kv_usage_fraction == 0.5  # the other DP rank's 0.5


def test_labels_that_are_no_numbers_are_unknown() -> None:
    """Was `ValueError: cannot convert float NaN to integer` (num_gpu_blocks="NaN") and a negative block size."""
    page = VLLM_PAGE.replace('num_gpu_blocks="34470"', 'num_gpu_blocks="NaN"').replace(
        'block_size="16"', 'block_size="-16"'
    )
    result = live("vllm", {"/metrics": page.encode()})
    assert result.state is EndpointState.OK
    assert (result.num_gpu_blocks, result.block_size, result.token_capacity) == (None, None, 551520)


@pytest.mark.parametrize(
    "body",
    [
        b"# TYPE vllm:x gauge\nvllm:x{" + b"x" * 1_000_000 + b"\r\n",
        b"\xff\xfe\x00vllm:\r\x1b[31m",
        b"vllm:a 1\n" + b"9" * 5000,
    ],
    ids=["megabyte-line", "binary", "5000-digits"],
)
def test_a_page_kvtop_cannot_parse_is_one_short_line(body: bytes) -> None:
    """Was a message quoting the page: a megabyte, carriage returns, escape codes."""
    result = live("vllm", {"/metrics": body})
    assert result.state is EndpointState.BAD_PAYLOAD
    message = result.message or ""
    assert message.startswith("http://127.0.0.1:8000/metrics ") and len(message) <= 300
    assert message.isprintable()


def test_a_body_that_claims_gzip_is_a_bad_payload() -> None:
    result = live("vllm", {"/metrics": VLLM_PAGE.encode()}, **{"/metrics": {"content-encoding": "gzip"}})
    assert result.state is EndpointState.BAD_PAYLOAD and "not HTTP" in (result.message or "")
    whole = live(
        "vllm", {"/metrics": gzip.compress(VLLM_PAGE.encode())}, **{"/metrics": {"content-encoding": "gzip"}}
    )
    assert whole.token_capacity == 551520  # a real gzip answer still reads


def test_sglang_server_info_of_the_wrong_shapes_is_read_for_what_it_holds() -> None:
    """Was a pydantic error (a version that is an object) and `'int' object is not iterable` (internal_states)."""
    info = json.loads(
        (
            SAMPLES / "sglang_server_info" / "sglang-0.5.9-deepseek-r1-tp16-2node-pd-prefill-trimmed.json"
        ).read_text()
    )
    result = live(
        "sglang",
        {"/get_server_info": json.dumps({**info, "version": {"v": 1}, "internal_states": 7}).encode()},
    )
    assert result.version is None and result.token_capacity == info["max_total_num_tokens"]


def test_trtllm_stats_with_a_list_for_a_rank_and_json_nested_too_deep() -> None:
    """`attentionDpRank: [0]` was an unhashable dict key; 100,000 nested lists a RecursionError in json."""
    stats = [{**ITERATION_STATS[-1], "attentionDpRank": [0]}]
    result = live("trtllm", {"/metrics": json.dumps(stats).encode()})
    assert (
        result.state is EndpointState.OK
        and result.num_gpu_blocks == 101256
        and result.ranks[0].dp_rank is None
    )
    deep = live("trtllm", {"/metrics": b"[" * 100_000 + b"]" * 100_000})
    assert deep.state is EndpointState.BAD_PAYLOAD and deep.message.endswith("/metrics is not JSON")


def test_a_page_past_32_mib_is_refused() -> None:
    result = live("vllm", {"/metrics": VLLM_PAGE.encode() + b"# " + b"x" * (33 << 20) + b"\n"})
    assert result.state is EndpointState.BAD_PAYLOAD and "more than 32 MiB" in (result.message or "")


def test_a_server_that_drips_bytes_is_late_within_the_deadline() -> None:
    """httpx's timeout is per read: a byte every 0.1 s never trips a 0.3 s read timeout. The whole answer
    has 3 × 0.3 s; the reader gives up soon after (before, it read for as long as the server went on)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]

    def drip() -> None:
        conn, _ = server.accept()
        conn.recv(4096)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
        try:
            for _ in range(1200):  # 120 s of a byte every 0.1 s
                conn.sendall(b"#")
                time.sleep(0.1)
        except OSError:
            pass
        conn.close()

    threading.Thread(target=drip, daemon=True).start()
    began = time.monotonic()
    result = fetch_engine_live("vllm", "127.0.0.1", port, timeout_s=0.3)
    took = time.monotonic() - began
    server.close()
    assert result.state is EndpointState.TIMEOUT and took < 60, (result.message, took)  # a hang guard, not a speed target


# --- the Prometheus flags --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (
            ["--prometheus", "http://[::1"],
            "--prometheus: not a URL kvtop can send to (Invalid IPv6 URL)",
        ),
        (
            ["--prometheus", "http://prometheus.test:99999"],
            "--prometheus: not a URL kvtop can send to (Port",
        ),
        (
            ["--prometheus", "http://prometheus.test:port"],
            "--prometheus: not a URL kvtop can send to",
        ),
        (
            ["--prometheus", "http://prometheus.test", "--timeout", "nan"],
            "--timeout: must be a positive",
        ),
        (
            ["--prometheus", "http://prometheus.test", "--ca-file", "/dev/zero"],
            "--ca-file: '/dev/zero' is not a regular file",
        ),
    ],
    ids=["ipv6", "port-range", "port-word", "timeout-nan", "ca-device"],
)
def test_a_prometheus_flag_kvtop_cannot_use_is_one_line(argv: list[str], says: str) -> None:
    """Were `ValueError: Invalid IPv6 URL`, `Port out of range`, `Port could not be cast` (from the client)."""
    line = one_line("cluster", *argv, "--json")
    assert line.startswith("kvtop: error: ") and says in line


def test_a_ca_file_that_is_no_certificate_is_one_line_from_the_real_command(tmp_path: Path) -> None:
    """Was `ssl.SSLError: [X509: NO_CERTIFICATE_OR_CRL_FOUND]` from httpx's client, as the issue quotes."""
    bundle = tmp_path / "ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kvtop",
            "cluster",
            "--prometheus",
            "https://prometheus.test",
            "--ca-file",
            str(bundle),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
    assert done.stderr.startswith(
        f"kvtop: error: --ca-file: '{bundle}' holds no CA certificate TLS can load"
    )


@pytest.mark.parametrize(
    "token", ["tökén".encode(), b"\xff\xfe", b"two words"], ids=["non-ascii", "binary", "space"]
)
def test_a_token_no_header_can_carry_is_one_line_that_never_shows_it(tmp_path: Path, token: bytes) -> None:
    """Were `UnicodeDecodeError` (reading the file) and `UnicodeEncodeError` (the Authorization header)."""
    path = tmp_path / "token"
    path.write_bytes(token)
    line = one_line("cluster", "--prometheus", "http://prometheus.test", "--token-file", str(path))
    assert line.startswith("kvtop: error: --token-file: ")
    secret = token.decode(errors="ignore")
    assert not secret or secret not in line


def test_a_token_in_the_environment_no_header_can_carry_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVTOP_PROMETHEUS_TOKEN", "sëcret")
    line = one_line("cluster", "--prometheus", "http://prometheus.test")
    assert (
        line.startswith("kvtop: error: the variable KVTOP_PROMETHEUS_TOKEN holds a token with")
        and "sëcret" not in line
    )


# --- Prometheus answers (typed at the door in kvtop/sources/prometheus.py: the lead's file) ---------------


def _answer(query_name: str, change) -> tuple[Outcome, str]:  # type: ignore[no-untyped-def]
    """`kvtop cluster --json` against the fake Prometheus of the fuzz suite, one query's answer changed."""
    from kvtop.sources.prometheus import ALL_QUERIES
    from kvtop.sources.prometheus_gpus import GPU_LIST_QUERIES
    from tests.fuzz.kinds_http import PrometheusInput, prometheus_answers

    query = ALL_QUERIES[query_name]
    gpus = ("--gpus",) if query_name in GPU_LIST_QUERIES else ()  # only `--gpus` asks for every GPU's series
    document = json.loads(prometheus_answers()[query])
    change(document)
    item = PrometheusInput(
        "prometheus",
        ("cluster", "--prometheus", "http://prometheus.test:9090", "--json", *gpus),
        ((query, (200, json.dumps(document).encode(), ())),),
        (),
        (),
    )
    return item.run(Path(__import__("tempfile").mkdtemp()))


def _set(path: str, value: object):  # type: ignore[no-untyped-def]
    def change(document: dict) -> None:  # type: ignore[type-arg]
        *parents, last = path.split(".")
        node: object = document
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]  # type: ignore[index]
        if isinstance(node, list):
            node[int(last)] = value
        elif value is KeyError:
            del node[last]  # type: ignore[attr-defined]
        else:
            node[last] = value  # type: ignore[index]

    return change


@pytest.mark.parametrize(
    ("query", "change"),
    [
        (
            "node",
            _set("data", [{"resultType": "vector"}]),
        ),  # AttributeError: 'list' object has no attribute 'get'
        (
            "dcgm",
            _set("data.result.0.value.1", "+Inf"),
        ),  # OverflowError: cannot convert float infinity to integer
        (
            "up",
            _set("data.result.0.metric.instance", ["10.0.0.1:9400"]),
        ),  # TypeError: unhashable type: 'list'
        ("dcgm", _set("data.result.0.metric.__name__", KeyError)),  # KeyError: '__name__'
        # the same two shapes in the refresh's DCGM sums (every GPU's DCGM series are read only with --gpus)
        ("dcgm_memory", _set("data.result.0.value.1", "+Inf")),
        ("dcgm_memory", _set("data.result.0.metric.__name__", KeyError)),
    ],
    ids=["data-list", "value-inf", "label-list", "no-name", "sums-value-inf", "sums-no-name"],
)
def test_a_prometheus_answer_of_the_wrong_shape_is_one_line(query: str, change) -> None:  # type: ignore[no-untyped-def]
    outcome, detail = _answer(query, change)
    assert outcome in (Outcome.OK, Outcome.CLEAN_ERROR), detail

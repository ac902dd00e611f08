"""Fuzzed answers from the network, through the readers the commands use:

- `endpoint`: each engine's live reader (`kvtop/sources/engines/<id>/endpoint.py`, via
  `fetch_engine_live`) on an httpx fake transport serving the real pages of tests/data/samples and
  the pages the engine tests use, mutated (lines, numbers, JSON fields, status codes, bodies that
  are binary, truncated or falsely gzip, transport errors). The contract: an `EngineLive` whose
  state is named, each message one line, counts finite and never negative — never an exception;
- `prometheus`: `kvtop cluster --prometheus URL --json` against a fake Prometheus API serving the
  recorded DCGM, engine and kvtop exporter pages (tests/sources/fake_prometheus.py), its JSON answers
  mutated, and the flags around it (the URL, --timeout, --stale-after, --token-file, --ca-file).
  The client is built as the command builds it (TLS context and all); only `HTTPTransport`'s request
  is answered by the fake.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any
from unittest import mock

import certifi
import httpx
from hypothesis import strategies as st

from kvtop.domain.observe import EndpointState, EngineLive
from tests.data_paths import SAMPLES
from tests.fuzz.atoms import JUNK_BYTES, NUMBER_TEXT, UNICODE, damage_bytes, dumps, mutate_document
from tests.fuzz.runner import Outcome, clear, guarded, run_cli
from tests.fuzz.text import mangled_text

Page = tuple[int, bytes, tuple[tuple[str, str], ...]]  # status, body, headers
ERRORS: dict[str, Callable[[httpx.Request], Exception]] = {
    "connect": lambda r: httpx.ConnectError("refused", request=r),
    "timeout": lambda r: httpx.ReadTimeout("slow", request=r),
    "protocol": lambda r: httpx.RemoteProtocolError("garbage", request=r),
    "reset": lambda r: httpx.ReadError("reset", request=r),
}


def _sample(relative: str) -> str:
    return (SAMPLES / relative).read_text()


def _engine_pages() -> dict[str, list[dict[str, tuple[str, str]]]]:
    """engine -> the page sets it is served (path -> (kind, text)), from the recorded samples and the tests."""
    from tests.sources.test_lmdeploy_sources import METRICS_TWO_DP
    from tests.sources.test_trtllm_sources import ITERATION_STATS, PROMETHEUS, PROMETHEUS_1_1

    info = _sample("sglang_server_info/sglang-0.5.9-deepseek-r1-tp16-2node-pd-prefill-trimmed.json")
    sglang = [
        {
            "/metrics": ("text", (SAMPLES / "sglang_metrics" / p.name).read_text()),
            "/get_server_info": ("json", info),
        }
        for p in sorted((SAMPLES / "sglang_metrics").glob("*.txt"))
    ]
    sglang.append({"/server_info": ("json", info)})
    vllm = [{"/metrics": ("text", p.read_text())} for p in sorted((SAMPLES / "vllm_metrics").glob("*.txt"))]
    trtllm_version = ("json", json.dumps({"version": "1.1.0rc3"}))
    trtllm = [
        {"/prometheus/metrics": ("text", PROMETHEUS), "/version": trtllm_version},
        {
            "/prometheus/metrics": ("text", PROMETHEUS_1_1),
            "/metrics": ("json", json.dumps(ITERATION_STATS)),
            "/version": trtllm_version,
        },
        {"/metrics": ("json", json.dumps(ITERATION_STATS))},
    ]
    return {
        "sglang": sglang,
        "vllm": vllm,
        "lmdeploy": [{"/metrics": ("text", METRICS_TWO_DP)}],
        "trtllm": trtllm,
    }


@lru_cache(maxsize=1)
def engine_pages() -> dict[str, list[dict[str, tuple[str, str]]]]:
    return _engine_pages()


@lru_cache(maxsize=1)
def _metric_lines() -> tuple[str, ...]:
    return tuple(
        sorted(
            {
                line
                for sets in engine_pages().values()
                for pages in sets
                for kind, text in pages.values()
                if kind == "text"
                for line in text.splitlines()
            }
        )
    )


@st.composite
def _mutated_page(draw: st.DrawFn, kind: str, text: str) -> tuple[Page | str, str]:
    """One page, mutated: its text or JSON, its status, its encoding, or a transport error instead."""
    how = draw(
        st.sampled_from(["body", "body", "body", "body", "status", "error", "binary", "gzip", "empty"])
    )
    if how == "status":
        status = draw(st.sampled_from([204, 301, 400, 401, 404, 429, 500, 503, 999]))
        return (status, text.encode(), ()), f"HTTP {status}"
    if how == "error":
        name = draw(st.sampled_from(sorted(ERRORS)))
        return name, f"transport error {name}"
    if how == "binary":
        return (200, draw(st.binary(max_size=64)) + b"\xff\xfe\x00", ()), "binary body"
    if how == "gzip":
        body = text.encode() if draw(st.booleans()) else gzip.compress(text.encode())[:-8]
        return (200, body, (("content-encoding", "gzip"),)), "content-encoding gzip, body not (whole) gzip"
    if how == "empty":
        return (200, b"", ()), "empty body"
    if kind == "json":
        doc, what = draw(
            mutate_document(
                json.loads(text),
                (
                    "version",
                    "max_total_num_tokens",
                    "internal_states",
                    "memory_usage",
                    "kvCacheStats",
                    "maxNumBlocks",
                    "tokensPerBlock",
                    "usedNumBlocks",
                    "page_size",
                    "mem_fraction_static",
                    "attentionDpRank",
                    "numActiveRequests",
                ),
            )
        )
        raw = dumps(doc)
        if draw(st.integers(0, 4)) == 0:
            raw, more = draw(damage_bytes(raw))
            what = f"{what}; {more}"
        return (200, raw, ()), what
    raw, done = draw(mangled_text(text, _metric_lines()))
    return (200, raw, ()), "; ".join(done)


def _answer(pages: dict[str, Page | str]) -> Callable[[httpx.Request], httpx.Response]:
    def answer(request: httpx.Request) -> httpx.Response:
        page = pages.get(request.url.path, (404, b"not found", ()))
        if isinstance(page, str):
            raise ERRORS[page](request)
        status, body, headers = page
        return httpx.Response(status, content=body, headers=list(headers))

    return answer


def _one_line(text: str | None) -> bool:
    return (
        text is not None
        and text.strip() != ""
        and "\n" not in text
        and "\r" not in text
        and len(text) <= 2000
    )


def check_live(live: Any) -> str:
    """'' when `live` keeps the endpoint contract, else what it broke."""
    if not isinstance(live, EngineLive):
        return f"not an EngineLive: {type(live).__name__}"
    if live.state is not EndpointState.OK and not _one_line(live.message):
        return f"state {live.state.value} without a one-line message: {str(live.message)[:300]!r}"
    for note in live.notes:
        if not _one_line(note):
            return f"a note that is not one line: {note[:300]!r}"
    for holder in (live, *live.ranks):
        for name in (
            "token_capacity",
            "num_gpu_blocks",
            "block_size",
            "used_tokens",
            "running_requests",
            "waiting_requests",
            "weight_bytes",
            "kv_cache_bytes",
            "kv_usage_fraction",
            "memory_fraction",
        ):
            value = getattr(holder, name, None)
            if value is not None and (not math.isfinite(value) or value < 0):
                return f"{name} = {value!r}: not a finite, non-negative figure"
    return ""


@dataclass(frozen=True)
class EndpointInput:
    kind: str
    engine: str
    pages: tuple[tuple[str, Page | str], ...]
    done: tuple[str, ...]

    def run(self, folder: Path, watchdog_s: int = 10) -> tuple[Outcome, str]:
        from kvtop.sources.engine_http import fetch_engine_live

        client = httpx.Client(transport=httpx.MockTransport(_answer(dict(self.pages))))
        try:
            live, failed, detail = guarded(
                lambda: fetch_engine_live(self.engine, "127.0.0.1", 8000, client=client, timeout_s=1.0),
                watchdog_s,  # type: ignore[arg-type]
            )
        finally:
            client.close()
        if failed is not None:
            return failed, detail
        broken = check_live(live)
        if broken:
            return Outcome.TRACEBACK, broken
        assert isinstance(live, EngineLive)
        return (
            (Outcome.OK, "")
            if live.state is EndpointState.OK
            else (Outcome.CLEAN_ERROR, f"{live.state.value}: {live.message}")
        )

    def describe(self) -> str:
        return f"endpoint {self.engine}: {'; '.join(self.done)[:500]}"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """What hypothesis shows of a failing example: what was done, not the megabytes it made."""
        printer.text(self.describe())


@st.composite
def endpoint_answers(draw: st.DrawFn) -> EndpointInput:
    engine = draw(st.sampled_from(sorted(engine_pages())))
    chosen = draw(st.sampled_from(engine_pages()[engine]))
    pages: dict[str, Page | str] = {path: (200, text.encode(), ()) for path, (_, text) in chosen.items()}
    done = [f"pages {sorted(chosen)}"]
    paths = sorted(chosen)
    for path in draw(st.lists(st.sampled_from(paths), min_size=1, max_size=len(paths), unique=True)):
        kind, text = chosen[path]
        pages[path], what = draw(_mutated_page(kind, text))
        done.append(f"{path}: {what}")
    return EndpointInput("endpoint", engine, tuple(sorted(pages.items())), tuple(done))


# --- Prometheus answers through `kvtop cluster --prometheus URL --json` -------------------------------


@lru_cache(maxsize=1)
def prometheus_answers() -> dict[str, str]:
    """The JSON answer of every query kvtop sends (`--gpus`' three too), from a fake Prometheus scraping the
    recorded pages."""
    from kvtop.sources.prometheus import ALL_QUERIES
    from tests.sources.fake_prometheus import FakePrometheus, Target
    from tests.sources.test_prometheus import kvtop_page

    targets = [
        Target("dcgm", f"10.0.0.{n}:9400", p.read_text())
        for n, p in enumerate(sorted((SAMPLES / "dcgm_metrics").glob("*.txt")), 1)
    ]
    targets += [
        Target("sglang", "10.0.0.1:30000", _sample("sglang_metrics/sglang-docs-llama3.1-8b-2024.txt")),
        Target(
            "vllm", "10.0.0.2:8000", _sample("vllm_metrics/v1-nim-qwen3-vl-235b-awq-tp2-grep-fragment.txt")
        ),
        Target("kvtop", "10.0.0.9:9401", kvtop_page("node-k")),
        Target("kvtop", "10.0.0.8:9401", "", up=False),
    ]
    fake = FakePrometheus(targets)
    out = {}
    for _key, expr in ALL_QUERIES.items():
        response = fake.handler(
            httpx.Request("GET", "http://prometheus.test/api/v1/query", params={"query": expr})
        )
        out[expr] = response.content.decode()
    return out


PROMETHEUS_KEYS = (
    "status",
    "data",
    "resultType",
    "result",
    "metric",
    "value",
    "__name__",
    "instance",
    "job",
    "Hostname",
    "hostname",
    "gpu",
    "node",
    "engine",
    "source",
    "severity",
    "UUID",
    "modelName",
)
SAMPLE_VALUES = NUMBER_TEXT | st.sampled_from(
    ["NaN", "+Inf", "-Inf", "1e400", "-5", "0x10", "", "１２", "1e19"]
)
URLS = st.sampled_from(
    [
        "http://[::1",
        "http://[::1]:9090",
        "http://prometheus.test:99999",
        "http://prometheus.test:port",
        "ftp://x",
        "http://",
        "http:///api",
        "https://user:pw@prometheus.test",
        "http://模型:9090",
        "http://h\x00st",
        "http://prometheus.test/" + "a" * 70_000,
        "http://prometheus.test/%zz",
        " http://prometheus.test",
        "HTTP://PROMETHEUS.TEST",
        "prometheus.test:9090",
        "",
        "http://[zz::1]/",
        "https://prometheus.test:-1",
    ]
)
TOKENS = st.sampled_from(
    [b"", b"\n", b"s3cret\n", b"\xff\xfe", "tökén".encode(), b"a\nb", b"x" * 2_000_000, b"\x00"]
)
CA_FILES = st.sampled_from(
    [
        b"",
        b"not a pem",
        b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        b"\xff" * 64,
        Path(certifi.where()).read_bytes(),
    ]  # the last: a real bundle, so TLS loads and the fake answers
)


@dataclass(frozen=True)
class PrometheusInput:
    kind: str
    argv: tuple[str, ...]
    answers: tuple[tuple[str, Page | str], ...]  # query -> answer
    files: tuple[tuple[str, bytes], ...]
    done: tuple[str, ...]

    def run(self, folder: Path, watchdog_s: int = 10) -> tuple[Outcome, str]:
        clear(folder)
        for name, data in self.files:
            (folder / name).write_bytes(data)
        answers = dict(self.answers)
        base = prometheus_answers()

        def handle(transport: Any, request: httpx.Request) -> httpx.Response:
            query = request.url.params.get("query", "")
            page = answers.get(query, (200, base.get(query, "{}").encode(), ()))
            if isinstance(page, str):
                raise ERRORS[page](request)
            status, body, headers = page
            return httpx.Response(status, content=body, headers=list(headers), request=request)

        argv = [token.replace("{dir}", str(folder)) for token in self.argv]
        with mock.patch.object(httpx.HTTPTransport, "handle_request", handle):
            return run_cli(argv, watchdog_s=watchdog_s, json_key="nodes")

    def describe(self) -> str:
        return f"prometheus: kvtop {' '.join(self.argv)[:200]!r} | {'; '.join(self.done)[:500]}"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """What hypothesis shows of a failing example: what was done, not the megabytes it made."""
        printer.text(self.describe())


@st.composite
def _mutated_answer(draw: st.DrawFn, text: str) -> tuple[Page | str, str]:
    doc = json.loads(text)
    results = doc["data"]["result"]
    how = draw(st.sampled_from(["value", "value", "document", "document", "status", "error", "body"]))
    if how == "value" and results:
        index = draw(st.integers(0, len(results) - 1))
        value = draw(SAMPLE_VALUES)
        results[index]["value"][1] = value
        return (200, dumps(doc), ()), f"result[{index}].value = {value[:30]!r}"
    if how == "status":
        status = draw(st.sampled_from([400, 401, 403, 422, 500, 503]))
        body = draw(
            st.sampled_from(
                [
                    b'{"status":"error","errorType":"bad_data","error":"parse error"}',
                    b"<html>oops</html>",
                    b"",
                ]
            )
        )
        return (status, body, ()), f"HTTP {status} {body[:20]!r}"
    if how == "error":
        name = draw(st.sampled_from(sorted(ERRORS)))
        return name, f"transport error {name}"
    if how == "body":
        raw, what = draw(damage_bytes(text.encode()))
        if draw(st.booleans()):
            raw, what = draw(JUNK_BYTES) + b"\xff", "binary body"
        return (200, raw, ()), what
    doc, what = draw(mutate_document(doc, PROMETHEUS_KEYS))
    return (200, dumps(doc), ()), what


@st.composite
def prometheus_runs(draw: st.DrawFn, *, answers: bool = True, flags: bool = True) -> PrometheusInput:
    """`kvtop cluster --prometheus URL --json` with up to 3 answers mutated and, now and then, each of
    its flags (with `flags`; with `flags` alone, at least one flag and no answer mutated); `--gpus` when a
    mutated answer is one only `--gpus` asks for, and now and then otherwise."""
    from kvtop.sources.prometheus_gpus import GPU_LIST_QUERIES

    base = prometheus_answers()
    queries = sorted(base)
    mutated: dict[str, Page | str] = {}
    done: list[str] = []
    for query in draw(st.lists(st.sampled_from(queries), max_size=3 if answers else 0, unique=True)):
        mutated[query], what = draw(_mutated_answer(base[query]))
        done.append(f"{query[:40]}: {what}")
    url = "http://prometheus.test:9090"
    argv = ["cluster"]
    files: list[tuple[str, bytes]] = []
    often = 5 if answers else 1  # each flag is fuzzed 1 time in 6, or 1 in 2 when only flags are
    if flags and draw(st.integers(0, often)) == 0:
        url = draw(URLS | UNICODE)
        done.append(f"url {url[:60]!r}")
    argv += ["--prometheus", url, "--json"]
    if set(mutated) & set(GPU_LIST_QUERIES.values()) or draw(st.integers(0, often)) == 0:
        argv.append("--gpus")  # every GPU's series are asked for, and read
    if flags and draw(st.integers(0, often)) == 0:
        flag = draw(st.sampled_from(["--timeout", "--stale-after"]))
        value = draw(NUMBER_TEXT | st.sampled_from(["nan", "inf", "-1", "0", "1e400", "5"]))
        argv.append(f"{flag}={value}")
    if flags and draw(st.integers(0, often)) == 0:
        files.append(("token", draw(TOKENS)))
        argv += ["--token-file", "{dir}/token"]
        done.append(f"token file {files[-1][1][:20]!r}")
    if flags and draw(st.integers(0, often)) == 0:
        if draw(st.booleans()):
            files.append(("ca.pem", draw(CA_FILES)))
            argv += ["--ca-file", "{dir}/ca.pem"]
            done.append(f"ca file {files[-1][1][:20]!r}")
        else:
            argv += [
                "--ca-file",
                draw(st.sampled_from(["{dir}", "{dir}/missing.pem", "/dev/null", "/dev/zero"])),
            ]
    return PrometheusInput(
        "prometheus", tuple(argv), tuple(sorted(mutated.items())), tuple(files), tuple(done)
    )


HTTP_KINDS: dict[str, Callable[[], st.SearchStrategy[Any]]] = {
    "endpoint": endpoint_answers,
    "prometheus": prometheus_runs,
}

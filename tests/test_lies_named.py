"""Lies are named, never believed (issue 25, item 6).

A Prometheus answer can hold samples no series could have: `up` of -123456789 (before: counted as
up), an age dated in the future, negative bytes, NaN, a usage of 750 %. Each is taken out and named
(`ClusterView.ignored`, the node's notes); a target whose `up` is neither 0 nor 1 is `invalid`.
`--cmd` names every flag kvtop ignored, with the flag it looks like (before: dropped without a word).
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

import pytest

from kvtop.cli import main
from kvtop.domain.cluster import SampleLie, TargetHealth
from kvtop.sources.prometheus import ALL_QUERIES, QUERIES, join_answers
from tests.local_http import serving

INSTANCE = "10.0.0.1:9400"


def answers(**series: list[tuple[dict[str, str], float]]) -> dict[str, list[tuple[dict[str, str], float]]]:
    return {key: series.get(key, []) for key in ALL_QUERIES}


def dcgm(field: str, value: float) -> tuple[dict[str, str], float]:
    labels = {"__name__": field, "gpu": "0", "Hostname": "node-a", "instance": INSTANCE, "modelName": "NVIDIA H100"}
    return labels, value


def test_an_up_that_is_neither_0_nor_1_and_an_age_in_the_future_are_named() -> None:
    view = join_answers(
        answers(
            up=[({"__name__": "up", "job": "dcgm", "instance": INSTANCE}, -123456789.0)],
            age=[({"job": "dcgm", "instance": INSTANCE}, -123456789.0)],
            dcgm=[dcgm("DCGM_FI_DEV_FB_USED", 1000.0)],
        ),
        url="http://prometheus", taken_at=0.0, stale_after_s=120.0,
    )  # fmt: skip
    (node,) = view.nodes
    assert node.health is TargetHealth.INVALID and view.nodes_not_up == 1  # before: up
    assert node.age_seconds is None  # before: "last sample -123456789 s ago"
    assert {(sample.query, sample.lie) for sample in view.ignored} == {
        ("up", SampleLie.NOT_UP_OR_DOWN), ("age", SampleLie.FUTURE),
    }  # fmt: skip
    assert f"up sample of {INSTANCE} -1.23457e+08 is neither 0 nor 1: not used" in node.notes


def test_negative_bytes_nan_and_a_usage_past_one_are_not_used() -> None:
    view = join_answers(
        answers(
            up=[({"__name__": "up", "job": "dcgm", "instance": INSTANCE}, 1.0)],
            dcgm=[dcgm("DCGM_FI_DEV_FB_USED", -5.0), dcgm("DCGM_FI_DEV_FB_FREE", float("nan")),
                  dcgm("DCGM_FI_DEV_FB_RESERVED", 557.0)],
            engine=[({"__name__": "vllm:kv_cache_usage_perc", "instance": INSTANCE}, 7.5)],
        ),
        url="http://prometheus", taken_at=0.0, stale_after_s=120.0, gpus=True,
    )  # fmt: skip
    (node,) = view.nodes
    (gpu,) = node.gpus or ()
    assert (gpu.used_bytes, gpu.free_bytes, gpu.reserved_bytes) == (None, None, 557 << 20)
    assert all(engine.kv_usage_fraction is None for engine in node.engines)
    assert sorted(sample.lie.value for sample in view.ignored) == ["nan", "negative", "out_of_range"]


def lying(handler: BaseHTTPRequestHandler) -> None:
    query = parse_qs(urlsplit(handler.path).query)["query"][0]
    key = next(k for k, expr in QUERIES.items() if expr == query)
    result = {
        "up": [{"metric": {"__name__": "up", "job": "dcgm", "instance": INSTANCE}, "value": [1.0, "-123456789"]}],
        "age": [{"metric": {"job": "dcgm", "instance": INSTANCE}, "value": [1.0, "NaN"]}],
    }.get(key, [])
    body = json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}}).encode()
    handler.send_response(200)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def test_the_cluster_command_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    with serving(lying) as url:
        assert main(["cluster", "--prometheus", url, "--json"]) == 0
        document = json.loads(capsys.readouterr().out)
        assert main(["cluster", "--prometheus", url]) == 0
        text = capsys.readouterr().out
    assert document["nodes"][0]["health"] == "invalid" and document["nodes_not_up"] == 1
    assert {sample["lie"] for sample in document["ignored"]} == {"not_0_or_1", "nan"}
    assert "ignored 2 samples that cannot be true" in text and " invalid" in text


def test_cmd_names_each_flag_it_ignored_and_what_it_looks_like(capsys: pytest.CaptureFixture[str]) -> None:
    command = ("python -m sglang.launch_server --model-path m --max-totl-tokens 4096 --frobnicate "
               "--mem-fraction-statc 0.8 --context-length 8192")  # fmt: skip
    assert main(["plan", "--model", "llama-3.1-8b", "--gpu", "H100", "--cmd", command, "--json"]) == 0
    out, err = capsys.readouterr()
    document = json.loads(out)
    assert document["context_length"] == 8192  # the flags it knows still apply; stdout stays JSON
    assert err.splitlines() == [
        "kvtop: note: --cmd: kvtop ignored 3 flags it does not know for SGLang: "
        "--max-totl-tokens (like --max-total-tokens?), --frobnicate, --mem-fraction-statc (like --mem-fraction-static?)"
    ]
    # the JSON holds them too (a script reads no stderr), and the plan is the one the known flags make
    assert document["flags_not_read"] == [
        {"flag": "--max-totl-tokens", "why": "unknown", "like": "--max-total-tokens"},
        {"flag": "--frobnicate", "why": "unknown", "like": None},
        {"flag": "--mem-fraction-statc", "why": "unknown", "like": "--mem-fraction-static"},
    ]


def test_cmd_with_only_known_flags_says_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    command = "vllm serve m --gpu-memory-utilization 0.9 --max-model-len 8192 --tensor-parallel-size 1"
    assert main(["plan", "--model", "llama-3.1-8b", "--gpu", "H100", "--cmd", command]) == 0
    assert capsys.readouterr().err == ""
    assert main(["plan", "--model", "llama-3.1-8b", "--gpu", "H100", "--cmd", command, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["flags_not_read"] == []

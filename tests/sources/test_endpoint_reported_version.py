"""A running engine's reported version is read where it is read: the release in its words sets the rules, words that
name none are a named state, and neither is ever handed on as an `--engine-version` the operator did not type.

The endpoint is SGLang 0.5.9's recorded `/get_server_info` answer (tests/data/samples/sglang_server_info, trimmed:
`"version": "0.5.9"`, `max_total_num_tokens` 326,223) with its `version` replaced. Session 70's secrets test planted
'0.5.9 api_key=…' there: the whole text went on as the launch's `--engine-version`, its typed check refused it, and the
snapshot lost the prediction ("no prediction …: --engine-version: not a release: '0.5.9 api_key=***'").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from kvtop.cli import main
from kvtop.commands.node_source import LiveSource
from kvtop.domain.config_override import ConfigOverride
from kvtop.domain.engines.stated_release import endpoint_release
from kvtop.domain.engines.versions import VersionSource, resolve
from kvtop.domain.engines.vllm.release_calendar import CALENDAR
from kvtop.domain.ledger import Ledger
from kvtop.domain.model import ModelSpec
from kvtop.domain.observe import SAID_CHARS, EndpointState, ReportedVersion
from kvtop.domain.redact import shown_cut
from kvtop.sources.engine_http import EndpointFailure, fetch_engine_live, reported_version
from kvtop.sources.hub import load_model
from kvtop.sources.nvml import NvmlSource
from tests.fakes.fake_process_table import FakeProcessTable, launched, titled
from tests.fakes.fake_pynvml import FakePynvml, gpu_from_mib
from tests.test_secrets_server_info import INFO, MODEL, SERVER, TP0

SECRET = "sk-c71SECRETc71key"
CAPACITY = 326_223  # the recorded answer's max_total_num_tokens


def _source(version: object) -> LiveSource:
    """One A100-80GB running SGLang TP1 whose server-info answer reports `version`."""
    answer: dict[str, Any] = {**json.loads(INFO.read_text()), "version": version}

    def respond(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/get_server_info":
            return httpx.Response(200, json=answer)
        return httpx.Response(404, text="Not Found")  # started without --enable-metrics

    table = FakeProcessTable.of([
        launched(SERVER, ["python3", "-m", "sglang.launch_server", "--model-path", MODEL, "--port", "30000"]),
        titled(TP0, "sglang::scheduler_TP0", SERVER),
    ])  # fmt: skip
    gpu = gpu_from_mib("NVIDIA A100-SXM4-80GB", 0, total_mib=81_920, reserved_mib=557, used_mib=70_000,
                       bus_id="00000000:07:00.0", compute=[(TP0, 70_000 << 20)])  # fmt: skip

    def loader(ref: str, *, override: ConfigOverride | None = None) -> ModelSpec:
        return load_model("llama-3.1-8b", override=override)

    nvml = NvmlSource(nvml_module=FakePynvml([gpu]), clock=lambda: 1_700_000_100.0)
    http = httpx.Client(transport=httpx.MockTransport(respond))
    return LiveSource(nvml=nvml, table=table, model_loader=loader, http_client=http)


def _ledger(version: object) -> Ledger:
    (view,) = _source(version).collect().engines
    assert view.engine.live.token_capacity == CAPACITY  # the answer was read
    assert isinstance(view.ledger, Ledger), view.ledger_error
    return view.ledger


def test_the_release_before_more_words_sets_the_rules_as_the_endpoint_s() -> None:
    ledger = _ledger(f"0.5.9 api_key={SECRET}")
    assert ledger.settings.engine_version == "0.5.9"  # the recorded answer's own version
    assert ledger.version.source is VersionSource.ENDPOINT
    assert ledger.version.detail == "the engine's endpoint reports 0.5.9"


@pytest.mark.parametrize(
    ("said", "what"),
    [
        ("dev", "not a release kvtop reads"),
        ("", "not a release kvtop reads"),
        ("nightly 0.5.9", "not a release kvtop reads"),
        # setuptools-scm's version of a checkout without tags: its number names no release (versions.names_no_release)
        ("0.1.dev7548+gbaba038", "a source build whose version names no release"),
    ],
)
def test_words_that_name_no_release_are_a_named_state_with_the_latest_rules(said: str, what: str) -> None:
    ledger = _ledger(said)
    assert ledger.settings.engine_version is None  # nothing handed on as if typed
    assert ledger.version.source is VersionSource.ENDPOINT_UNREAD
    assert (ledger.version.text, ledger.version.label) == (None, "latest")
    assert ledger.version.detail == f"the engine's endpoint reports {said!r}, {what}: the latest release's rules"


def test_an_answer_whose_version_is_no_text_reports_none() -> None:
    """An object where the version should be (the fuzzer's shape) is no report at all: the latest rules, unsaid."""
    ledger = _ledger({"v": 1})
    assert ledger.version.source is VersionSource.NOT_STATED


def test_trtllm_s_version_route_is_read_the_same_way() -> None:
    """trtllm-serve's `/version` ({"version": "1.1.0rc3"}, docs/engines/trtllm.md): its words, and the release."""

    def live(body: str) -> Any:
        def respond(request: httpx.Request) -> httpx.Response:
            if request.url.path == "/version":
                return httpx.Response(200, text=body)
            return httpx.Response(404, text="Not Found")

        client = httpx.Client(transport=httpx.MockTransport(respond))
        return fetch_engine_live("trtllm", "127.0.0.1", 8000, client=client).version

    built = live('{"version": "1.1.0rc3 (build 42)"}')
    assert built.model_dump() == {"said": "1.1.0rc3 (build 42)"}
    assert endpoint_release("trtllm", built).text == "1.1.0rc3"
    dev = live('{"version": "dev"}')
    assert (dev.said, endpoint_release("trtllm", dev).source) == ("dev", VersionSource.ENDPOINT_UNREAD)


@pytest.mark.parametrize("argv", [["snapshot"], ["snapshot", "--json"], ["diagnose"], ["diagnose", "--json"]])
def test_a_snapshot_and_a_diagnosis_keep_the_prediction_and_show_no_secret(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    monkeypatch.setattr(
        "kvtop.commands.node_source.open_node_source", lambda *args, **kwargs: _source(f"0.5.9 api_key={SECRET}")
    )
    assert main(argv) in (0, 1)
    out, err = capsys.readouterr()
    leaked = "SECRET" in out + err
    assert not leaked
    assert "no prediction" not in out and "--engine-version" not in out  # the ledger was solved, at no typed flag
    if argv == ["snapshot"]:
        assert "326,223" in out and "tokens per rank" in out  # the answer's capacity, and a clean prediction beside it
    if argv == ["snapshot", "--json"]:
        (engine,) = json.loads(out)["engines"]
        assert engine["endpoint"]["version"] == {"said": "0.5.9 api_key=***"}
        assert (engine["plan"]["engine_version"], engine["plan"]["version_source"]) == ("0.5.9", "endpoint")
    if argv[0] == "diagnose":  # a finding that needs the prediction: the answer's 40.62 GiB of weights beside it
        assert "weights take 40.62 GiB per rank" in out


AWS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"  # AWS's documented example key id (docs.aws.amazon.com, "AKIA" + 16 of [A-Z2-7])


def test_an_aws_key_id_past_the_cut_is_redacted_before_it_is_cut() -> None:
    """'0.5.9 ' + 22 x + ' ' is 29 characters: a cut to 40 first kept 'AKIAIOSFOD…' (half the key id, no longer an
    AWS key's shape, so the redactor passed it); redacted first, the whole id is masked and the release still read."""
    said = reported_version("0.5.9 " + "x" * 22 + " " + AWS_KEY_ID)
    assert said is not None and "AKIA" not in said.said and "IOSFOD" not in said.said
    assert said.said == "0.5.9 " + "x" * 22 + " ***"
    assert endpoint_release("sglang", said).text == "0.5.9"
    failure = EndpointFailure(EndpointState.BAD_PAYLOAD, "y" * 285 + " " + AWS_KEY_ID)  # cut at 300 characters
    assert "AKIA" not in failure.message and "IOSFOD" not in failure.message
    assert shown_cut("key " + AWS_KEY_ID, 12) == "key ***"


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("\t0.11.0", "0.11.0"),  # a tab before the release: a live reader and the demo read it alike
        ("0.11.0\nevil", "0.11.0 evil"),  # a line break is one space: the release before it still read
        ("0.11.0 " + "z" * 500, "0.11.0 " + "z" * 32 + "…"),  # cut to 40 wherever the words come from
    ],
)
def test_every_reader_s_words_are_one_line_of_at_most_40_characters(typed: str, said: str) -> None:
    reported = ReportedVersion(said=typed)  # the demo builds it from the scenario's words as they are
    assert reported.said == said and len(reported.said) <= SAID_CHARS
    assert endpoint_release("vllm", reported).text == "0.11.0"


def test_a_llamacpp_build_is_read_by_llamacpp_s_release_names() -> None:
    """llama.cpp names releases by build ('b6980', its tags; the server's build_info 'b6980-5e4f1a2'): read as the
    endpoint's, not refused as no PEP 440 release; a PEP 440 text is no llama.cpp release."""
    for said in ("b6980", "b6980-5e4f1a2"):
        version = endpoint_release("llamacpp", ReportedVersion(said=said))
        assert (version.text, version.source) == ("b6980", VersionSource.ENDPOINT)
    assert endpoint_release("llamacpp", ReportedVersion(said="0.5.9")).source is VersionSource.ENDPOINT_UNREAD
    assert endpoint_release("vllm", ReportedVersion(said="b6980")).source is VersionSource.ENDPOINT_UNREAD


def test_the_llamacpp_demo_s_build_sets_its_rules_as_the_endpoint_s(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = json.loads(Path("examples/scenarios/llamacpp-llama31-8b.json").read_text())
    scenario["engines"][0]["version"] = "b6980"
    path = tmp_path / "llamacpp-b6980.json"
    path.write_text(json.dumps(scenario))
    assert main(["snapshot", "--demo", str(path), "--json"]) == 0
    (engine,) = json.loads(capsys.readouterr().out)["engines"]
    assert engine["endpoint"]["version"] == {"said": "b6980"}
    assert (engine["plan"]["engine_version"], engine["plan"]["version_source"]) == ("b6980", "endpoint")


def test_a_dated_source_build_reads_the_same_from_an_endpoint_as_from_a_log() -> None:
    """setuptools-scm's '.d20250806' of a build from a modified checkout: vLLM 0.10.0 was out (PyPI, 2025-07-25),
    0.10.1 not yet (2025-08-19), so the build is 0.10.0 or older, from an endpoint as from a log."""
    said = "0.1.dev8331+g74e7551.d20250806"
    version = endpoint_release("vllm", ReportedVersion(said=said))
    assert (version.text, version.approximate, version.source) == ("0.10.0", True, VersionSource.ENDPOINT)
    assert "built 2025-08-06 (the date in its version) → vLLM 0.10.0 or older" in version.detail
    logged = resolve(engine_name="vLLM", stated=said, stated_line=3, hint=None, first_date=None, calendar=CALENDAR)
    assert logged.text == version.text


@pytest.mark.parametrize(
    ("said", "release"),
    [
        # R8: a precompiled vLLM dev wheel's version, 49 characters; a CUDA-suffixed one, 43: cut to 40 before
        # they were read, both were ENDPOINT_UNREAD ('…d20251024.p…' names no release PEP 440 parses)
        ("0.11.1rc2.dev150+g8e4ca4d54.d20251024.precompiled", "0.11.1rc2"),
        ("0.10.1rc2.dev123+g1a2b3c4d5.d20250806.cu126", "0.10.1rc2"),
    ],
)
def test_a_long_version_is_read_whole_and_shown_cut(said: str, release: str) -> None:
    reported = ReportedVersion(said=said)
    assert len(said) > SAID_CHARS and reported.said == said[: SAID_CHARS - 1] + "…"
    assert reported.model_dump() == {"said": reported.said}  # the whole words are read, never shown
    version = endpoint_release("vllm", reported)
    assert version.source is VersionSource.ENDPOINT and version.text is not None
    assert version.text.startswith(release)
    logged = resolve(engine_name="vLLM", stated=said, stated_line=3, hint=None, first_date=None, calendar=CALENDAR)
    assert logged.text == version.text  # as a log's line reads it


def test_said_is_derived_from_the_words_never_stored_beside_them() -> None:
    """`said` is the words cut to `SAID_CHARS` (a computed field), so no construction, copy or JSON round trip can
    make the two disagree; the JSON writes `said` alone (session 72: it was a second stored field)."""
    build = "0.11.1rc2.dev150+g8e4ca4d54.d20251024.precompiled"  # 49 characters, a source build's
    reported = ReportedVersion(said=f"{build}\tcuda 12.8")
    assert reported.words == f"{build} cuda 12.8"  # one line, whole below 200
    assert reported.said == build[: SAID_CHARS - 1] + "…"  # cut to 40 by hand, the cut marked
    assert reported.model_dump() == {"said": reported.said}
    assert ReportedVersion.model_validate(reported.model_dump()).said == reported.said
    copied = reported.model_copy(update={"said": "0.5.9"})  # a copy's new words: both follow
    assert (copied.words, copied.said) == ("0.5.9", "0.5.9")
    assert ReportedVersion(said="0.5.9", words="0.6.0").words == "0.5.9"  # said= is the words: never two figures

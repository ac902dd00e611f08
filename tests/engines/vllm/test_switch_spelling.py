"""The copied engine-flags line writes vLLM's switches in the form the planned release parses (switch_spelling.py).

The operator's `--enable-chunked-prefill False` was copied back as typed, which no release from v0.8.5 parses:
there `--enable-chunked-prefill` is a BooleanOptionalAction (vLLM's `get_kwargs` gives every bool config field one:
engine/arg_utils.py:150-152 and :852-853 at v0.8.5, :203-205 and :878-879 at v0.10.2, :206-208 and :905-906 at
v0.11.0), which takes no value, so 'False' is an unrecognized argument; its off form is `--no-enable-chunked-prefill`.
Up to v0.8.4 the flag is `action=StoreBoolean, nargs="?", const="True"` (engine/arg_utils.py:784-788 at v0.8.4),
which takes 'true' / 'false' in any case and has no `--no-` form (StoreBoolean, vllm/utils.py:1214-1223 at v0.8.4:
anything else raises 'Invalid boolean value'). The parsers below are those actions, Python's own BooleanOptionalAction
and StoreBoolean's few lines, so each copied line is parsed as the release parses it.
"""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from tests.data_paths import DATA
from tests.engines.measured_flags import plan_json

LLAMA = str(DATA / "configs" / "meta-llama--Llama-3.1-8B-Instruct.json")
BASE = ("--model", LLAMA, "--engine", "vllm", "--gpu", "H100")


class _StoreBoolean(argparse.Action):
    """vLLM's StoreBoolean up to v0.8.4 (vllm/utils.py:1214-1223): 'true' / 'false' in any case, else an error."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:  # fmt: skip
        if str(values).lower() not in ("true", "false"):
            raise ValueError(f"Invalid boolean value: {values}. Expected 'true' or 'false'.")
        setattr(namespace, self.dest, str(values).lower() == "true")


def _parser(release: str) -> argparse.ArgumentParser:
    """`--max-model-len` and `--enable-chunked-prefill` as `release`'s EngineArgs.add_cli_args declares them."""
    parser = argparse.ArgumentParser(exit_on_error=False)
    parser.add_argument("--max-model-len", type=int)
    if release in ("0.8.4",):  # engine/arg_utils.py:784-788 at v0.8.4
        parser.add_argument("--enable-chunked-prefill", action=_StoreBoolean, nargs="?", const="True")
    else:  # BooleanOptionalAction from v0.8.5 (the module docstring)
        parser.add_argument("--enable-chunked-prefill", action=argparse.BooleanOptionalAction)
    return parser


def _parsed(release: str, line: list[str]) -> argparse.Namespace:
    """The line as the release's parser reads it; an unrecognized token raises, as vLLM's parser stops there."""
    namespace, rest = _parser(release).parse_known_args(line)
    if rest:
        raise ValueError(f"unrecognized arguments: {' '.join(rest)}")
    return namespace


@pytest.mark.parametrize(("release", "expected"), [
    ("0.8.4", ["--enable-chunked-prefill", "False"]),  # StoreBoolean: the value form, no --no-
    ("0.10.2", ["--no-enable-chunked-prefill"]),  # BooleanOptionalAction (arg_utils.py:203-205, :878-879)
    ("0.11.0", ["--no-enable-chunked-prefill"]),  # the same (arg_utils.py:206-208, :905-906)
])  # fmt: skip
@pytest.mark.parametrize("typed", [("--enable-chunked-prefill", "False"), ("--enable-chunked-prefill=false",),
                                   ("--no-enable-chunked-prefill",)])  # fmt: skip
def test_chunked_prefill_off_is_copied_as_the_release_parses_it(
    capsys: pytest.CaptureFixture[str], release: str, expected: list[str], typed: tuple[str, ...]
) -> None:
    """Chunked prefill off, typed in any form kvtop reads, copies the release's own off form; that line parses to
    False at the release, and planned again gives the same capacity."""
    plan = plan_json(capsys, (*BASE, "--engine-version", release), "--max-model-len", "8192", *typed)
    line = plan["engine_flags"]
    assert line == ["--max-model-len", "8192", *expected]
    assert _parsed(release, line).enable_chunked_prefill is False
    again = plan_json(capsys, (*BASE, "--engine-version", release), *line)
    assert again["token_capacity"] == plan["token_capacity"]


def test_the_typed_form_is_what_the_release_refuses() -> None:
    """The test's parsers can fail: the line as typed stops v0.10.2 / v0.11.0, and `--no-…` stops v0.8.4."""
    typed = ["--max-model-len", "8192", "--enable-chunked-prefill", "False"]
    for release in ("0.10.2", "0.11.0"):
        with pytest.raises(ValueError, match="unrecognized arguments: False"):
            _parsed(release, typed)
    assert _parsed("0.8.4", typed).enable_chunked_prefill is False
    with pytest.raises((ValueError, argparse.ArgumentError)):
        _parsed("0.8.4", ["--no-enable-chunked-prefill"])


def test_on_is_the_bare_flag(capsys: pytest.CaptureFixture[str]) -> None:
    """`--enable-chunked-prefill True` copies `--enable-chunked-prefill`, which every release takes as on (StoreBoolean's
    const 'True'; BooleanOptionalAction's positive form)."""
    for release in ("0.8.4", "0.11.0"):
        line = plan_json(capsys, (*BASE, "--engine-version", release), "--enable-chunked-prefill", "True")["engine_flags"]
        assert line == ["--enable-chunked-prefill"]
        assert _parsed(release, line).enable_chunked_prefill is True


@pytest.mark.parametrize(("release", "expected"), [
    # action='store_true' up to v0.6.4.post1 (engine/arg_utils.py:409 at v0.6.4): off is its default, written as nothing
    ("0.6.4", []),
    # BooleanOptionalAction from v0.6.5 (engine/arg_utils.py:432 at v0.6.5, :564 at v0.8.5)
    ("0.6.5", ["--no-enable-prefix-caching"]),
    ("0.11.0", ["--no-enable-prefix-caching"]),
])  # fmt: skip
def test_prefix_caching_off_by_release(capsys: pytest.CaptureFixture[str], release: str, expected: list[str]) -> None:
    line = plan_json(capsys, (*BASE, "--engine-version", release), "--enable-prefix-caching=false")["engine_flags"]
    assert line == expected


def test_enforce_eager_off_copies_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    """`--enforce-eager` is store_true up to v0.8.5 (engine/arg_utils.py:639 at v0.8.5) and ModelConfig's bool field,
    a BooleanOptionalAction, after (:526 at v0.9.2, :550 at v0.11.0; `enforce_eager: bool = False`, config.py:306 at
    v0.9.2, config/model.py:176 at v0.11.0): off is the default in both, and the line writes the flag only where it is
    on (`LaunchSettings.enforce_eager`), so `--enforce-eager False` copies a line both forms take."""
    for release in ("0.8.5", "0.11.0"):
        off = plan_json(capsys, (*BASE, "--engine-version", release), "--enforce-eager", "False")["engine_flags"]
        assert "--enforce-eager" not in off and "False" not in off
        on = plan_json(capsys, (*BASE, "--engine-version", release), "--enforce-eager")["engine_flags"]
        assert on == ["--enforce-eager"]


def test_chunked_prefill_off_at_v0_8_5_is_the_negated_flag(capsys: pytest.CaptureFixture[str]) -> None:
    """v0.8.5, the first BooleanOptionalAction release (engine/arg_utils.py:852-853): the value form stops it."""
    line = plan_json(capsys, (*BASE, "--engine-version", "0.8.5"), "--enable-chunked-prefill", "False")["engine_flags"]
    assert line == ["--no-enable-chunked-prefill"] and _parsed("0.8.5", line).enable_chunked_prefill is False
    with pytest.raises(ValueError, match="unrecognized arguments: False"):
        _parsed("0.8.5", ["--enable-chunked-prefill", "False"])


@pytest.mark.parametrize(("release", "expected"), [
    ("0.8.4", []),  # action='store_true' (engine/arg_utils.py:463 at v0.8.4): off is its default, written as nothing
    ("0.8.5", ["--no-disable-custom-all-reduce"]),  # ParallelConfig's field from v0.8.5 (:547): BooleanOptionalAction
])  # fmt: skip
def test_custom_all_reduce_off_by_release(capsys: pytest.CaptureFixture[str], release: str, expected: list[str]) -> None:
    line = plan_json(capsys, (*BASE, "--engine-version", release), "--disable-custom-all-reduce", "False")
    assert line["engine_flags"] == expected


def _lora_parser(release: str) -> argparse.ArgumentParser:
    """The LoRA and EPLB switches as `release`'s add_cli_args declares them: store_true up to v0.8.4
    (engine/arg_utils.py:579-580 and :626-627 at v0.6.4), BooleanOptionalAction from v0.8.5 (:696-698 and :715-716
    at v0.8.5, :830-832 and :847-848 at v0.11.0); --enable-eplb a bool field of ParallelConfig (:708-709 at v0.11.0)."""
    parser = argparse.ArgumentParser(exit_on_error=False)
    parser.add_argument("--max-model-len", type=int)
    action: Any = "store_true" if release == "0.6.4" else argparse.BooleanOptionalAction
    for flag in ("--enable-lora", "--fully-sharded-loras"):
        parser.add_argument(flag, action=action)
    if release != "0.6.4":
        parser.add_argument("--enable-eplb", action=argparse.BooleanOptionalAction)
    return parser


@pytest.mark.parametrize(("release", "expected"), [("0.6.4", []), ("0.11.0", ["--no-enable-lora"])])
@pytest.mark.parametrize("typed", [("--enable-lora", "False"), ("--no-enable-lora",)])
def test_lora_off_is_copied_as_the_release_parses_it(
    capsys: pytest.CaptureFixture[str], release: str, expected: list[str], typed: tuple[str, ...]
) -> None:
    """`--enable-lora False` was copied as typed ('False' an unrecognized argument at every release) and read as LoRA
    on (the string is not False): v0.6.4 planned 445,248 with the text model's fit 'assumed ± 2.00 GiB, LoRA buffers
    not modelled' beside 444,848 without the flag. Off, it plans as no flag and copies the release's off form."""
    plan = plan_json(capsys, (*BASE, "--engine-version", release), "--max-model-len", "8192", *typed)
    bare = plan_json(capsys, (*BASE, "--engine-version", release), "--max-model-len", "8192")
    assert plan["engine_flags"] == ["--max-model-len", "8192", *expected]
    assert plan["token_capacity"] == bare["token_capacity"] == {"0.6.4": 444_848, "0.11.0": 421_520}[release]
    namespace, rest = _lora_parser(release).parse_known_args(plan["engine_flags"])
    assert rest == [] and not namespace.enable_lora
    with pytest.raises(SystemExit):  # the typed form: 'False' is more than the parser takes
        _lora_parser(release).parse_args(["--enable-lora", "False"])


@pytest.mark.parametrize("typed", [("--fully-sharded-loras", "False"), ("--enable-eplb", "False")])
def test_other_deployment_switches_off_copy_the_negated_flag(
    capsys: pytest.CaptureFixture[str], typed: tuple[str, ...]
) -> None:
    line = plan_json(capsys, (*BASE, "--engine-version", "0.11.0"), "--max-model-len", "8192", *typed)["engine_flags"]
    assert line == ["--max-model-len", "8192", f"--no-{typed[0][2:]}"]
    namespace, rest = _lora_parser("0.11.0").parse_known_args(line)
    assert rest == [] and getattr(namespace, typed[0][2:].replace("-", "_")) is False

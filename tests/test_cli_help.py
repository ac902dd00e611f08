"""Every `--help` tells the truth about what its parser accepts.

The tests walk every subcommand's argparse parser (and the top-level one) and check each option:
its metavar agrees with its type (a number is N, T, F or SECONDS; a size is SIZE and parses as
one), every example its help gives ("e.g. X") is accepted by the option's type, choices or size
parser, a default its help states is the parser's default, and every flag a help text or an
error message names exists in that command's parser (or, for engine flags, in its --help's list
of engine flags, and `kvtop.domain.launch.parse_flags` accepts it).
"""

from __future__ import annotations

import argparse
import ast
import re
from collections.abc import Iterator
from fnmatch import fnmatch
from functools import cache
from pathlib import Path

import pytest

from kvtop.cli import build_parser, main
from kvtop.cli_args import gpu_index, node_count, positive_seconds, refresh_seconds, whole_number
from kvtop.commands import SUMMARIES
from kvtop.commands.common import engine_flags_help, neutral_flags_listing
from kvtop.domain import launch
from kvtop.domain.engines.registry import ENGINE_IDS, engine_flags
from kvtop.domain.engines.vllm.flags_valued import EXAMPLES as VALUED_EXAMPLES
from kvtop.domain.errors import InputError
from kvtop.units import parse_size

REPO = Path(__file__).resolve().parents[1]
NUMBER_METAVARS = {int: {"N", "T"}, float: {"F", "SECONDS"}, positive_seconds: {"SECONDS"}, refresh_seconds: {"SECONDS"},
                   gpu_index: {"N"}, whole_number: {"N", "T"}, node_count: {"N"}}  # fmt: skip
FLAG = re.compile(r"(?<![\w-])--[a-z](?:[a-z0-9_.-]*[a-z0-9])?")  # TensorRT-LLM: --tp_size, --kv_cache_config.dtype
EXAMPLE = re.compile(r"e\.g\. (\S+?)[,;)]?(?:\s|$)")
STATED_DEFAULT = re.compile(r"\(default ([^;)\s]+)")
ERRORS = {"InputError", "KvtopError", "LayoutError", "UnsupportedModelError"}
#: Flags an error message may name that are the engine's, not kvtop's: they reach kvtop only inside a
#: launch command (--cmd, a live process, a log) and are kept verbatim in LaunchSettings.flags; and SGLang's own
#: refusal text quoted verbatim (--mamba-scheduler-strategy, in the radix-cache refusal of 0.5.10-0.5.13).
ENGINE_ONLY = {"--async-scheduling", "--enable-prefix-caching", "--no-enable-prefix-caching", "--mamba-scheduler-strategy"}

PARSER = build_parser()
SUBCOMMANDS: dict[str, argparse.ArgumentParser] = next(
    action.choices for action in PARSER._actions if isinstance(action, argparse._SubParsersAction)
)
PARSERS: dict[str, argparse.ArgumentParser] = {"kvtop": PARSER, **SUBCOMMANDS}
ENGINE_FLAG_COMMANDS = {"plan", "explain", "probe"}  # they take engine flags (listed in their epilog)


def options() -> Iterator[tuple[str, argparse.Action]]:
    for command, parser in PARSERS.items():
        for action in parser._actions:
            if action.option_strings and not isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
                yield command, action


OPTIONS = list(options())


def option_id(item: tuple[str, argparse.Action]) -> str:
    return f"{item[0]} {item[1].option_strings[0]}"


def shown_metavar(action: argparse.Action) -> str | None:
    """The placeholder --help prints for the option's value (None for a flag or a choice list)."""
    if action.nargs == 0 or (action.choices and action.metavar is None):
        return None
    return str(action.metavar) if action.metavar is not None else action.dest.upper()


@cache
def engine_flags_listed() -> frozenset[str]:
    """The flags the engine-flag listing of --help names (made once: `accepts` asks for each flag it checks)."""
    return frozenset(FLAG.findall(engine_flags_help()))


def accepts(command: str, flag: str) -> bool:
    """`flag` is an option of `command`'s parser, of kvtop's own, or an engine flag its --help lists."""
    parser = PARSERS[command]
    if flag in parser._option_string_actions or flag in PARSER._option_string_actions:
        return True
    return command in ENGINE_FLAG_COMMANDS and flag in engine_flags_listed()


@pytest.mark.parametrize("item", OPTIONS, ids=option_id)
def test_each_option_has_help_and_a_metavar_that_matches_its_type(item: tuple[str, argparse.Action]) -> None:
    command, action = item
    assert action.help and action.help.strip(), f"{option_id(item)} has no help"
    metavar = shown_metavar(action)
    numeric = NUMBER_METAVARS.get(action.type)  # type: ignore[call-overload]
    if numeric is not None:
        assert metavar in numeric, f"{option_id(item)} takes a {action.type.__name__} but shows {metavar}"
    elif metavar is not None:
        assert metavar not in {"N", "T", "F", "SECONDS"}, f"{option_id(item)} shows {metavar} but takes text"
        assert action.metavar is not None, f"{option_id(item)} shows argparse's placeholder {metavar}: name what it takes"
    if action.choices:
        choices = list(action.choices)
        assert action.default is None or action.default in choices
        if action.metavar is not None:
            assert all(choice in action.help for choice in choices), f"{option_id(item)} hides a choice"


@pytest.mark.parametrize("item", OPTIONS, ids=option_id)
def test_each_example_and_stated_default_is_what_the_parser_takes(item: tuple[str, argparse.Action]) -> None:
    command, action = item
    help_text = action.help or ""
    for example in EXAMPLE.findall(help_text):
        if shown_metavar(action) == "SIZE":
            parse_size(example, field=action.option_strings[0])  # raises InputError if not a size
        elif action.type in NUMBER_METAVARS:  # each number type the help names
            action.type(example)  # type: ignore[misc]
        if action.choices:
            assert example in action.choices, f"{option_id(item)}: e.g. {example} is not a choice"
    for stated in STATED_DEFAULT.findall(help_text):
        if action.default is None or action.default is argparse.SUPPRESS:
            continue  # the command resolves it (e.g. --engine from --cmd, else sglang)
        if isinstance(action.default, float):
            assert float(stated) == action.default, f"{option_id(item)} says default {stated}"
        else:
            assert stated == str(action.default), f"{option_id(item)} says default {stated}"


@pytest.mark.parametrize("command", list(PARSERS))
def test_every_flag_a_help_text_names_exists_in_that_parser(command: str) -> None:
    parser = PARSERS[command]
    texts = [action.help or "" for action in parser._actions] + [parser.epilog or "", parser.description or ""]
    named = {flag for text in texts for flag in FLAG.findall(text)}
    assert not sorted(flag for flag in named if not accepts(command, flag))


def _engine_sections(text: str) -> dict[str, str]:
    """The engine-flag listing split by engine: 'kvtop' and each engine id -> its flags' text."""
    sections: dict[str, str] = {}
    current = None
    for line in text.splitlines()[1:]:
        head = re.match(r"  (\w[\w. -]*?)(?: \(--engine (\w+)\))?:", line)
        if head:
            current = head.group(2) or "kvtop"
            line = line[head.end() :]
        if current:
            sections[current] = sections.get(current, "") + " " + line
    return sections


NEUTRAL_SUMMARY = re.compile(r"accepted, no effect on memory: (\d+) flags \(.*?\),\s+named on the plan:\s+"
                             r"--list-neutral-flags (\w+) lists them", re.DOTALL)
VALUES = {"N": "2", "F": "0.9", "SIZE": "1G", "V": "0.20.1", "Q": "fp8", "D": "bfloat16", "YAML": "x.yaml",  # SIZE: vLLM's 1G
          "JSON": "{}"}  # fmt: skip


def _neutral_listed(engine: str) -> set[str]:
    """Every spelling `--list-neutral-flags ENGINE` prints (`--[no-]NAME`: both)."""
    text = neutral_flags_listing(engine)
    return {spelling for flag in re.findall(r"--(?:\[no-\])?[a-z0-9][a-z0-9_.-]*", text)
            for spelling in (flag.replace("[no-]", ""), flag.replace("[no-]", "no-"))}  # fmt: skip


def test_every_engine_flag_the_help_lists_is_accepted_and_every_accepted_one_listed() -> None:
    """Each flag the listing names parses with a value of its placeholder; every flag an engine accepts is in the
    listing, or, for one with no effect on memory, in `--list-neutral-flags ENGINE`, which --help names and counts."""
    help_text = engine_flags_help()
    summaries = {engine: int(count) for count, engine in NEUTRAL_SUMMARY.findall(help_text)}
    sections = _engine_sections(NEUTRAL_SUMMARY.sub("", help_text))
    assert set(sections) == {"kvtop", *ENGINE_IDS}
    assert set(summaries) == {engine for engine in ENGINE_IDS if engine_flags(engine).memory_neutral}
    for engine in ENGINE_IDS:
        listed = re.findall(r"((?:--?[a-z0-9_.-]+/?)+)(?: (N|F|SIZE|V|Q|D|YAML|JSON|[a-z0-9_|]+))?", sections[engine] + sections["kvtop"])
        assert len(listed) > 10
        for spellings, placeholder in listed:
            value = VALUES.get(placeholder, placeholder.split("|")[0]) if placeholder else None
            if placeholder == "V" and not launch.release_names(engine).names_one(value or ""):
                value = launch.release_names(engine).examples[0]  # llama.cpp's releases are builds: b6980
            for flag in spellings.rstrip("/").split("/"):
                tokens = [flag] if value is None else [flag, value]
                if flag in ("--ep", "--ep-size", "--expert-parallel-size", "--dcp", "--dcp-size", "-dcp",
                            "--decode-context-parallel-size", "--ep_size", "--moe_expert_parallel_size"):  # fmt: skip
                    tokens = ["--tp", "2", *tokens]  # expert / context parallel need as many GPUs
                if flag in ("--ep", "--ep-size", "--expert-parallel-size") and engine == "vllm":
                    tokens = ["--tp", "2", "--ep", "2"]  # vLLM has no EP size: the whole TP group
                launch.parse_flags(engine, tokens, strict=True)
        documented = set(FLAG.findall(sections[engine])) | set(re.findall(r"(?<![\w-])-[a-zA-Z][a-zA-Z0-9]*(?:\.[a-z0-9_.]+)?(?![\w-])", sections[engine]))
        flags = engine_flags(engine)
        own = {flag for flag, field in flags.spellings.items() if field not in {"model", "host", "port"}}
        own |= set(flags.own_flags) | set(flags.passthrough)  # kvtop's own flags, and those accepted as typed
        neutral = _neutral_listed(engine) if engine in summaries else set()
        assert not own - documented - neutral, f"{engine} accepts but its --help does not list: {sorted(own - documented - neutral)}"
        assert neutral == set(flags.memory_neutral) and not neutral & documented
        named = {flag for flag in neutral if not flag.startswith("--no-")}
        assert summaries.get(engine, 0) == len(named)  # the count --help gives
        for flag in sorted(neutral):  # each parses as typed (a value where it takes one: '1' stands for any, but
            # vLLM's flags_valued.py, neutral only at the values read: one of those)
            value = VALUED_EXAMPLES.get(flag, "1") if engine == "vllm" else "1"
            launch.parse_flags(engine, [flag, value] if not flag.startswith("--no-") and "--no-" + flag[2:] not in neutral
                               else [flag], strict=True)  # fmt: skip
    kvtop_own = {flag for flag, field in launch.KVTOP_SPELLINGS.items() if field != "model"}
    assert kvtop_own <= set(FLAG.findall(sections["kvtop"]))


def _flagged_error_messages(path: Path) -> Iterator[tuple[int, str]]:
    """(line, flag) for each flag an error raised in `path` names (its message or its field). A module whose text
    holds no `--` or no error's name can name none, and is not parsed (three in four of kvtop's modules)."""
    text = path.read_text(encoding="utf-8")
    if "--" not in text or not any(error in text for error in ERRORS):
        return
    for node in ast.walk(ast.parse(text)):
        name = getattr(node, "func", None)
        if not isinstance(node, ast.Call) or getattr(name, "id", getattr(name, "attr", None)) not in ERRORS:
            continue
        for sub in ast.walk(node):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                yield from ((node.lineno, flag) for flag in FLAG.findall(sub.value))


#: Which commands' parsers must hold the flags named by errors raised in a module (first match wins).
ERROR_SCOPES: list[tuple[str, tuple[str, ...]]] = [
    *((f"kvtop/commands/{name}.py", (name,)) for name in SUBCOMMANDS),
    ("kvtop/commands/tui*.py", ("kvtop",)),
    ("kvtop/cli.py", ("kvtop", "cluster")),  # a --demo-cluster written before a command: the TUI's and cluster's
    ("kvtop/ui/*", ("kvtop",)),
    ("kvtop/commands/node_args.py", ("snapshot", "diagnose", "export")),
    ("kvtop/commands/node_source.py", ("snapshot", "diagnose", "export", "kvtop")),
    ("kvtop/sources/scenario.py", ("snapshot", "diagnose", "export", "kvtop")),
    ("kvtop/sources/demo_starts.py", ("snapshot", "diagnose", "export", "kvtop")),  # the demo's table of starts
    ("kvtop/sources/exporter*.py", ("export",)),
    ("kvtop/sources/prometheus*.py", ("cluster", "kvtop")),
    ("kvtop/commands/demo_cluster.py", ("cluster", "kvtop")),
    ("kvtop/domain/span.py", ("plan",)),  # nodes: the planner's --nodes, a launch's own node flags
    ("kvtop/domain/engines/*/span.py", ("plan",)),
    ("kvtop/domain/placement.py", ("plan",)),
    ("kvtop/domain/layouts.py", ("plan",)),
    ("kvtop/sources/preferences_file.py", ("kvtop",)),  # the TUI's settings file (--config)
    ("kvtop/domain/engine_log*.py", ("explain",)),
    ("kvtop/sources/engine_log*.py", ("explain",)),
    ("kvtop/commands/deployment_args.py", ("plan",)),  # read with getattr: only plan has the flags
    ("kvtop/commands/*", ("plan", "explain", "probe")),  # common.py, probe_gpu.py, render_*.py
    ("kvtop/sources/hub.py", ("plan", "explain", "probe")),
    ("kvtop/sources/hub_download.py", ("plan", "explain", "probe")),
    ("kvtop/sources/engines/*/gguf_file.py", ("plan", "explain", "probe")),  # a model file, read for --model
    ("kvtop/domain/*", ("plan", "explain", "probe")),  # the ledger's rules: reached through the model flags
]


def _scope(path: Path) -> tuple[str, ...]:
    relative = path.relative_to(REPO).as_posix()
    return next((commands for pattern, commands in ERROR_SCOPES if fnmatch(relative, pattern)), ())


def test_every_flag_an_error_message_names_exists_in_that_commands_parser() -> None:
    wrong, unscoped = [], []
    for path in sorted((REPO / "kvtop").rglob("*.py")):
        for line, flag in _flagged_error_messages(path):
            if flag in ENGINE_ONLY:
                continue
            commands = _scope(path)
            if not commands:
                unscoped.append(f"{path.relative_to(REPO)}:{line}")
            where = f"{path.relative_to(REPO)}:{line}"
            wrong += [f"{where} names {flag}, which `{c}` lacks" for c in commands if not accepts(c, flag)]
    assert not unscoped, f"map these modules to their commands in ERROR_SCOPES: {unscoped}"
    assert not wrong


def test_the_probe_gpu_is_an_index_and_a_model_name_is_one_clear_line(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["probe", "--model", "llama-3-70b", "--tp", "8", "--tokens", "1000", "--gpu", "H100"]
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1
    assert "kvtop: error: --gpu: expected the index of the GPU to probe (NVML order, as nvidia-smi lists them), e.g. 0 (got 'H100')" in err
    with pytest.raises(SystemExit):
        main(["probe", "--help"])
    out = capsys.readouterr().out
    assert "--gpu N" in out and "index of the GPU to probe" in out and "GPU model" not in out


@pytest.mark.parametrize(
    ("flag", "value", "said"),
    [
        ("--gpu", "nonsense", "expected the index of the GPU to probe (NVML order, as nvidia-smi lists them), e.g. 0"),
        ("--gpu", "-1", "expected the index of the GPU to probe (NVML order, as nvidia-smi lists them), e.g. 0"),
        ("--tokens", "x", "expected a whole number, e.g. 4096"),
        ("--chunk-tokens", "1.5", "expected a whole number, e.g. 4096"),
    ],
)
def test_a_probe_number_that_is_not_one_says_what_to_pass(
    capsys: pytest.CaptureFixture[str], flag: str, value: str, said: str
) -> None:
    """Session 61: `kvtop probe --gpu nonsense` answered argparse's bare "invalid int value"; like every other typed
    flag (`--timeout`), the one line now names the flag and what it takes."""
    with pytest.raises(SystemExit) as exit_info:
        main(["probe", flag, value])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1
    assert f"kvtop: error: {flag}: {said} (got {value!r})" in err


@pytest.mark.parametrize(("flag", "value"), [("--nodes", "x"), ("--gpus-per-node", "1.5")])
def test_a_plan_count_that_is_not_one_says_what_to_pass(capsys: pytest.CaptureFixture[str], flag: str, value: str) -> None:
    """Session 61: `kvtop plan --nodes x` answered argparse's bare "invalid int value", unlike probe's counts."""
    with pytest.raises(SystemExit) as exit_info:
        main(["plan", flag, value])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1
    assert f"kvtop: error: {flag}: expected a whole number, e.g. 2 (got {value!r})" in err
    assert "invalid int value" not in err


def test_plan_help_lists_engine_version_which_plan_accepts(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["plan", "--help"])
    assert "--engine-version V" in capsys.readouterr().out
    assert main(["plan", "--model", "qwen2.5-7b-instruct", "--engine", "vllm", "--engine-version", "0.20.1"]) == 0
    with pytest.raises(InputError):
        launch.parse_flags("vllm", ["--no-such-flag", "1"], strict=True)


def test_explain_help_names_every_engine_and_standard_input(capsys) -> None:
    """Each engine whose log kvtop reads (LMDeploy too), and `-` for a log piped in."""
    from kvtop.cli import main
    from kvtop.domain.engines.registry import ENGINE_IDS, display_name

    with pytest.raises(SystemExit):
        main(["explain", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert all(display_name(engine) in text for engine in ENGINE_IDS) and "LMDeploy" in text
    assert "or - to read it from standard input" in text


def test_the_neutral_flags_are_listed_by_kind_and_an_unclassified_engine_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    """`--help` counts vLLM's 138 memory-neutral flags (flags_neutral.py: the wheels' argparse calls; v0.34.0 adds 5) on one line;
    `--list-neutral-flags vllm` lists them by kind with each kind's reason. SGLang's 81 (engines/sglang/flags_neutral.py,
    the wheels' server_args.py) likewise; LMDeploy's are not classified yet."""
    with pytest.raises(SystemExit) as done:
        main(["plan", "--list-neutral-flags", "vllm"])
    out = capsys.readouterr().out
    assert done.value.code == 0 and out.startswith("vLLM's flags with no effect on GPU memory")
    assert "  request defaults: per-request defaults and order" in out
    assert "--seed" in out.split() and "--[no-]disable-fastapi-docs" in out.split() and "--cpu-offload-gb" not in out
    with pytest.raises(SystemExit) as done:
        main(["plan", "--help"])
    assert "accepted, no effect on memory: 137 flags (API server," in " ".join(capsys.readouterr().out.split())
    with pytest.raises(SystemExit) as done:
        main(["plan", "--list-neutral-flags", "sglang"])
    out = capsys.readouterr().out
    assert done.value.code == 0 and out.startswith("SGLang's flags with no effect on GPU memory")
    assert "--reasoning-parser" in out.split() and "--enable-torch-compile" not in out
    with pytest.raises(SystemExit) as done:
        main(["explain", "--list-neutral-flags", "lmdeploy"])
    err = capsys.readouterr().err
    assert done.value.code == 2 and err.count("\n") == 1 and "LMDeploy's flags are not classified yet" in err
    assert "(only SGLang's and vLLM's are)" in err  # the engines by their names, as the refusal's first one


@pytest.mark.parametrize("command", list(SUMMARIES))
def test_each_commands_help_says_what_it_does(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`kvtop snapshot --help` opened on its usage and options alone: the one-line summary `kvtop --help` lists
    (kvtop.commands.SUMMARIES) is its description too."""
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert " ".join(SUMMARIES[command].split()) in out

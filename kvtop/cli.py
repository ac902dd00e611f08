"""The composition root: parses arguments, builds the real sources, runs a command or the app.

Subcommands live in `kvtop.commands.*`; each registers its parser and a handler. Only the
command named on the command line is imported: `kvtop --help` lists the others from their
one-line summaries (kvtop.commands.SUMMARIES) and loads no model code, and heavy libraries
(pydantic models, textual, torch, pynvml, httpx) are imported only by the command that needs them.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from kvtop import __version__
from kvtop.cli_args import add_calibration_store, ca_file, prometheus_url, refresh_seconds, token_file
from kvtop.commands import SUMMARIES
from kvtop.domain.errors import InputError, KvtopError, UnknownFlagError

_NEGATIVE_VALUE = re.compile(r"-\.?\d")
"""A token that starts like a negative figure ("-5GiB", "-0.1", "-.5"): a value, never an option of kvtop's."""


def _redacted(text: str) -> str:
    """An error line with any secret in it masked, kept on one line: a line break or control character
    quoted from a file is shown escaped, so it can neither split the line nor drive the terminal."""
    from kvtop.commands.output import error_line  # only when an error is shown: `kvtop --help` stays light

    return error_line(text)


def _glued_key_masked(message: str) -> str:
    """argparse's `argument -h/--help: ignored explicit argument 'ftKEY'` for `-hftKEY` (llama.cpp's `-hft` with a key
    glued to it, read as kvtop's `-h`): the rest of a short secret flag's word masked (`secret_names.glued_secret_flag`)."""
    from kvtop.domain.secret_names import glued_secret_flag

    glued = _EXPLICIT_ARGUMENT.search(message)
    if glued is None or glued_secret_flag(glued[1] + glued[2]) is None:
        return message
    return f"{message[: glued.start(2)]}***'"


_ARGPARSE_ARGUMENT = re.compile(r"^argument (?=[^:\s]+: )")  # argparse's word before the flag it names
_EXPLICIT_ARGUMENT = re.compile(r"argument (-[A-Za-z0-9])\b[^:]*: ignored explicit argument '(.*)'$")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: a person reads one clear line, never a usage dump.

    `epilog_fn` builds the epilog only when help is printed (the engine-flag listing imports every
    engine's package: a command that runs needs only its own engine's)."""

    def __init__(self, *args: Any, epilog_fn: Callable[[], str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._epilog_fn = epilog_fn

    def format_help(self) -> str:
        if self._epilog_fn is not None and self.epilog is None:
            self.epilog = self._epilog_fn()
        return super().format_help()

    def error(self, message: str) -> None:  # type: ignore[override]
        from kvtop.commands.output import error_text

        said = _redacted(_glued_key_masked(message))
        # argparse's 'argument --timeout: …' in the form every other error takes ('kvtop: error: --tp: …'): one prefix,
        # the flag first; the command stays named in the hint
        said = f"{_ARGPARSE_ARGUMENT.sub('', said, count=1)} (see {self.prog} --help)"
        print(error_text("kvtop: error: ", said, sys.stderr), file=sys.stderr)
        raise SystemExit(2)


DEMO_OPTIONS = ("--demo", "--demo-cluster")
CLUSTER = "cluster"  # the command whose own --demo-cluster reads a demo cluster given before it


def _demo_scenario(argv: Sequence[str]) -> list[str]:
    """`kvtop --demo snapshot`, `kvtop --demo-cluster cluster`: the command after the option is no demo name.
    A --demo-cluster before `cluster` moves after it (its own option, whose default would hide the one given
    before it); before another command it is refused saying how to write it (no other command reads it)."""
    out = list(argv)
    for index, token in enumerate(out[:-1]):
        if token in DEMO_OPTIONS and out[index + 1] in COMMANDS:
            out[index] = f"{token}=default"
    command = next((index for index, token in enumerate(out) if token in COMMANDS), None)
    if command is None:
        return out
    before: list[str] = []
    moved: list[str] = []
    index = 0
    while index < command:
        token = out[index]
        if token == "--demo-cluster":  # its name is the next token (an option or nothing: the default)
            named = index + 1 < command and not out[index + 1].startswith("-")
            moved.append(f"--demo-cluster={out[index + 1]}" if named else "--demo-cluster=default")
            index += 2 if named else 1
            continue
        (moved if token.startswith("--demo-cluster=") else before).append(token)
        index += 1
    if moved and out[command] != CLUSTER:
        raise InputError(f"`kvtop {out[command]}` reads no demo cluster (the cluster view: kvtop --demo-cluster, "
                         f"or kvtop {CLUSTER} --demo-cluster [NAME])", field="--demo-cluster")  # fmt: skip
    return [*before, out[command], *moved, *out[command + 1:]]


def _value_options(parser: argparse.ArgumentParser) -> set[str]:
    """Every option string of the parser and its subcommands that takes a value."""
    found: set[str] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _value_options(sub)
        elif action.option_strings and action.nargs != 0:
            found.update(action.option_strings)
    return found


def _join_values(argv: Sequence[str], parser: argparse.ArgumentParser) -> list[str]:
    """Tokens with `--opt -5GiB` joined as `--opt=-5GiB` for every option that takes a value: argparse
    reads a value that starts with "-" and is no plain number as a missing value, and the error
    ("expected one argument") would hide the field's own check ("must be above 0")."""
    takes_value = _value_options(parser)
    out: list[str] = []
    index = 0
    while index < len(argv):
        token = argv[index]
        following = argv[index + 1] if index + 1 < len(argv) else ""
        if token in takes_value and token.startswith("--") and _NEGATIVE_VALUE.match(following):
            out.append(f"{token}={following}")
            index += 2
            continue
        out.append(token)
        index += 1
    return out


COMMANDS = tuple(SUMMARIES)


def _command_parser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser | None:
    """The parser of one command (`plan`, `explain`, …), None where kvtop has no such command."""
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return subparsers.choices.get(command)


def _keep_given_before(parser: argparse.ArgumentParser, args: argparse.Namespace, tokens: list[str]) -> None:
    """An option given before the command that the command takes too (`kvtop --token-file F cluster`,
    `kvtop --no-calibration-store plan …`): argparse writes the command's default over the value given before
    it, so that value is set again, unless the command's own option was given (it is the nearer)."""
    command = next((index for index, token in enumerate(tokens) if token in COMMANDS), None)
    if not command:
        return
    own = _command_parser(parser, tokens[command])
    top = {option: action for action in parser._actions for option in action.option_strings}
    shared = [
        (action, top[option])
        for action in (own._actions if own is not None else ())
        for option in action.option_strings[:1]
        if option in top and action.default is not argparse.SUPPRESS and option not in ("-h", "--help")
    ]
    if not shared:
        return
    before, _ = parser.parse_known_args(tokens[:command])
    for action, outer in shared:
        value = getattr(before, outer.dest, outer.default)
        if value != outer.default and getattr(args, action.dest, action.default) == action.default:
            setattr(args, action.dest, value)


def _given_after_command(
    parser: argparse.ArgumentParser, err: InputError, extra: Sequence[str], command: str
) -> InputError | None:
    """An engine flag refused that is one of kvtop's own options, given after the command (`kvtop probe --model M
    --demo`): the engine's parse named it "not a flag of SGLang", though it is kvtop's; say where it goes."""
    option = err.field
    top = {o for action in parser._actions for o in action.option_strings} - {"-h", "--help"}
    if option not in top or not any(token.split("=", 1)[0] == option for token in extra):
        return None
    if command == "explain" and option == "--engine-log":  # before the command it would not reach explain either
        return InputError("explain reads the log as its own argument: kvtop explain LOG (--engine-log is for the "
                          "live views: kvtop --engine-log LOG snapshot)", field=option)  # fmt: skip
    return InputError(
        f"an option of kvtop itself, not of the engine: give it before the command (kvtop {option} … {command} …)",
        field=option,
    )


ENGINE_ONLY = "--"  # the tokens after it are the engine's flags only (`kvtop plan --model M -- --mem-fraction 0.8`)


def _kvtop_options(parser: argparse.ArgumentParser, command: str) -> list[str]:
    """kvtop's own option strings: the command's and kvtop's before it."""
    own = _command_parser(parser, command)
    parsers = [parser, *([own] if own is not None else [])]
    return [o for p in parsers for a in p._actions for o in a.option_strings if o.startswith("--") and o != "--help"]


def _not_kvtops(parser: argparse.ArgumentParser, err: UnknownFlagError, before: Sequence[str], command: str) -> InputError:
    """A flag typed before `--` that is neither kvtop's nor one the engine has that kvtop knows (`--gpu-memroy`): a typo
    of kvtop's own is named as such with the option it most looks like; the engine is named only by its own flag."""
    typed = err.field or ""
    if not any(token.split("=", 1)[0] == typed for token in before):
        return err if err.alike is None else InputError(f"{err.detail} (like {err.alike}?)", field=typed)
    options = {option.lstrip("-"): option for option in _kvtop_options(parser, command)}
    near = difflib.get_close_matches(typed.lstrip("-"), list(options), n=1, cutoff=0.75)
    if near:
        also = f" (or {err.engine_name}'s {err.alike}?)" if err.alike else ""
        return InputError(f"not a kvtop flag: did you mean {options[near[0]]}?{also}", field=typed)
    if err.alike:
        return InputError(f"not a kvtop flag, nor one of {err.engine_name}'s that kvtop knows: did you mean "
                          f"{err.engine_name}'s {err.alike}?", field=typed)  # fmt: skip
    return InputError(f"not a kvtop flag (kvtop {command} --help lists them), nor one of {err.engine_name}'s that "
                      "kvtop knows", field=typed)  # fmt: skip


def _unrecognized(parser: argparse.ArgumentParser, tokens: Sequence[str], extra: Sequence[str], command: str) -> NoReturn:
    """Refuse arguments no parser took, pointing at the help that lists what is taken there: the command's own
    (`kvtop snapshot --bogus`: 'see kvtop snapshot --help', was 'kvtop --help', which lists no option of snapshot)
    where every one was given after the command, else kvtop's."""
    message = f"unrecognized arguments: {_redacted(' '.join(extra))}"
    after = list(tokens[tokens.index(command) + 1 :]) if command in tokens else []
    own = _command_parser(parser, command)
    target: argparse.ArgumentParser = own if own is not None and all(token in after for token in extra) else parser
    target.error(message)


def build_parser(only: str | None = None, *, full: bool = True) -> argparse.ArgumentParser:
    """The CLI with every subcommand's parser; with `only`, just that one (a faster start).

    With `full=False` no command module is imported: each command is listed by its summary,
    enough for `kvtop --help` and the TUI, which name no command.
    """
    parser = _Parser(
        prog="kvtop",
        description="KV-cache capacity per GPU rank: live, predicted, and where the gap went.",
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=f"kvtop {__version__} (package kvtop-ledger)")
    parser.add_argument("--demo", nargs="?", const="default", default=None, metavar="SCENARIO",
                        help="run on a simulated node (a scenario name or file)")  # fmt: skip
    parser.add_argument("--theme", default=None, metavar="NAME", help="colour theme, e.g. dark (also light, high-contrast)")
    parser.add_argument(
        "--read-only", "--readonly", action="store_true",
        help="hide actions that change anything (the probe, signals); the header says READ-ONLY",
    )
    parser.add_argument("--engine-log", default=None, metavar="PATH", help="attach an engine startup log")
    parser.add_argument(
        "--prometheus",
        default=None,
        metavar="URL",
        type=prometheus_url,
        help="cluster view from a Prometheus server",
    )
    parser.add_argument("--demo-cluster", nargs="?", const="default", default=None, metavar="NAME",
                        help="cluster view of a simulated cluster (examples/clusters; default 'demo')")  # fmt: skip
    parser.add_argument("--token-file", default=None, metavar="PATH", type=token_file,
                        help="bearer token for --prometheus (else $KVTOP_PROMETHEUS_TOKEN); never printed")  # fmt: skip
    parser.add_argument(
        "--ca-file",
        default=None,
        metavar="PATH",
        type=ca_file,
        help="CA bundle to verify --prometheus over TLS",
    )
    parser.add_argument(
        "--interval",
        type=refresh_seconds,
        default=None,
        metavar="SECONDS",
        help="refresh interval (default: the config file's, else 1 s)",
    )
    parser.add_argument(
        "--config", default=None, metavar="PATH",
        help="the terminal UI's settings file (default $XDG_CONFIG_HOME/kvtop/config.toml, else "
        "~/.config/kvtop/config.toml): theme, sort, columns and interval, saved when you change them",
    )  # fmt: skip
    add_calibration_store(parser)  # the TUI's planner reads the store as `plan` does
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        if not full or (only is not None and name != only):
            subparsers.add_parser(name, help=SUMMARIES[name], add_help=False)
            continue
        importlib.import_module(f"kvtop.commands.{name}").register(subparsers)
        own = subparsers.choices[name]
        own.description = own.description or SUMMARIES[name]  # `kvtop snapshot --help` says what snapshot does
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        tokens = _demo_scenario(sys.argv[1:] if argv is None else argv)
        named = next((t for t in tokens if t in COMMANDS), None)
        parser = build_parser(named, full=named is not None)
        joined = _join_values(tokens, parser)
        args, extra = parser.parse_known_args(joined)
        _keep_given_before(parser, args, joined)
        if args.command is None:
            if extra:
                parser.error(f"unrecognized arguments: {_redacted(' '.join(extra))}")
            from kvtop.commands.tui import run_tui

            return run_tui(args)
        if extra and not getattr(args, "accepts_engine_flags", False):
            _unrecognized(parser, joined, extra, args.command)
        split = extra.index(ENGINE_ONLY) if ENGINE_ONLY in extra else len(extra)
        before, extra = extra[:split], [*extra[:split], *extra[split + 1 :]]
        try:
            return int(args.handler(args, extra))
        except UnknownFlagError as err:
            raise _given_after_command(parser, err, extra, args.command) or _not_kvtops(parser, err, before, args.command) from None
        except InputError as err:
            raise _given_after_command(parser, err, extra, args.command) or err from None
    except KvtopError as err:
        from kvtop.commands.output import error_of, error_text

        print(error_text("kvtop: error: ", error_of(err), sys.stderr), file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("kvtop: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as err:  # a bug: reported as Python would, with no secret in it (`crash_report`)
        from kvtop.commands.output import crash_report

        print(crash_report(err), file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())

"""The composition root: parses arguments, builds the real sources, runs a command or the app.

Subcommands live in `kvtop.commands.*`; each registers its parser and a handler. Heavy
libraries (textual, torch, pynvml) are imported only by the command that needs them, so
`kvtop plan` starts fast and never loads the UI.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from kvtop import __version__
from kvtop.domain.errors import KvtopError
from kvtop.domain.redact import redact_argv, redact_text

# Options whose value may look like a flag ("-5GiB"): joined as --opt=value before argparse sees them.
_VALUE_OPTIONS = ("--gpu-memory", "--free-memory", "--free-after-load", "--weights-memory", "--non-kv-memory",
                  "--reserve", "--memory-limit", "--tokens")  # fmt: skip


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: a person reads one clear line, never a usage dump."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"{self.prog}: error: {redact_text(message)} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


def _join_values(argv: Sequence[str]) -> list[str]:
    out: list[str] = []
    items = list(argv)
    index = 0
    while index < len(items):
        token = items[index]
        if token == "--demo" and index + 1 < len(items) and items[index + 1] in COMMANDS:
            out.append("--demo=default")  # `kvtop --demo snapshot`: the command is no scenario name
            index += 1
            continue
        if token in _VALUE_OPTIONS and index + 1 < len(items) and items[index + 1][:1] == "-":
            out.append(f"{token}={items[index + 1]}")
            index += 2
            continue
        out.append(token)
        index += 1
    return out


COMMANDS = ("plan", "explain", "snapshot", "probe", "diagnose", "export", "cluster")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole CLI; with `only`, just that subcommand is imported (a faster start)."""
    parser = _Parser(
        prog="kvtop",
        description="KV-cache capacity per GPU rank: live, predicted, and where the gap went.",
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=f"kvtop {__version__}")
    parser.add_argument("--demo", nargs="?", const="default", default=None, metavar="SCENARIO",
                        help="run on a simulated node (a scenario name or file)")  # fmt: skip
    parser.add_argument("--theme", default=None, help="colour theme (dark, light, high-contrast)")
    parser.add_argument(
        "--read-only", action="store_true", help="hide actions that change anything (the probe)"
    )
    parser.add_argument("--engine-log", default=None, help="attach an engine startup log")
    parser.add_argument(
        "--prometheus", default=None, metavar="URL", help="cluster view from a Prometheus server"
    )
    parser.add_argument("--token-file", default=None, metavar="PATH",
                        help="bearer token for --prometheus (else $KVTOP_PROMETHEUS_TOKEN); never printed")  # fmt: skip
    parser.add_argument(
        "--ca-file", default=None, metavar="PATH", help="CA bundle to verify --prometheus over TLS"
    )
    parser.add_argument("--interval", type=float, default=1.0, help="refresh interval in seconds")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in (only,) if only else COMMANDS:
        try:
            module = importlib.import_module(f"kvtop.commands.{name}")
        except ModuleNotFoundError as err:
            if err.name != f"kvtop.commands.{name}":
                raise
            continue
        if hasattr(module, "register"):
            module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    tokens = _join_values(sys.argv[1:] if argv is None else argv)
    named = next((t for t in tokens if t in COMMANDS), None)
    parser = build_parser(named)
    args, extra = parser.parse_known_args(tokens)
    try:
        if args.command is None:
            if extra:
                parser.error(f"unrecognized arguments: {' '.join(redact_argv(extra))}")
            from kvtop.commands.tui import run_tui

            return run_tui(args)
        if extra and not getattr(args, "accepts_engine_flags", False):
            parser.error(f"unrecognized arguments: {' '.join(redact_argv(extra))}")
        return int(args.handler(args, extra))
    except KvtopError as err:
        print(f"kvtop: error: {redact_text(str(err))}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("kvtop: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())

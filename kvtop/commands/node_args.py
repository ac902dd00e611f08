"""Arguments and set-up shared by the commands that read the node (snapshot, diagnose, export).

`--demo` is accepted after the subcommand as well as before it (`kvtop snapshot --demo X` and
`kvtop --demo X snapshot`); `--engine-log` likewise.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from kvtop.cli_args import positive_seconds
from kvtop.domain.node import NodeSnapshot
from kvtop.domain.ports import SnapshotSource


def add_node_arguments(parser: argparse.ArgumentParser, *, verb: str, http_timeout: bool = True) -> None:
    parser.add_argument("--demo", dest="demo_scenario", nargs="?", const="default", default=None, metavar="SCENARIO",
                        help=f"{verb} a simulated node (a scenario name or .json path; 'default' = llama70b-tp8-sglang)")  # fmt: skip
    parser.add_argument("--engine-log", dest="node_engine_log", default=None, metavar="PATH",
                        help="an engine startup log: its token capacity is used when the engine's endpoints give none")  # fmt: skip
    if http_timeout:
        parser.add_argument("--http-timeout", type=positive_seconds, default=1.0, metavar="SECONDS",
                            help="timeout for each engine endpoint (default 1 s)")  # fmt: skip
        parser.add_argument("--timeout", dest="node_timeout", type=positive_seconds, default=10.0, metavar="SECONDS",
                            help="deadline for reading every engine's endpoints (default 10 s); an engine "
                            "not read in time is named 'timeout'")  # fmt: skip


def demo_of(args: argparse.Namespace) -> str | None:
    """The scenario asked for after the subcommand, else before it, else None (the live node)."""
    scenario = getattr(args, "demo_scenario", None)
    return scenario if scenario is not None else getattr(args, "demo", None)


def open_source(args: argparse.Namespace) -> SnapshotSource:
    from kvtop.commands.node_source import open_node_source

    log = getattr(args, "node_engine_log", None) or getattr(args, "engine_log", None)
    return open_node_source(
        demo_of(args),
        engine_log=Path(log) if log else None,
        http_timeout_s=getattr(args, "http_timeout", 1.0),
        deadline_s=getattr(args, "node_timeout", None),
    )


def collect_once(args: argparse.Namespace) -> NodeSnapshot:
    """One snapshot of the node, the source closed afterwards."""
    source = open_source(args)
    try:
        return source.collect()
    finally:
        close = getattr(source, "close", None)
        if callable(close):
            close()

"""`kvtop snapshot`: the node once, like `nvidia-smi` but per engine rank and with the ledger.

GPUs, the processes on them with their engine and rank, and each rank's observed bytes beside
its predicted ledger. `--json` prints the stable contract (see render_snapshot). Without a driver
the demo node is shown with a notice; `--demo [SCENARIO]` asks for it explicitly.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from kvtop.domain.observe import NvmlState


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "snapshot", help="one-shot view of the node: GPUs, processes, observed vs predicted per rank", allow_abbrev=False,
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the stable JSON contract")
    parser.add_argument("--demo", dest="demo_scenario", nargs="?", const="default", default=None, metavar="SCENARIO",
                        help="show a simulated node (a scenario name or .json path; 'default' = llama70b-tp8-sglang)")  # fmt: skip
    parser.add_argument("--engine-log", dest="snapshot_engine_log", default=None, metavar="PATH",
                        help="an engine startup log: its token capacity is shown when the engine's endpoints give none")  # fmt: skip
    parser.add_argument("--http-timeout", type=float, default=1.0, metavar="SECONDS",
                        help="timeout for each engine endpoint (default 1 s)")  # fmt: skip
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from kvtop.commands.render_snapshot import snapshot_json, snapshot_text
    from kvtop.sources.live import open_node_source

    demo = args.demo_scenario if args.demo_scenario is not None else getattr(args, "demo", None)
    log = args.snapshot_engine_log or getattr(args, "engine_log", None)
    source = open_node_source(demo, engine_log=Path(log) if log else None, http_timeout_s=args.http_timeout)
    try:
        snapshot = source.collect()
    finally:
        close = getattr(source, "close", None)
        if callable(close):
            close()
    if args.json:
        json.dump(snapshot_json(snapshot), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(snapshot_text(snapshot))
    if snapshot.observation.nvml_state is not NvmlState.OK:
        print(f"kvtop: error: {snapshot.observation.nvml_message}", file=sys.stderr)
        return 1
    return 0

"""`kvtop snapshot`: the node once, like `nvidia-smi` but per engine rank and with the ledger.

GPUs, the processes on them with their engine and rank, and each rank's observed bytes beside
its predicted ledger. `--json` prints the stable contract (see render_snapshot). Without a driver
it exits 2 with one line naming `--demo`: a simulated node is shown only when asked for, and then
every output says so (`"source": "demo:<scenario>"`, `"nvml": {"state": "demo"}`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from kvtop.commands import SUMMARIES
from kvtop.commands.node_args import add_node_arguments, collect_once
from kvtop.commands.output import print_error, print_json, print_text


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "snapshot", help=SUMMARIES["snapshot"], allow_abbrev=False,
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the stable JSON contract")
    add_node_arguments(parser, verb="show")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from kvtop.commands.render_snapshot import snapshot_json, snapshot_text

    snapshot = collect_once(args)
    if args.json:
        print_json(snapshot_json(snapshot))
    else:
        print_text(snapshot_text(snapshot))
    if snapshot.observation.nvml_state.failed:
        print_error(snapshot.observation.nvml_message or "NVML failed")
        return 1
    return 0

"""`kvtop export`: serve this node's ledgers as Prometheus metrics (see docs/metrics.md).

Binds to loopback unless `--allow-remote` is given. Ctrl-C or SIGTERM stop it cleanly (exit 0).
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence

from kvtop.cli_args import label_name, positive_seconds, refresh_seconds
from kvtop.commands import SUMMARIES
from kvtop.commands.node_args import add_node_arguments, open_source
from kvtop.commands.output import print_text

DEFAULT_INTERVAL_S = 5.0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "export",
        help=SUMMARIES["export"],
        allow_abbrev=False,
    )
    parser.add_argument(
        "--listen",
        default="127.0.0.1:9401",
        metavar="HOST:PORT",
        help="address to serve /metrics and /healthz on (default 127.0.0.1:9401; port 0 picks one)",
    )
    parser.add_argument(
        "--allow-remote", action="store_true", help="allow a --listen address other than loopback"
    )
    add_node_arguments(parser, verb="export", http_timeout=False)
    parser.add_argument(
        "--interval",
        dest="export_interval",
        type=refresh_seconds,
        default=DEFAULT_INTERVAL_S,
        metavar="SECONDS",
        help=f"seconds between collections (default {DEFAULT_INTERVAL_S:g}); scrapes serve the last one",
    )
    parser.add_argument(
        "--stale-after",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        help="/healthz answers 503 once the served collection is older than this (default 3 × --interval)",
    )
    parser.add_argument(
        "--node-name",
        default=None,
        type=label_name,
        metavar="NAME",
        help="the node label on kvtop_node_info (default: this host's name; under --demo, demo:<scenario>)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from kvtop.sources.exporter import Exporter, SnapshotCollector, default_findings, parse_listen

    address = parse_listen(args.listen, allow_remote=args.allow_remote)
    source = open_source(args)
    collector = SnapshotCollector(source, node=args.node_name, findings=default_findings())
    exporter = Exporter(collector, address, args.export_interval, stale_after_s=args.stale_after)
    previous = signal.signal(signal.SIGTERM, lambda *_: exporter.stop())
    shown = f"[{address.host}]" if ":" in address.host else address.host
    demo = ' (a simulated node: every series carries demo="1")' if collector.demo else ""
    print_text(
        f"kvtop export: serving {source.label}{demo} on http://{shown}:{exporter.port}/metrics "
        f"and /healthz (every {exporter.interval_s:g} s, stale after {exporter.stale_after_s:g} s; "
        "Ctrl-C stops)",
        file=sys.stderr,
        flush=True,
    )
    try:
        exporter.wait()
    except KeyboardInterrupt:
        print("kvtop export: stopped", file=sys.stderr)
    finally:
        exporter.close()
        signal.signal(signal.SIGTERM, previous)
    return 0

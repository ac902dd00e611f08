"""`kvtop cluster --prometheus URL`: every node worst-first, read through a Prometheus server.

Exit 0 with the view; exit 2 with one line when Prometheus is unreachable, slow, refuses the
token or answers with an error (the state is named in the line).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kvtop.cli_args import ca_file, check_env_token, positive_seconds, prometheus_url, token_file
from kvtop.commands import SUMMARIES
from kvtop.commands.common import emit
from kvtop.commands.render_cluster import cluster_json, engines_text
from kvtop.domain.cluster import ClusterEngine, ClusterNode, ClusterView
from kvtop.domain.errors import InputError
from kvtop.domain.wording import counted
from kvtop.units import fmt_gib, fmt_gib_figure

# a node's "now" where it reports no live figure of its own: kvtop's prediction (the row says so)
PREDICTED_HERE = "no live figure from this node"

if TYPE_CHECKING:
    from kvtop.domain.ports import ClusterReaderPort
    from kvtop.sources.prometheus import PrometheusClient


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "cluster", help=SUMMARIES["cluster"], allow_abbrev=False
    )
    parser.add_argument(
        "--prometheus",
        dest="prometheus_url",
        default=None,
        metavar="URL",
        type=prometheus_url,
        help="the Prometheus server, e.g. https://prometheus.example:9090",
    )
    parser.add_argument(
        "--token-file",
        default=None,
        metavar="PATH",
        type=token_file,
        help="a file holding a bearer token (else $KVTOP_PROMETHEUS_TOKEN); never printed",
    )
    parser.add_argument(
        "--ca-file",
        default=None,
        metavar="PATH",
        type=ca_file,
        help="a CA bundle to verify the server's certificate with",
    )
    parser.add_argument("--timeout", type=positive_seconds, default=15.0, metavar="SECONDS",
                        help="the whole answer's deadline, every query within it (default 15)")  # fmt: skip
    parser.add_argument("--stale-after", type=positive_seconds, default=120.0, metavar="SECONDS",
                        help="a target whose newest sample is older is marked stale (default 120)")  # fmt: skip
    parser.add_argument("--demo-cluster", nargs="?", const="default", default=None, metavar="NAME",
                        help="read a simulated cluster (examples/clusters; default 'demo') through a synthetic "
                        "Prometheus instead of a server")  # fmt: skip
    parser.add_argument("--gpus", action="store_true",
                        help="also read and list every GPU of every node (the node list needs only the per-node "
                        "sums Prometheus computes; a 1,000-node cluster's per-GPU series are ~10x the answer)")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the cluster view as JSON")
    parser.set_defaults(handler=run)


def simulated_words(view: ClusterView) -> str:
    """' (simulated)' when every node is a demo, ' (1 of 12 simulated)' when some are, else nothing."""
    if view.simulated:
        return " (simulated)"
    return f" ({view.nodes_simulated} of {len(view.nodes)} simulated)" if view.nodes_simulated else ""


def _text(view: ClusterView) -> str:
    lines = [f"{view.prometheus_url}: {len(view.nodes)} nodes{simulated_words(view)}, {view.nodes_not_up} not up "
             "(worst first)"]  # fmt: skip
    if view.missing:
        lines.append(f"partial: no answer within --timeout {view.deadline_s:g} s for: {', '.join(view.missing)}")
    if view.ignored:
        lines.append(f"ignored {counted(len(view.ignored), 'sample')} that cannot be true (see each node's notes)")
    for node in view.nodes:
        age = f" {node.age_seconds:.0f}s" if node.age_seconds is not None else ""
        unexplained = "—" if node.unexplained_bytes is None else fmt_gib(node.unexplained_bytes)
        worst = node.worst_engine
        tokens = "—" if worst is None else tokens_text(worst)
        name = node.name if node.demo_scenario is None else f"{node.name} (demo)"
        lost = f" ({node.gpus_lost} lost)" if node.gpus_lost else ""
        count = node.gpu_summary.count if node.gpu_summary is not None else 0
        lines.append(f"{name:<28} {node.health.value}{age:<6} gpus {count:>2}{lost}  unexplained {unexplained:>10}  "
                     f"findings {node.findings_total:>2}  advice {node.advice_total:>2}  tokens {tokens}")  # fmt: skip
        lines += [f"    {note}" for note in node.notes]
        lines += [f"    {line}" for line in gpu_lines(node)]
    return "\n".join(lines + engines_text(view))


def tokens_text(engine: ClusterEngine) -> str:
    """What a rank holds now over its clean prediction and the share missing, as the cluster table's cell says it:
    '1,100,916 / 1,221,483 (−9.9%) per rank of sglang:41000', '957,616 / 958,080 (−464 tokens) …' where the
    share rounds to 0.0 %. A rank holding more than its clean prediction is short of nothing ('… (8,093 above
    the clean prediction)'). Where the node reports no live figure (the second node of a multi-node engine) "now"
    is kvtop's prediction, and says so: the engine's live figure, read on another node, may differ."""
    now, clean = engine.now_token_capacity, engine.clean_token_capacity
    if now is None:
        return "—"
    of = f" per rank of {engine.engine}"
    if clean is None:
        said = "engine metrics" if engine.from_engine_metrics else "live"
        return f"{now:,} ({said}, no clean prediction){of}"
    predicted = engine.live_token_capacity is None
    text = f"{now:,}{' predicted' if predicted else ''} / {clean:,}"
    short = engine.shortfall_tokens or 0
    if short < 0:
        text += f" ({-short:,} above the clean prediction)"
    elif engine.shortfall_said is not None:
        text += f" ({engine.shortfall_said})"
    return text + of + (f" — {PREDICTED_HERE}" if predicted else "")


def gpu_lines(node: ClusterNode) -> list[str]:
    """One line per GPU when every GPU was read (`--gpus`): 'GPU 3 NVIDIA H20: 90.1 / 95.6 GiB used (kvtop)'."""
    lines = []
    for gpu in node.gpus or ():
        used = "—" if gpu.used_bytes is None else fmt_gib_figure(gpu.used_bytes, 1)
        total = "—" if gpu.total_bytes is None else fmt_gib(gpu.total_bytes, 1)
        state = f", {gpu.state}" if gpu.state not in (None, "ok") else ""
        lines.append(f"GPU {gpu.gpu} {gpu.name or '?'}: {used} / {total} used ({gpu.source.value}{state})")
    return lines


def refuse_with_demo(url: str | None, token_file: str | None, ca_file: str | None) -> None:
    """A demo cluster reads a synthetic Prometheus in this process: a server, its token and its CA would go unused,
    so each is refused by name rather than dropped without a word."""
    if url:
        raise InputError("a demo cluster or a Prometheus server, not both", field="--demo-cluster")
    for flag, given in (("--token-file", token_file), ("--ca-file", ca_file)):
        if given:
            raise InputError(
                "a demo cluster is read in this process and sends no request: this option would not be used",
                field=flag,
            )


def demo_reader(name: str, timeout_s: float, stale_after_s: float, *, gpus: bool = False) -> tuple[PrometheusClient, ClusterReaderPort]:
    """A client of the demo cluster's synthetic Prometheus (every node a demo scenario's exporter page) and
    the reader that collects the nodes before each read."""
    from kvtop.commands.demo_cluster import DEMO_PROMETHEUS_URL, DemoCluster, DemoClusterReader
    from kvtop.sources.prometheus import ClusterReader, PrometheusClient

    cluster = DemoCluster.open(name)
    client = PrometheusClient(DEMO_PROMETHEUS_URL, timeout_s=timeout_s, transport=cluster.transport())
    reader = ClusterReader(client, stale_after_s=stale_after_s, deadline_s=timeout_s, gpus=gpus)
    return client, DemoClusterReader(cluster, reader)


def run(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from kvtop.sources.prometheus import ClusterReader, PrometheusClient
    from kvtop.sources.prometheus_access import TOKEN_ENV, load_token

    url = args.prometheus_url or getattr(args, "prometheus", None)
    reader: ClusterReaderPort
    if args.demo_cluster is not None:
        refuse_with_demo(url, args.token_file, args.ca_file)
        client, reader = demo_reader(args.demo_cluster, args.timeout, args.stale_after, gpus=args.gpus)
    elif not url:
        raise InputError("no Prometheus server given (use --prometheus URL, or --demo-cluster)", field="--prometheus")
    else:
        check_env_token(TOKEN_ENV)
        client = PrometheusClient(
            url, token=load_token(args.token_file), timeout_s=args.timeout, ca_file=args.ca_file
        )
        reader = ClusterReader(client, stale_after_s=args.stale_after, deadline_s=args.timeout, gpus=args.gpus)
    try:
        view = reader.read()
    finally:
        client.close()
    emit(args.json, lambda: cluster_json(view), lambda: _text(view))
    return 0

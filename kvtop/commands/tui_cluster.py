"""`kvtop --prometheus URL`: the cluster TUI, every node worst-first, one node's dashboard on Enter.

Builds the Prometheus client (a bearer token from --token-file or $KVTOP_PROMETHEUS_TOKEN, never
printed; TLS always verified, --ca-file for a private CA), the cluster reader and a per-node
snapshot source, then runs `ClusterApp`. The UI never sees a concrete source.
"""

from __future__ import annotations

import argparse

from kvtop.domain.ports import ClusterReaderPort, SnapshotSource


def run_cluster_tui(args: argparse.Namespace) -> int:
    """Run the cluster app until the operator quits; the exit status is the app's return code (0)."""
    from kvtop.cli_args import check_env_token
    from kvtop.commands.tui_settings import interval_of, preferences_store, theme_named_where_given
    from kvtop.sources.hub import load_model
    from kvtop.sources.prometheus import DEFAULT_STALE_AFTER_S, ClusterReader, PrometheusClient
    from kvtop.sources.prometheus_access import TOKEN_ENV, load_token
    from kvtop.sources.prometheus_node import PrometheusNodeSource
    from kvtop.ui.cluster_app import ClusterApp
    from kvtop.ui.heap import settle_heap

    store = preferences_store(args)
    preferences = store.load()
    interval = interval_of(args, preferences)
    stale_after_s = float(getattr(args, "stale_after", None) or DEFAULT_STALE_AFTER_S)
    timeout_s = float(getattr(args, "timeout", None) or 5.0)  # each refresh's deadline, every query within it
    demo = getattr(args, "demo_cluster", None)
    reader: ClusterReaderPort
    if demo is not None:
        from kvtop.commands.cluster import demo_reader, refuse_with_demo

        refuse_with_demo(
            getattr(args, "prometheus", None), getattr(args, "token_file", None), getattr(args, "ca_file", None)
        )

        client, reader = demo_reader(demo, timeout_s, stale_after_s)
    else:
        check_env_token(TOKEN_ENV)
        client = PrometheusClient(
            args.prometheus, token=load_token(getattr(args, "token_file", None)),
            timeout_s=timeout_s, ca_file=getattr(args, "ca_file", None),
        )  # fmt: skip
        reader = ClusterReader(client, stale_after_s=stale_after_s, deadline_s=timeout_s)

    def node_source(name: str) -> SnapshotSource:
        return PrometheusNodeSource(client, name, stale_after_s=stale_after_s)

    try:
        with theme_named_where_given(args, store):
            app = ClusterApp(
                reader, node_source, load_model,
                theme=getattr(args, "theme", None) or preferences.theme, interval_s=interval, label=client.shown_url,
            )  # fmt: skip
        settle_heap()
        app.run()
    finally:
        client.close()
    return app.return_code or 0

"""The cluster's failure is a typed state (`ClusterFailure`): Prometheus's own named failure keeps its state, and is
said as it is; any other error is said as Prometheus failing. It was told apart by its text's 'prometheus ' prefix, so
an error of any other kind whose message began so ('prometheus client misconfigured' from a reader's own check) was
said as Prometheus's state."""

from __future__ import annotations

from kvtop.domain.cluster import ClusterFailure, PrometheusError, PrometheusState


def test_prometheus_named_failure_is_said_once() -> None:
    error = PrometheusError(PrometheusState.UNREACHABLE, "cannot reach http://prom:9090 (connection refused)")
    failure = ClusterFailure(str(error), error.state)
    assert failure.said == (
        "prometheus unreachable: cannot reach http://prom:9090 (connection refused); "
        "check the --prometheus URL and that Prometheus is running there"
    )


def test_only_an_unreachable_server_is_told_what_to_do() -> None:
    # a refused token or a bad query is not fixed by checking the URL: no advice is added to those
    assert str(PrometheusError(PrometheusState.UNAUTHORIZED, "http://prom:9090 refused the token (401)")) == (
        "prometheus unauthorized: http://prom:9090 refused the token (401)"
    )


def test_any_other_failure_is_said_as_prometheus_failing_whatever_its_text() -> None:
    assert ClusterFailure("RuntimeError: boom").said == "prometheus failing: RuntimeError: boom"
    assert ClusterFailure("prometheus client misconfigured").said == (
        "prometheus failing: prometheus client misconfigured"
    )

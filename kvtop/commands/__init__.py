"""Headless subcommands, one module each; `kvtop.cli` wires them together.

`SUMMARIES` is each subcommand's one-line help: `kvtop --help` lists the commands from it
without importing any of them (a command module may load the model code, textual or httpx);
each module's parser uses the same line.
"""

SUMMARIES: dict[str, str] = {
    "plan": "predict weights, KV bytes per token and token capacity per rank",
    "explain": "rebuild the KV capacity an engine's startup log reports, and say where it went",
    "snapshot": "one-shot view of the node: GPUs, processes, observed vs predicted per rank",
    "probe": "allocate real, engine-shaped KV pages to prove the headroom (always released)",
    "diagnose": "where each rank's missing KV capacity went, each cause with its fix",
    "export": "serve this node's ledgers as Prometheus metrics (kvtop_*)",
    "cluster": "all nodes worst-first, from a Prometheus server",
}

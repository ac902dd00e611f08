"""`kvtop diagnose`: where each rank's missing KV capacity went, and the change that wins it back.

Exit status: 0 when nothing is wrong (advice, i.e. info findings such as FP8 KV, does not count),
1 when there is a finding of severity warning or critical, 2 on an error (no readable node).
Without a driver kvtop does not diagnose the demo node in place of this one: it says so, naming
`--demo`, and exits 2; `--demo [SCENARIO]` asks for a simulated node explicitly.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from kvtop.commands import SUMMARIES
from kvtop.commands.node_args import add_node_arguments, collect_once
from kvtop.commands.output import print_json, print_text
from kvtop.domain.errors import KvtopError

#: The exit status as `--help` states it (the module doc's): a script reads it without the text.
EXIT_STATUS = (
    "exit status: 0 nothing wrong (advice, such as FP8 KV, does not count); 1 a finding of severity warning or "
    "critical; 2 an error (no readable node)"
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "diagnose", help=SUMMARIES["diagnose"], allow_abbrev=False, epilog=EXIT_STATUS,
    )  # fmt: skip
    parser.add_argument(
        "--json", action="store_true", help="print the stable JSON contract: {findings, advice}"
    )
    add_node_arguments(parser, verb="diagnose")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from kvtop.commands.render_findings import findings_json, findings_text, is_problem
    from kvtop.domain.diagnose import diagnose
    from kvtop.domain.incident import incident_answer

    snapshot = collect_once(args)
    if snapshot.observation.nvml_state.failed:
        raise KvtopError(f"cannot read this node: {snapshot.observation.nvml_message or snapshot.notice}")
    findings = diagnose(snapshot)
    _, answer = incident_answer(snapshot, findings)
    source, notice, simulated = snapshot.source, snapshot.notice, snapshot.simulated  # a demo says so in both
    if args.json:
        print_json(findings_json(findings, source=source, notice=notice, simulated=simulated, answer=answer))
    else:
        print_text(findings_text(findings, source=source, notice=notice, simulated=simulated, answer=answer))
    return 1 if any(is_problem(f) for f in findings) else 0

"""`kvtop probe`: prove that the planned KV pool fits by allocating it, in a child process.

This module owns the probe's own flags and the command body. The model and plan flags, and the
buffers built from them, come from the caller (`kvtop.cli`), which also supplies the engine's
runtime reserve, the other processes on the GPU and, where NVML is at hand, a free-memory reader.

Exit codes: 0 the target fitted (or a fill found room) and the memory came back; 1 the target
did not fit, memory ran out, or the memory did not come back; 2 a bad request or an environment
that cannot probe (no NVIDIA driver, no torch, no CUDA, refused, timeout, worker crash); 130
cancelled (Ctrl-C). A --demo node is refused: it has no memory to allocate. A probe that does not run
says why as every command does (`kvtop: error: …`); `--json` names its outcome (`bad_request`, `refused`, …).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TextIO

from kvtop.cli_args import gpu_index, positive_seconds, whole_number
from kvtop.commands import SUMMARIES
from kvtop.commands.output import print_error, print_json
from kvtop.domain.errors import InputError
from kvtop.domain.probe import (
    ProbeBuffer,
    ProbeOutcome,
    ProbeRequest,
    ProbeResult,
    default_chunk_tokens,
)
from kvtop.domain.probe_plan import DEFAULT_TIMEOUT_S, buffers_from_ledger, reserve_for, validated_request
from kvtop.domain.rounding import round_up
from kvtop.domain.terminal import safe_text
from kvtop.domain.wording import counted
from kvtop.sources.probe import run_probe
from kvtop.units import fmt_both, fmt_bytes, fmt_gib, fmt_tokens, parse_size

_EXIT_CODES = {
    ProbeOutcome.OK: 0,
    ProbeOutcome.TARGET_NOT_MET: 1,
    ProbeOutcome.OUT_OF_MEMORY: 1,
    ProbeOutcome.CANCELLED: 130,
}

#: Why a simulated node cannot stand in for a GPU, and what can (wherever the probe has no GPU).
_NO_DEMO = "a --demo node has no memory to allocate; --device cpu --memory-limit SIZE probes host memory"

#: Outcomes whose result carries measurements worth a full table even when nothing fitted.
_MEASURED = frozenset({ProbeOutcome.OK, ProbeOutcome.TARGET_NOT_MET, ProbeOutcome.OUT_OF_MEMORY})


def add_probe_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the probe's own flags (not --model or the plan flags, which the caller adds)."""
    group = parser.add_argument_group("probe")
    group.add_argument("--gpu", type=gpu_index, metavar="N", help="index of the GPU to probe (NVML order), e.g. 0")
    target = group.add_mutually_exclusive_group()
    target.add_argument("--tokens", type=whole_number, metavar="T", help="prove that T tokens of KV fit")
    target.add_argument("--fill", action="store_true", help="find the most tokens that fit above the reserve")
    group.add_argument(
        "--reserve",
        metavar="SIZE",
        help="memory to keep free (default on a GPU: the larger of 2 GiB and the engine's runtime reserve; on cpu: 0)",
    )
    group.add_argument("--yes", action="store_true", help="probe even when other processes use the GPU")
    group.add_argument("--json", action="store_true", help="print the result as JSON (a stable contract)")
    group.add_argument(
        "--device",
        choices=("cuda", "cpu"),
        default="cuda",
        help="cuda (default) or cpu: the same path on host memory, with --memory-limit as the free memory",
    )
    group.add_argument(
        "--memory-limit", metavar="SIZE", help="with --device cpu: the stand-in for free memory"
    )
    group.add_argument(
        "--timeout",
        type=positive_seconds,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"kill the probe after this long (default {DEFAULT_TIMEOUT_S:g})",
    )
    group.add_argument(
        "--chunk-tokens",
        type=whole_number,
        metavar="N",
        help="tokens per allocation chunk, rounded up to the page (default: whole 2 MiB granules, about 64 MiB a tensor)",
    )
    # SUPPRESS: a subcommand's default must not overwrite a global --read-only given before it;
    # if this parser already has --read-only, that one is used (read with getattr).
    with contextlib.suppress(argparse.ArgumentError):
        group.add_argument(
            "--read-only",
            "--readonly",
            action="store_true",
            default=argparse.SUPPRESS,
            help="never allocate: the probe refuses to run",
        )


def _size_arg(text: str | None, flag: str) -> int | None:
    return None if text is None else parse_size(text, field=flag)


def _gpu_index(value: object) -> int | None:
    """`--gpu` as a GPU index; it may arrive as text when the model flags define --gpu."""
    if value is None:
        return None
    text = str(value).strip()
    if not text.isdigit():
        raise InputError(f"takes the index of the GPU to probe, e.g. --gpu 0 (got {text!r})", field="--gpu")
    return int(text)


def build_probe_request(
    args: argparse.Namespace, buffers: Sequence[ProbeBuffer], page_size: int, runtime_reserve_bytes: int
) -> ProbeRequest:
    """The request the flags describe; raises InputError naming the flag that is wrong."""
    gpu = _gpu_index(args.gpu)
    tokens: int | None = args.tokens
    if (tokens is None) == (not args.fill):
        raise InputError("give exactly one of --tokens T and --fill", field="--tokens/--fill")
    if tokens is not None and tokens < 1:
        raise InputError(f"must be a positive number of tokens (got {tokens})", field="--tokens")
    if not buffers:
        raise InputError("the plan has no KV buffers to probe on this rank", field="--model")
    if args.device == "cpu":
        if gpu is not None:
            raise InputError("--gpu and --device cpu exclude each other", field="--gpu")
        device = "cpu"
        memory_limit = _size_arg(args.memory_limit, "--memory-limit")
        if memory_limit is None:
            raise InputError(
                "--device cpu needs --memory-limit SIZE (the stand-in for free memory)",
                field="--memory-limit",
            )
        if memory_limit < 1:  # 0 (or under a byte) leaves the cpu probe no memory: nothing to measure
            raise InputError(
                f"must be a positive size, the stand-in for free memory (got {args.memory_limit!r})",
                field="--memory-limit",
            )
    else:
        if gpu is None:
            raise InputError("give the GPU to probe, e.g. --gpu 0", field="--gpu")
        if args.memory_limit is not None:
            raise InputError("--memory-limit only applies with --device cpu", field="--memory-limit")
        device = f"cuda:{gpu}"
        memory_limit = None
    reserve = _size_arg(args.reserve, "--reserve")
    if args.timeout <= 0:
        raise InputError(f"must be positive (got {args.timeout:g})", field="--timeout")
    chunk = args.chunk_tokens
    if chunk is None:
        chunk = default_chunk_tokens(buffers, page_size)
    elif chunk < 1:
        raise InputError(f"must be positive (got {chunk})", field="--chunk-tokens")
    else:
        chunk = round_up(chunk, page_size)
    return validated_request(
        device=device,
        buffers=tuple(buffers),
        page_size=page_size,
        target_tokens=tokens,
        fill=bool(args.fill),
        reserve_bytes=reserve_for(device, runtime_reserve_bytes) if reserve is None else reserve,
        memory_limit_bytes=memory_limit,
        chunk_tokens=chunk,
        timeout_s=args.timeout,
    )


def exit_code(result: ProbeResult) -> int:
    """0 fitted and released; 1 did not fit / out of memory / not released; 2 cannot probe; 130 cancelled."""
    code = _EXIT_CODES.get(result.outcome, 2)
    if code == 0 and not result.released:
        return 1
    return code


def _refusal(args: argparse.Namespace, gpu_processes: Sequence[str]) -> str | None:
    if getattr(args, "read_only", False):
        return "the probe allocates memory and is disabled by --read-only"
    if args.device != "cpu" and gpu_processes and not args.yes:
        shown = "; ".join(gpu_processes[:3]) + ("; …" if len(gpu_processes) > 3 else "")
        return (
            f"GPU {args.gpu} is in use by {counted(len(gpu_processes), 'other process', 'other processes')} ({shown}); "
            "the probe would compete with them for memory: rerun with --yes to probe anyway"
        )
    return None


def _device_label(args: argparse.Namespace) -> str:
    """The device as a result names it: 'cuda:0'; 'cuda' where no valid --gpu index was given (was 'cuda:None')."""
    if args.device == "cpu":
        return "cpu"
    try:
        index = _gpu_index(args.gpu)
    except InputError:
        index = None
    return "cuda" if index is None else f"cuda:{index}"


def run_probe_command(
    args: argparse.Namespace,
    buffers: Sequence[ProbeBuffer],
    page_size: int,
    runtime_reserve_bytes: int,
    gpu_processes: Sequence[str] = (),
    out: TextIO = sys.stdout,
    *,
    err: TextIO | None = None,
    free_memory_reader: Callable[[], int] | None = None,
    cancel: threading.Event | None = None,
) -> int:
    """Validate, apply the safety rules, run the probe, print the result; return the exit code."""
    err = sys.stderr if err is None else err
    try:
        request = build_probe_request(args, buffers, page_size, runtime_reserve_bytes)
    except InputError as error:
        return _report_unrun(args, ProbeOutcome.BAD_REQUEST, str(error), out, err)
    refusal = _refusal(args, gpu_processes)
    if refusal is not None:
        return _report_unrun(args, ProbeOutcome.REFUSED, refusal, out, err)
    result = run_probe(request, cancel=cancel, free_memory_reader=free_memory_reader)
    if args.json:
        print_json(result.to_json_dict(), indent=2, file=out)
    else:
        out.write(safe_text(render_probe_result(result)))
    if result.outcome is not ProbeOutcome.CANCELLED and not result.released:
        print_error(f"MEMORY NOT RELEASED on {result.device}: {result.message}", prefix="kvtop: warning: ", file=err)
    return exit_code(result)


def _report_unrun(
    args: argparse.Namespace, outcome: ProbeOutcome, message: str, out: TextIO, err: TextIO
) -> int:
    result = ProbeResult(
        outcome=outcome,
        message=message,
        device=_device_label(args),
        released=True,
        release_check="nothing was allocated",
    )
    if args.json:
        print_json(result.to_json_dict(), indent=2, file=out)
    else:
        print_error(message, file=err)  # every command's form; the named outcome stays in --json
    return exit_code(result)


def _or_dash(value: int | None, fmt: Callable[[int], str]) -> str:
    return "—" if value is None else fmt(value)


def render_probe_result(result: ProbeResult) -> str:
    """The human table: tokens, bytes, bytes/token measured vs predicted, time, free memory, release."""
    target = (
        f"target {fmt_tokens(result.target_tokens)}"
        if result.target_tokens
        else "as many tokens as fit above the reserve"
    )
    name = f" {result.device_name}" if result.device_name else ""
    verdict = "OK" if result.target_met else result.outcome.value.upper().replace("_", " ")
    rows = [f"kvtop probe · {result.device}{name} · {result.mode} mode ({target}) · page {result.page_size}"]
    rows.append(f"  verdict        {verdict}: {result.message}")
    released = "yes: " if result.released else "NO — MEMORY NOT RELEASED, check nvidia-smi; "
    released_row = f"  released       {released}{result.release_check}".rstrip(":; ")
    if result.outcome not in _MEASURED and result.bytes_allocated == 0:
        return "\n".join([*rows, released_row]) + "\n"
    touched = ", every page touched" if result.touched else ", not touched"
    rows.append(
        f"  tokens         {fmt_tokens(result.tokens_allocated)} allocated"
        f" (+{counted(result.padding_rows, 'padding row')}) in {counted(result.chunks, 'chunk')}{touched}"
    )
    rows.append(f"  bytes          {fmt_both(result.bytes_allocated)}")
    measured = result.describe_measured()
    delta = result.measured_vs_predicted_said
    delta_text = "" if delta is None else f" ({delta}, padding page included)"
    rows.append(
        f"  bytes/token    measured {measured} · predicted {result.bytes_per_token_predicted:,} B{delta_text}"
    )
    if result.context_bytes is not None:
        rows.append(f"  CUDA context   {fmt_bytes(result.context_bytes)}")
    speed = ""
    if result.seconds_per_gib is not None and result.gib_per_second is not None:
        speed = f" ({result.seconds_per_gib:.3f} s/GiB, {result.gib_per_second:,.1f} GiB/s)"
    startup = "" if result.init_seconds is None else f"; start-up {result.init_seconds:.2f} s"
    rows.append(f"  time           {result.seconds:.2f} s{speed}{startup}")
    after = (
        result.free_after_exit_bytes if result.free_after_exit_bytes is not None else result.free_after_bytes
    )
    rows.append(
        f"  free memory    before {_or_dash(result.free_before_bytes, fmt_gib)}"
        f" · at peak {_or_dash(result.free_at_peak_bytes, fmt_gib)}"
        f" · after {_or_dash(after, fmt_gib)} (reserve {fmt_gib(result.reserve_bytes)})"
    )
    rows.append(released_row)
    return "\n".join(rows) + "\n"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from kvtop.commands.common import add_model_arguments, engine_flags_help

    parser = subparsers.add_parser(
        "probe", help=SUMMARIES["probe"],
        epilog_fn=engine_flags_help, formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False,
    )  # fmt: skip
    add_model_arguments(parser, model_required=True, gpu_model=False)  # the probe's --gpu is an index
    add_probe_arguments(parser)
    parser.set_defaults(handler=_run, accepts_engine_flags=True)


def _run(args: argparse.Namespace, extra: Sequence[str]) -> int:
    """Build the plan from the model flags (`--gpu` here is the GPU index), then probe."""
    from kvtop.commands.plan import build_ledger

    if getattr(args, "demo", None) is not None:
        raise InputError(_NO_DEMO, field="--demo")
    plan_args = argparse.Namespace(**{**vars(args), "gpu": None})
    ledger = build_ledger(plan_args, extra)
    buffers, page = buffers_from_ledger(ledger)
    index = None if args.device == "cpu" else _gpu_index(args.gpu)
    if index is None:
        return run_probe_command(args, buffers, page, ledger.engine.reserve_bytes)
    from kvtop.sources.live import missing_driver

    reason = missing_driver()
    if reason is not None:
        message = f"{reason}: no GPU to probe on this machine ({_NO_DEMO})"
        return _report_unrun(args, ProbeOutcome.NO_CUDA, message, sys.stdout, sys.stderr)
    from kvtop.commands.probe_gpu import free_memory_reader, other_processes

    return run_probe_command(
        args, buffers, page, ledger.engine.reserve_bytes,
        gpu_processes=other_processes(index), free_memory_reader=free_memory_reader(index),
    )  # fmt: skip

"""Arguments shared by every command that builds a ledger (plan, explain, probe, …).

Engine flags are not declared to argparse one by one: whatever argparse does not know is
handed to `kvtop.domain.launch.parse_flags`, the same parser `--cmd` and live processes use,
so every engine spelling (`--tp`, `--tp-size`, `--tensor-parallel-size`) works everywhere.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, get_args

from kvtop.cli_args import add_calibration_store as add_calibration_store  # the commands take it from here
from kvtop.cli_args import positive_seconds
from kvtop.commands.output import print_error
from kvtop.domain.engines.base import CompileCacheState, MeasuredInputs
from kvtop.domain.engines.registry import DEFAULT_ENGINE, ENGINE_IDS, display_name, engine_flags
from kvtop.domain.errors import InputError
from kvtop.domain.gpu_total_origin import GpuTotalOrigin, given_total_origin, wsl2_total_origin
from kvtop.domain.launch import FIELD_TYPES, KVTOP_SPELLINGS, LaunchSettings, check_parallel, parse_flags
from kvtop.domain.launch_line import detect_engine, parse_launch_command
from kvtop.domain.launch_notes import ignored_flags_note, overridden_flags_note
from kvtop.domain.launch_tokens import split_command
from kvtop.domain.launch_vocabulary import MAX_COUNT
from kvtop.domain.redact import quoted
from kvtop.domain.units_parse import written_unit
from kvtop.domain.wording import in_unit
from kvtop.sources.engines.registry import complete_settings
from kvtop.units import GIB, fmt_gib, parse_size

_PLACEHOLDERS = {
    "kv_cache_memory_bytes": "SIZE",
    "engine_version": "V",
    "quantization": "Q",
    "dtype": "D",
    "extra_llm_api_options": "YAML",  # TensorRT-LLM
}


def _placeholder(field: str, dtypes: tuple[str, ...], choices: Mapping[str, tuple[str, ...]]) -> str:
    """What a flag takes, as its help writes it: N, F, SIZE, a KV dtype list… ('' for a switch)."""
    if field == "kv_cache_dtype":
        return "|".join(dtypes)
    if field in choices:
        return "|".join(choices[field])
    kind = FIELD_TYPES[field]
    return (
        ""
        if kind is bool
        else _PLACEHOLDERS.get(field, "N" if kind is int else "F" if kind is float else "S")
    )


def _listing(
    spellings: Mapping[str, str], dtypes: tuple[str, ...], choices: Mapping[str, tuple[str, ...]]
) -> list[str]:
    """'--tp-size/--tensor-parallel-size N' per field (the model, host and port have options of their own)."""
    by_field: dict[str, list[str]] = {}
    for flag, field in spellings.items():
        if field not in ("model", "host", "port"):
            by_field.setdefault(field, []).append(flag)
    items = []
    for field, flags in by_field.items():
        placeholder = _placeholder(field, dtypes, choices)
        items.append("/".join(flags) + (f" {placeholder}" if placeholder else ""))
    return items


def _wrapped(title: str, items: list[str], width: int = 104) -> list[str]:
    lines, line = [], f"  {title}:"
    for item in items:
        if len(line) + 3 + len(item) > width:
            lines.append(line)
            line = "    " + item
        else:
            line += ("   " if line.endswith(":") is False else " ") + item
    return [*lines, line]


def engine_flags_help() -> str:
    """The engine flags of every engine kvtop models, as each engine's package spells them."""
    # TensorRT-LLM's dotted names (`--kv_cache_config.dtype`) are its --extra_llm_api_options YAML's keys as kvtop
    # reads them, not trtllm-serve options: the plan's copied launch puts them back in a YAML (serve_launch.py)
    lines = ["engine flags (each engine's spelling as kvtop reads it; TensorRT-LLM's --<section>.<key> are its",
             "YAML's keys, which the plan's copied launch writes in an --extra_llm_api_options file; kvtop's apply",
             "to every engine):"]  # fmt: skip
    lines += _wrapped("kvtop", _listing(KVTOP_SPELLINGS, (), {}))
    for engine in ENGINE_IDS:
        flags = engine_flags(engine)
        lines += _wrapped(
            f"{display_name(engine)} (--engine {engine})",
            _listing(flags.spellings, flags.kv_cache_dtypes, flags.choices),
        )
        if flags.own_flags:  # kvtop's, not the engine's: typed to kvtop, refused inside --cmd
            lines += _wrapped("    kvtop's own, not the engine's", [f"{flag} ({own.says})" for flag, own in flags.own_flags.items()])
        read = flags.read_by_rules  # passed through, read by a rule
        if read:
            lines += _wrapped("    accepted, read by kvtop's rules", [_with_value(flag, flags.value_placeholders) for flag in sorted(read)])
        if rest := flags.passthrough - read - flags.memory_neutral:  # accepted as typed, no KV sizing of their own
            lines += _wrapped("    accepted, not modelled", [_with_value(flag, flags.value_placeholders) for flag in sorted(rest)])
        if flags.memory_neutral_groups:  # counted, not listed: a hundred names would bury the flags that size KV
            summary = (f"accepted, no effect on memory: {_neutral_count(engine)} ({', '.join(flags.memory_neutral_groups)}),"
                       f" named on the plan: {LIST_NEUTRAL_FLAGS} {engine} lists them")  # fmt: skip
            lines += textwrap.wrap(summary, width=104, initial_indent="      ", subsequent_indent="    ")
    return "\n".join(lines)


def _with_value(flag: str, placeholders: Mapping[str, str]) -> str:
    """'--hf-overrides JSON' for a pass-through flag whose engine names what it takes, else the flag alone."""
    return f"{flag} {placeholders[flag]}" if flag in placeholders else flag


def _neutral_count(engine: str) -> str:
    """'125 flags' (their `--no-` forms, where the engine's parser takes them, not counted apart)."""
    groups = engine_flags(engine).memory_neutral_groups.values()
    flags = {flag for group in groups for flag in group.flags if not flag.startswith("--no-")}
    return f"{len(flags)} flags"


LIST_NEUTRAL_FLAGS = "--list-neutral-flags"


def classified_engine(text: str) -> str:
    """An engine id whose flags with no effect on memory are classified (`EngineFlags.memory_neutral_groups`); read
    when the option is given, so that no engine package is imported to build the parser."""
    engine = engine_id(text)
    if not engine_flags(engine).memory_neutral_groups:
        classified = [other for other in ENGINE_IDS if engine_flags(other).memory_neutral_groups]
        named = [f"{display_name(other)}'s" for other in classified]
        only = " and ".join([", ".join(named[:-1]), named[-1]] if len(named) > 1 else named)
        raise argparse.ArgumentTypeError(f"{display_name(engine)}'s flags are not classified yet (only {only} "
                                         f"{'are' if len(named) > 1 else 'is'}): a flag kvtop does not read is refused")  # fmt: skip
    return engine


def neutral_flags_listing(engine: str) -> str:
    """The engine's flags with no effect on memory, by kind: each kind's reason, then its flags (wrapped)."""
    flags = engine_flags(engine)
    lines = [f"{display_name(engine)}'s flags with no effect on GPU memory (accepted as typed, named under the plan's "
             "engine flags, never written back):"]  # fmt: skip
    for kind, group in flags.memory_neutral_groups.items():
        lines += textwrap.wrap(f"{kind}: {group.why}", width=104, initial_indent="  ", subsequent_indent="  ")
        shown = [_negatable(flag, group.flags) for flag in sorted(group.flags) if not _is_negation(flag, group.flags)]
        lines += textwrap.wrap("   ".join(shown), width=104, initial_indent="      ", subsequent_indent="      ",
                               break_on_hyphens=False)  # fmt: skip
    return "\n".join(lines)


def _is_negation(flag: str, flags: frozenset[str]) -> bool:
    return flag.startswith("--no-") and "--" + flag[5:] in flags


def _negatable(flag: str, flags: frozenset[str]) -> str:
    """'--[no-]tokens-only' for a flag whose `--no-` form the engine takes too, else the flag."""
    return f"--[no-]{flag[2:]}" if "--no-" + flag[2:] in flags else flag


class _ListNeutralFlags(argparse.Action):
    """`--list-neutral-flags ENGINE`: print the listing and exit, as --help does."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:  # fmt: skip
        from kvtop.commands.output import print_text

        print_text(neutral_flags_listing(str(values)))
        parser.exit()


class _ListGpus(argparse.Action):
    """`--list-gpus`: print every name `--gpu` takes with its total (kvtop.domain.gpus.gpu_listing) and exit."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:  # fmt: skip
        from kvtop.commands.output import print_text
        from kvtop.domain.gpus import gpu_listing

        print_text(gpu_listing())
        parser.exit()


def engine_id(text: str) -> str:
    """An `--engine` value the catalogue has a package for; else argparse's error says "unknown engine" and
    lists the ids (an engine whose package is gone is no choice: tests/engines/test_engine_removal.py)."""
    if text not in ENGINE_IDS:
        raise argparse.ArgumentTypeError(f"unknown engine {quoted(text)} (one of {', '.join(ENGINE_IDS)})")
    return text


HUB_TIMEOUT_S = 30.0  # the default deadline of a command that reads its model from the hub


def add_hub_timeout(parser: argparse.ArgumentParser) -> None:
    """`--timeout`: the whole command's deadline, which only a hub read can approach."""
    parser.add_argument("--timeout", dest="hub_timeout", type=positive_seconds, default=HUB_TIMEOUT_S, metavar="SECONDS",
                        help=f"deadline for reading the model from the Hugging Face hub (default {HUB_TIMEOUT_S:g} s)")  # fmt: skip


def hub_deadline(args: argparse.Namespace) -> float:
    """The hub deadline asked for, checked (a probe, which has its own --timeout, gets the default)."""
    seconds = float(getattr(args, "hub_timeout", HUB_TIMEOUT_S))
    if not seconds > 0:  # NaN too
        raise InputError(f"must be positive (got {seconds:g})", field="--timeout")
    return seconds


def add_model_arguments(
    parser: argparse.ArgumentParser, *, model_required: bool = True, gpu_model: bool = True
) -> None:
    """The model, engine and device flags; `gpu_model=False` leaves `--gpu` to the caller (the probe's
    `--gpu` is a GPU index, not a model)."""
    group = parser.add_argument_group("model and device")
    group.add_argument("--model", "--model-path", dest="model", required=False, metavar="MODEL",
                       help="config.json path, checkpoint folder, preset name (e.g. llama-3-70b) or hub id")  # fmt: skip
    group.add_argument(
        "--model-family",
        default=None,
        metavar="FAMILY",
        help="read the config as this modelled family (e.g. llama) when its model_type is not modelled",
    )
    group.add_argument(
        "--engine",
        type=engine_id,
        choices=ENGINE_IDS,
        default=None,
        help=f"budget rules to apply (default {DEFAULT_ENGINE})",
    )
    group.add_argument(
        "--cmd", default=None, metavar="COMMAND", help="the engine's whole launch command, quoted"
    )
    if gpu_model:
        group.add_argument(
            "--gpu",
            default=None,
            metavar="MODEL",
            help="GPU model, e.g. H100 (also H200, A100-80GB, B200, L40S, …; default H100)",
        )
    parser.set_defaults(gpu_names_model=gpu_model)  # what a hint may offer: `--gpu MODEL`, or only --gpu-memory
    group.add_argument(
        "--gpu-memory",
        default=None,
        metavar="SIZE",
        help="one GPU's memory as the engine sees it (CUDA's total, e.g. 79.19GiB on an H100)"
        + ("; overrides --gpu's total, but a SIZE above the named card's is a larger memory variant of it, given "
           "as nvidia-smi prints it (--gpu RTX2060 --gpu-memory 12GiB)" if gpu_model else ""),
    )
    group.add_argument(
        "--free-memory",
        default=None,
        metavar="SIZE",
        help="measured free memory before weight load, e.g. 78.81GiB (SGLang's log says 'GB' for GiB)",
    )
    group.add_argument("--free-after-load", default=None, metavar="SIZE",
                       help="measured free memory after weight load, e.g. 63.72GiB (SGLang's 'GB' is GiB)")  # fmt: skip
    group.add_argument(
        "--weights-memory",
        default=None,
        metavar="SIZE",
        help="measured resident weights per rank, e.g. 15GiB",
    )
    group.add_argument(
        "--non-kv-memory",
        default=None,
        metavar="SIZE",
        help="runtime memory besides weights that a profiling engine measures (vLLM's activation peak + "
        "non-torch + CUDA graphs), e.g. 2GiB",
    )
    group.add_argument("--desktop", action="store_true",
                       help="the GPU also drives a desktop (Windows, WSL2): the plan says the memory the desktop "
                       "holds is not modelled")  # fmt: skip
    group.add_argument("--wsl2", action="store_true",
                       help="the GPU is reached through WSL2 (Windows drives it; implies --desktop): CUDA's total is "
                       "the card's whole memory, with no Linux driver's reserve")  # fmt: skip
    group.add_argument("--compile-cache", choices=get_args(CompileCacheState), default=None,
                       help="torch.compile's cache on this node: warm where an earlier start of the same launch left "
                       "its compiled graphs (vLLM's V2 runner then compiles nothing in its profile), cold a first start "
                       "(what an unsaid cache is planned as); a --cmd that sets VLLM_DISABLE_COMPILE_CACHE=1, or a "
                       "launch that compiles nothing (--enforce-eager, -O0), overrides warm, said in a note; read "
                       "for vLLM only: SGLang, TensorRT-LLM, LMDeploy and llama.cpp plan as without it and say so in "
                       "a note (no warm or cold difference is modelled there)")  # fmt: skip
    group.add_argument(
        "--load-mtp", action="store_true", help="count MTP/next-n layers (speculative decoding)"
    )
    group.add_argument(LIST_NEUTRAL_FLAGS, action=_ListNeutralFlags, type=classified_engine, metavar="ENGINE",
                       help="list the flags of the engine that kvtop accepts as having no effect on GPU memory, by kind, "
                       "and exit (the engine flags below count them where they are classified)")  # fmt: skip
    if gpu_model:  # the probe's --gpu is an index: a list of the names it does not take misled (session 67)
        group.add_argument("--list-gpus", action=_ListGpus, nargs=0,
                           help="list the GPU names --gpu takes, with the total each is planned with, and exit")  # fmt: skip
    parser.set_defaults(model_required=model_required)


def cmd_settings(cmd: str, engine: str) -> LaunchSettings:
    """`--cmd` (`plan`'s and `explain`'s one reader): an engine's launch command, or its flags alone read as
    `engine`'s; an empty, blank or unreadable one is refused, never read as no `--cmd`."""
    tokens = split_command(cmd)
    launched = parse_launch_command(tokens)
    if launched is None and detect_engine(tokens) is None and tokens and tokens[0].startswith("-"):
        launched = parse_flags(engine, tokens, engine_line=True)
    if launched is None:
        raise InputError("not a launch command of an engine kvtop models", field="--cmd")
    return launched


def settings_from_args(args: argparse.Namespace, extra: Sequence[str]) -> LaunchSettings:
    """Merge `--cmd`, the engine flags given directly, and `--model`/`--engine`."""
    cmd = getattr(args, "cmd", None)
    base: LaunchSettings | None = None
    if cmd is not None:  # an empty --cmd is refused as a blank one is, never read as no --cmd
        base = cmd_settings(cmd, args.engine or DEFAULT_ENGINE)
    if base is not None and args.engine is not None and base.engine != args.engine:
        # the command's flags were read as its engine's (a vLLM fraction is not SGLang's): never re-read as another's
        raise InputError(f"the --cmd is {display_name(base.engine)}'s launch command, not {display_name(args.engine)}'s: "
                         f"pass --engine {base.engine} or leave --engine out", field="--engine")  # fmt: skip
    engine = args.engine or (base.engine if base else DEFAULT_ENGINE)
    direct = parse_flags(engine, list(extra), strict=True)
    merged: dict[str, object] = base.model_dump() if base else {}
    merged["engine"] = engine
    for field in direct.model_fields_set - {"engine", "flags", "unknown_flags"}:  # the --cmd's ignored flags kept
        merged[field] = getattr(direct, field)
    if direct.flags:  # the engine's pass-through flags typed here (e.g. SGLang's --enable-multimodal) are kept
        merged["flags"] = {**(base.flags if base else {}), **direct.flags}
    if args.model:
        merged["model"] = args.model
    settings = complete_settings(LaunchSettings.model_validate(merged), Path.cwd(), strict=True)
    check_parallel(settings)
    notes = (ignored_flags_note(base), overridden_flags_note(base, direct)) if base is not None else ()
    for note in notes:  # on stderr: the plan (and its --json) on stdout stays as it is
        if note is not None:
            print_error(note, prefix="kvtop: note: ")
    return settings


def defaults_taken(args: argparse.Namespace, extra: Sequence[str]) -> tuple[str, ...]:
    """What kvtop assumed because the command line did not say it: the layout (one GPU) and the GPU (an
    H100), as '--tp 1' / '--gpu H100', so a plan that does not fit says which of its inputs nobody chose."""
    cmd = getattr(args, "cmd", None)
    launched = parse_launch_command(split_command(cmd)) if cmd else None
    engine = args.engine or (launched.engine if launched is not None else DEFAULT_ENGINE)  # as settings_from_args
    stated = set(parse_flags(engine, list(extra), strict=True).model_fields_set)
    stated |= set(launched.model_fields_set) if launched is not None else set()
    taken = [] if stated & {"tp", "pp", "dp"} else ["--tp 1"]
    if getattr(args, "gpu", None) is None and getattr(args, "gpu_memory", None) is None:
        taken.append("--gpu H100")
    return tuple(taken)


#: The most GPU memory a size flag may say (`memory_size`): 1 TiB, the launch's own size bound (`MAX_COUNT`).
MEMORY_AT_MOST = MAX_COUNT


def memory_size(
    text: str, flag: str, *, whole_gpu: bool, host: bool = False, weights: bool = False,
    at_most: int | None = MEMORY_AT_MOST,
) -> int:  # fmt: skip
    """A memory flag's bytes, within the one bound rule of the size flags. A unit is required: a bare `80` would
    read as 80 bytes. `at_most` None: no bound (the engine-diff harness's GPU-less stand-ins' 1 PiB, `build_ledger`'s
    `gpu_bounds`).

    Every size of GPU memory is at most 1 TiB (`MAX_COUNT`, the launch's own size bound: `--kv-cache-memory-bytes`),
    said in the unit typed (in TiB past it: '5PiB'); a host's memory (`--host-cache`, `host`) has no such bound.
    `whole_gpu` flags (--gpu-memory, --free-memory) describe a whole GPU and must reach 1 GiB;
    `weights` (--weights-memory, --draft-weights) must be more than 0 (a loaded model holds its weights); a bare 0
    is allowed for the other measured amounts (nothing free after the load, nothing besides the weights: zero in
    every unit).
    """
    size_bytes = parse_size(text, field=flag)
    raw = str(text).strip()
    unitless = raw.replace(".", "", 1).isdigit()
    if unitless and (whole_gpu or size_bytes != 0):
        raise InputError(f"{raw!r} has no unit (it would read as bytes); write e.g. 80GiB", field=flag)
    if whole_gpu and size_bytes < GIB:
        raise InputError(f"{raw!r} is too small for a GPU (under 1 GiB); write e.g. 80GiB", field=flag)
    if weights and size_bytes <= 0:
        raise InputError(f"must be more than 0 (got {raw}): a loaded model holds its weights", field=flag)
    if host:
        at_most = None
    if at_most is not None and size_bytes > at_most:
        unit = written_unit(raw) or ("TiB", 1 << 40)  # a PiB or a byte count: said in TiB
        raise InputError(f"must be at most {in_unit(at_most, unit)} (got {in_unit(size_bytes, unit)})", field=flag)
    return size_bytes


def measured_from_args(args: argparse.Namespace, *, at_most: int | None = MEMORY_AT_MOST) -> MeasuredInputs:
    """The measured amounts the flags say, each within `at_most` (`memory_size`)."""

    def size(name: str, flag: str, whole_gpu: bool = False, weights: bool = False) -> int | None:
        value = getattr(args, name, None)
        if value is None:
            return None
        return memory_size(value, flag, whole_gpu=whole_gpu, weights=weights, at_most=at_most)

    measured = MeasuredInputs(
        gpu_total_bytes=size("gpu_memory", "--gpu-memory", whole_gpu=True),
        free_before_load_bytes=size("free_memory", "--free-memory", whole_gpu=True),
        free_after_load_bytes=size("free_after_load", "--free-after-load"),
        weights_bytes=size("weights_memory", "--weights-memory", weights=True),
        non_kv_bytes=size("non_kv_memory", "--non-kv-memory"),
        desktop=bool(getattr(args, "desktop", False) or getattr(args, "wsl2", False)),  # --wsl2 implies --desktop
        compile_cache=getattr(args, "compile_cache", None),
    )
    before, after = measured.free_before_load_bytes, measured.free_after_load_bytes
    if before is not None and after is not None and after > before:  # loading weights frees nothing
        raise InputError(
            f"{fmt_gib(after)} free after the weights load is more than the {fmt_gib(before)} of "
            "--free-memory before it (loading weights only takes memory)",
            field="--free-after-load",
        )
    return measured


def total_origin_from_args(args: argparse.Namespace, name: str | None, total_bytes: int) -> GpuTotalOrigin:
    """Where the total `gpu_from_args` picks (`name`, `total_bytes`) comes from, said beside it: --gpu-memory (it
    wins; the engine's total, or a larger memory variant of the card --gpu names: the domain's
    `gpu_total_origin.given_total_origin` decides), else --gpu's table (the H100's where no --gpu is given); under --wsl2 a card's
    own figure is CUDA's whole-card total (`gpu_total_origin.wsl2_total_origin`)."""
    origin = GpuTotalOrigin.TABLE if getattr(args, "gpu_memory", None) is None else given_total_origin(name, total_bytes)
    return wsl2_total_origin(name, origin) if getattr(args, "wsl2", False) else origin


def check_within_gpu(measured: MeasuredInputs, total_bytes: int, gpu: str, hint: str) -> None:
    """A measured amount of one GPU's memory cannot exceed the GPU: `--free-memory 100TiB` on an H100
    would be solved as measured and plan billions of tokens. `gpu` names where the total came from, `hint`
    what to give instead."""
    for flag, value in (
        ("--free-memory", measured.free_before_load_bytes),
        ("--free-after-load", measured.free_after_load_bytes),
        ("--weights-memory", measured.weights_bytes),
        ("--non-kv-memory", measured.non_kv_bytes),
    ):
        if value is not None and value > total_bytes:
            raise InputError(
                f"{fmt_gib(value)} is more than the GPU's {fmt_gib(total_bytes)} ({gpu}){hint}", field=flag
            )


_UNITS_HINT = " (GB is 10^9 bytes, GiB 2^30)"


def _origin_and_hint(args: argparse.Namespace, name: str) -> tuple[str, str]:
    """Where a total checked against came from, and what to give instead where it was assumed: `--gpu MODEL` only
    where the command's --gpu names a model (the probe's is an index: `gpu_names_model` False)."""
    if args.gpu:
        return f"--gpu {name}", _UNITS_HINT
    if getattr(args, "gpu_names_model", True):
        return "an H100, assumed", "; give the GPU with --gpu MODEL or --gpu-memory SIZE"
    return "an H100, assumed", "; give the GPU's memory with --gpu-memory SIZE (the probe's --gpu is its index)"


def gpu_from_args(args: argparse.Namespace, measured: MeasuredInputs, *, within: bool = True) -> tuple[int, str | None]:
    """(total bytes, name): --gpu-memory wins, then --gpu, else an H100; `within` False: the measured amounts are
    not checked against it (`check_within_gpu`; the engine-diff harness's GPU-less stand-ins)."""
    from kvtop.domain.gpus import gpu_total_bytes

    if args.gpu is not None and not args.gpu.strip():  # `--gpu ""` (an unset shell variable) is no H100
        raise InputError("empty: name the GPU, e.g. H100", field="--gpu")
    if measured.gpu_total_bytes is not None:
        if measured.gpu_total_bytes <= 0:
            raise InputError("must be positive", field="--gpu-memory")
        if within:
            check_within_gpu(measured, measured.gpu_total_bytes, "--gpu-memory", hint=_UNITS_HINT)
        return measured.gpu_total_bytes, args.gpu
    name = args.gpu or "H100"
    total = gpu_total_bytes(name)
    if within:
        check_within_gpu(measured, total, *_origin_and_hint(args, name))
    return total, name.upper()


def emit(as_json: bool, data: Callable[[], Any], text: Callable[[], str]) -> None:
    """Print `data()` as indented JSON with `--json`, else `text()` (only the one asked for is built),
    through the one sanitiser (`kvtop.commands.output`)."""
    from kvtop.commands.output import print_json, print_text

    if as_json:
        print_json(data())
    else:
        print_text(text())

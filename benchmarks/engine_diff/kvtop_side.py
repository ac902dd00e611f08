"""kvtop's answer for one case of the sweep: `kvtop plan ... --json`, run in-process.

The same argv a person would type, through kvtop's own plan entry (parser, `build_ledger`,
`ledger_json`), with the same budget the engine run had:
  vLLM:   --kv-cache-memory-bytes B (profiling skipped; the engine run had the same fixed KV memory)
          and --free-memory 1PiB (the run had no GPU: memory never limited the fixed pool)
  SGLang: --free-memory F --free-after-load A --mem-fraction-static m (rest = A − F × (1 − m)),
          the same three numbers the engine's `_profile_available_bytes` was given.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from benchmarks.engine_diff.cases import config_path
from benchmarks.engine_diff.engines import ENGINES, KVTOP_GPU
from kvtop.domain.tower_spec import TOWER_KINDS
from kvtop.domain.wording import gib_setting

# The engine's spelling of a KV dtype -> kvtop's flag value.
KV_DTYPE = {"auto": "auto", "fp8": "fp8_e4m3", "fp8_e4m3": "fp8_e4m3", "fp8_e5m2": "fp8_e5m2"}
UNLIMITED_FREE = "1PiB"  # the free memory kvtop is told for a vLLM row (see plan_argv)


def plan_argv(engine: str, version: str, case: dict[str, Any], fixed_pool: bool = True) -> list[str]:
    from kvtop.domain.launch import spelling_of

    argv = [
        "plan",
        "--model",
        str(config_path(case["config"])),
        "--engine",
        engine,
        "--tp",
        str(case["tp"]),
        "--kv-cache-dtype",
        KV_DTYPE[case["kv_dtype"]],
        "--gpu",
        KVTOP_GPU[case["gpu"]],
        spelling_of(engine, "context_length"),  # each engine's own flag (another's is refused)
        str(case["max_model_len"]),
        "--engine-version",
        version,
        "--json",
    ]
    argv += [str(token) for token in case.get("flags", ())]  # the flag set, as the engine's own tokens
    if engine == "vllm":
        # The engine's sizing ran on no GPU with this fixed KV memory: memory never limited it. kvtop
        # refuses a fixed pool larger than what is free after the weights (a 671B model at TP 8 on an
        # 80 GB GPU, in many rows), so it is told the memory is there (vLLM reads no free memory).
        # `fixed_pool` False: a row replayed at a release without --kv-cache-memory-bytes (before v0.10.2,
        # which refuses it as its argparse would) for what does not depend on the pool (stage weights)
        argv += ["--kv-cache-memory-bytes", str(case["budget_bytes"])] if fixed_pool else []
        argv += ["--free-memory", UNLIMITED_FREE]
    else:
        argv += [
            "--free-memory",
            f"{gib_setting(case['free_before_bytes'])}GiB",
            "--free-after-load",
            f"{gib_setting(case['free_after_bytes'])}GiB",
            "--mem-fraction-static",
            str(case["mem_fraction_static"]),
        ]
    return argv


_PARSER: Any = None
_MODELS: dict[str, Any] = {}
_ORIGINAL_LOAD: list[Any] = []


def _load_model_once(source: str, **options: Any) -> Any:
    """kvtop's own load_model, once per config: its ledger and weights memos key on the model
    object, so the TP/dtype/GPU variants of one config reuse them (the table takes seconds)."""
    if source not in _MODELS:
        _MODELS[source] = _ORIGINAL_LOAD[0](source, **options)
    return _MODELS[source]


_PLANS: dict[tuple[str, ...], dict[str, Any]] = {}


def kvtop_plan(engine: str, version: str, case: dict[str, Any], fixed_pool: bool = True) -> dict[str, Any]:
    """{"status": "ok", tokens, bytes_per_token, block_size, num_blocks, max_running_requests,
    stages (each pipeline stage's first rank: layers, weights bytes as the classes build them — the engine's
    meta-built `named_parameters()` count: the plan's resident weights and what the load frees, `weights_released` —,
    the plan's resident bytes, KV pools)} or
    {"status": "refused", "message"} (kvtop's one-line error). Memoised by command line."""
    argv = tuple(plan_argv(engine, version, case, fixed_pool))
    if argv not in _PLANS:
        _PLANS[argv] = _plan(engine, argv)
    return _PLANS[argv]


def _plan(engine: str, argv: tuple[str, ...]) -> dict[str, Any]:
    global _PARSER
    from kvtop.cli import build_parser
    from kvtop.commands.plan import build_ledger
    from kvtop.commands.render_ledger import ledger_json
    from kvtop.domain.errors import KvtopError
    from kvtop.domain.launch_check import launch_refusals

    if _PARSER is None:
        _PARSER = build_parser("plan")
    import kvtop.sources.hub as hub

    args, extra = _PARSER.parse_known_args(list(argv))
    if not _ORIGINAL_LOAD:
        _ORIGINAL_LOAD.append(hub.load_model)
    load_model, hub.load_model = hub.load_model, _load_model_once  # type: ignore[assignment]
    # The engine runs had no GPU: the free memory their stand-ins were given (1 PiB for a vLLM row, what a
    # SGLang stand-in reported) is no GPU's, so plan's guards against a typed amount above the GPU's memory
    # (check_within_gpu) and the size flags' 1 TiB bound are off here (`gpu_bounds`); the sizing they guard is the
    # same code a person's plan runs.
    try:
        ledger = build_ledger(args, extra, gpu_bounds=False)
        # what `kvtop plan` refuses after building the ledger (exit 2): a class the release does not
        # register, a context above the positions, the engine's own launch checks
        refusals = launch_refusals(ledger)
        if refusals:  # as `kvtop plan` says it (kvtop.commands.plan.run)
            joined = "; ".join(refusal.describe() for refusal in refusals)
            return {"status": "refused", "message": f"{refusals[0].field}: {joined}"}
        plan = ledger_json(ledger)
    except KvtopError as err:
        return {"status": "refused", "message": str(err)}
    finally:
        hub.load_model = load_model  # type: ignore[assignment]
    if not plan["fits"]:
        return {"status": "refused", "message": f"does not fit (shortfall {plan['shortfall_bytes']:,} B)"}
    cells = [
        step["value"] for step in plan["steps"] if step["label"].startswith("cell") and step.get("value")
    ]
    return {
        "status": "ok",
        "cell_bytes": int(cells[0])
        if cells
        else plan["kv_bytes_per_token"],  # SGLang's cell, as its step says
        "tokens": plan["token_capacity"],
        "bytes_per_token": plan["kv_bytes_per_token"],
        "block_size": plan["page_size"],
        "num_blocks": plan["num_blocks"],
        "kv_pool_bytes": plan["kv_pool_bytes"],
        "max_running_requests": plan["max_running_requests"],
        "stages": [
            {"pp_rank": r["pp_rank"], "layers": r["layers"],
             "weights_bytes": r["weights_bytes"] + _released(engine, ledger, r["layers"]),
             "resident_bytes": r["weights_bytes"],
             "kv_bytes_per_token": r["kv_bytes_per_token"],
             "vision_bytes": sum(row["bytes"] for row in r["weights"] if row["component"] in TOWER_KINDS),
             "kv_pools": r["kv_pools"]}
            for r in plan["ranks"] if r["tp_rank"] == 0 and r["dp_rank"] == 0
        ],  # fmt: skip
        "not_modelled": plan["not_modelled"],
        # the config's sliding_window over every layer: kvtop's pool "full" is vLLM's one windowed group (§3.4)
        "config_sliding_window": ledger.model.config_sliding_window,
        # what this engine's judge also compares (EngineSpec.plan_readings: vLLM's spec window, DeepSeek-V4 specs)
        **plan_readings(engine, ledger),
    }


def _released(engine: str, ledger: Any, layers: list[int]) -> int:
    """Bytes the engine's classes build on a rank of the stage holding `layers` and its load frees again: in the
    meta-built count the engine runs report, in no plan (`EngineRules.weights_released`)."""
    from kvtop.domain.engines.registry import engine_rules

    rows = engine_rules(engine).weights_released(ledger.model, ledger.layout, range(*layers), ledger.gpu_name,
                                                 ledger.version, quantization=ledger.settings.quantization)  # fmt: skip
    return sum(row.bytes for row in rows)


def plan_readings(engine: str, ledger: Any) -> dict[str, Any]:
    """The engine's own readings of kvtop's ledger, each under its key (`EngineSpec.plan_readings`, "module:function"
    of a function taking the ledger); none for an engine that names none."""
    readings: dict[str, Any] = {}
    for key, target in ENGINES[engine].plan_readings:
        module, name = target.split(":")
        readings[key] = getattr(import_module(module), name)(ledger)
    return readings


def kvtop_draft_plan(engine: str, version: str, case: dict[str, Any], draft: str) -> dict[str, Any]:
    """kvtop's accounting of the draft `draft` (a config path) planned beside the case's model as its target
    (`--speculative-algorithm EAGLE3 --draft-model`): {"status": "ok", "weights_bytes" (the draft weights term of
    rank 0), "kv_bytes_per_token" (the draft KV term of rank 0)} or {"status": "refused", "message"}. Whether the
    target fits is not asked (the draft's own figures are compared), so no fit check."""
    argv = plan_argv(engine, version, {**case, "flags": []})
    argv += ["--speculative-algorithm", "EAGLE3", "--draft-model", draft]
    from kvtop.cli import build_parser
    from kvtop.commands.plan import build_ledger
    from kvtop.commands.render_ledger import ledger_json
    from kvtop.domain.errors import KvtopError

    args, extra = build_parser("plan").parse_known_args(argv)
    try:  # no GPU bounds the stand-ins' amounts (`gpu_bounds`, as `kvtop_plan`)
        plan = ledger_json(build_ledger(args, extra, gpu_bounds=False))
    except KvtopError as err:
        return {"status": "refused", "message": str(err)}
    first = next(r for r in plan["ranks"] if r["tp_rank"] == 0 and r["dp_rank"] == 0 and r["pp_rank"] == 0)
    terms = {
        term["label"].split(" ")[1].rstrip(":"): term
        for term in first["terms"]
        if term["label"].startswith("draft ")
    }
    if "weights" not in terms or "KV" not in terms:
        return {"status": "refused", "message": f"kvtop states no draft weights or KV term: {sorted(terms)}"}
    return {"status": "ok", "weights_bytes": int(terms["weights"]["bytes"]),
            "kv_bytes_per_token": int(terms["KV"]["bytes_per_token"])}  # fmt: skip

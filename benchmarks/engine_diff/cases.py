"""The sweep: configs × launch flags × TP/PP × KV dtype × GPU generation, one fixed budget per engine.

Two grids, both over every config (tests/data/configs, then tests/data/engine_diff/configs; `--configs`
may also name a config kept deeper under tests/data, found by `config_path`):
  default   TP 1/2/4/8 × KV auto/fp8 × sm80/sm90/sm100, no other flag (the engines' defaults);
  flags     one flag set at a time (FLAG_SETS: PP 2 and 4, block/page size, context length, max
            running requests, chunked prefill off, prefix caching off, fp8_e5m2, and launches the
            engine refuses), each at the TP sizes it names, KV auto, sm90 (H100).
A flag set is the engine's own command-line tokens: the engine's runner parses them with the
engine's CLI parser and kvtop's side passes the same tokens to `kvtop plan`, as a person would.

Each config becomes a folder holding `config.json` (and `hf_quant_config.json` where the model
has one), which is all the engines read without weights. The context is 32,768 tokens, or the
model's `max_position_embeddings` where that is smaller (both sides get the same number), unless a
flag set names its own.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.engine_diff.engines import GPU_GENERATIONS, MAX_CONTEXT, TPS, EngineSpec
from benchmarks.engine_diff.venvs import CACHE, REPO
from kvtop.units import GIB
from tests.conftest import CONFIGS, DATA

QUANT_SUFFIX = ".hf_quant_config.json"
HARNESS_CONFIGS = REPO / "tests" / "data" / "engine_diff" / "configs"
INDEXES = REPO / "tests" / "data" / "engine_diff" / "indexes"  # model.safetensors.index.json stand-ins
CONFIG_FOLDERS = (CONFIGS, HARNESS_CONFIGS)  # the sweep's own configs (top level only); a name in both is an error

# The fixed budgets: vLLM's KV memory (`--kv-cache-memory-bytes`), and SGLang's measured free
# memory before and after weight load with mem_fraction_static (rest = after − before × (1 − mfs)).
VLLM_KV_BYTES = 40 * GIB
SGLANG_FREE_BEFORE = 80 * GIB
SGLANG_FREE_AFTER = 60 * GIB
SGLANG_MEM_FRACTION = 0.75  # rest = 60 GiB − 80 GiB × 0.25 = 40 GiB, exact in binary

DEFAULT = "default"
FLAG_GPU = "sm90"
# Which harness produced a fixture row (its "harness" field; rows without one are the first kind).
IN_PROCESS = "in-process"  # issue 20's: one process for many cases, SGLang's model a shell
FORKED = "forked"  # issue 33's: one forked process per case, both engines' own models built on meta


@dataclass(frozen=True)
class FlagSet:
    """One launch variant: the engine's own tokens for it, the TP sizes it runs at, and why."""

    name: str
    tokens: dict[str, tuple[str, ...]]  # engine -> its command-line tokens
    tps: tuple[int, ...]
    why: str
    context: int | None = None  # a context length of its own (else the model's, capped)
    kv_dtype: str | None = None  # a KV dtype of its own (else auto)
    moe_only: bool = False  # only for configs with routed experts
    configs: tuple[str, ...] = ()  # only these configs (a flag one class family takes), else every config


def _both(vllm: tuple[str, ...], sglang: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    return {"vllm": vllm, "sglang": sglang}


FLAG_SETS: tuple[FlagSet, ...] = (
    FlagSet("pp2", _both(("--pipeline-parallel-size", "2"), ("--pp-size", "2")), (2,),
            "PP 2: layers split over two stages, the pool sized by the fullest stage"),
    FlagSet("pp4", _both(("--pipeline-parallel-size", "4"), ("--pp-size", "4")), (1,),
            "PP 4 (uneven splits where 4 does not divide the layers)"),
    FlagSet("page32", _both(("--block-size", "32"), ("--page-size", "32")), (2,),
            "block / page size 32"),
    FlagSet("page64", _both(("--block-size", "64"), ("--page-size", "64")), (2,),
            "block / page size 64"),
    FlagSet("ctx4k", _both((), ()), (2,), "context 4,096 tokens", context=4096),
    FlagSet("ctx128k", _both((), ()), (2,),
            "context 131,072 tokens: refused where the model's max_position_embeddings is smaller",
            context=131_072),
    FlagSet("mrr64", _both(("--max-num-seqs", "64"), ("--max-running-requests", "64")), (2,),
            "64 running requests at most"),
    FlagSet("no-chunked-prefill", _both(("--no-enable-chunked-prefill",), ("--chunked-prefill-size", "-1")),
            (2,), "chunked prefill off"),
    FlagSet("no-prefix-cache", _both(("--no-enable-prefix-caching",), ("--disable-radix-cache",)), (2,),
            "prefix caching off (vLLM) / radix cache off (SGLang)"),
    FlagSet("fp8_e5m2", _both((), ()), (2,), "KV cache fp8_e5m2", kv_dtype="fp8_e5m2"),
    FlagSet("mm-dp", _both(("--mm-encoder-tp-mode", "data"), ("--mm-enable-dp-encoder",)), (2,),
            "the vision encoder data-parallel: whole on every TP rank", configs=("Qwen--Qwen2.5-VL-7B-Instruct",)),
    FlagSet("tp3", _both((), ()), (3,), "TP 3: a launch the engines refuse where 3 does not divide the heads"),
    FlagSet("ep", _both(("--enable-expert-parallel",), ("--ep-size", "2")), (2,),
            "expert parallel over the 2 TP ranks (MoE configs): experts split, not sharded", moe_only=True),
)  # fmt: skip
EXPERT_FIELDS = ("num_experts", "n_routed_experts", "num_local_experts", "moe_num_experts")


def has_experts(name: str) -> bool:
    """Whether the config routes over experts (in its text config where it nests one)."""
    config = json.loads(config_path(name).read_text())
    text = config.get("text_config") or config.get("llm_config") or {}
    return any((config.get(f) or text.get(f) or 0) > 1 for f in EXPERT_FIELDS)


def config_names() -> list[str]:
    """Every config the sweep reads, once (tests/data/configs first)."""
    names: set[str] = set()
    for folder in CONFIG_FOLDERS:
        names |= {p.name[: -len(".json")] for p in folder.glob("*.json") if not p.name.endswith(QUANT_SUFFIX)}
    return sorted(names)


def _one(name: str, paths: list[Path]) -> Path | None:
    """The one file of `paths`, None for none; two or more is an error naming them (no silent pick)."""
    if len(paths) > 1:
        listed = ", ".join(str(p.relative_to(REPO)) for p in sorted(paths))
        raise ValueError(f"config {name} is ambiguous: found as {listed}")
    return paths[0] if paths else None


def config_path(name: str) -> Path:
    """The config's file: the sweep's folders' top level first (tests/data/configs, tests/data/engine_diff/configs),
    else the one `<name>.json` anywhere under tests/data (its engine_diff/indexes stand-ins and quant sidecars aside:
    they share a config's name). Found twice at either step is an error naming both paths. The sweep's folders
    come first because tests/data/configs/heldout and tests/data/calibration/configs keep copies of some of them."""
    top = _one(name, [path for folder in CONFIG_FOLDERS if (path := folder / f"{name}.json").exists()])
    if top is not None:
        return top
    deeper = [p for p in DATA.rglob(f"{name}.json") if INDEXES not in p.parents and not p.name.endswith(QUANT_SUFFIX)]
    found = _one(name, deeper)
    if found is None:
        raise FileNotFoundError(f"no config named {name} under {DATA.relative_to(REPO)}")
    return found


def model_dir(name: str) -> Path:
    """A folder the engine can load: config.json (+ hf_quant_config.json, + model.safetensors.index.json where an
    engine decides what to build from the checkpoint's tensor names: tests/data/engine_diff/indexes/SOURCES.md)."""
    source = config_path(name)
    folder = CACHE / "models" / name
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, folder / "config.json")
    quant = source.with_name(f"{name}{QUANT_SUFFIX}")
    if quant.exists():
        shutil.copyfile(quant, folder / "hf_quant_config.json")
    index = INDEXES / f"{name}.json"
    if index.exists():
        shutil.copyfile(index, folder / "model.safetensors.index.json")
    return folder


def context_length(name: str) -> int:
    config = json.loads(config_path(name).read_text())
    text = config.get("text_config") or {}
    positions = config.get("max_position_embeddings") or text.get("max_position_embeddings") or MAX_CONTEXT
    return int(min(MAX_CONTEXT, positions))


def budget(spec: EngineSpec) -> dict[str, Any]:
    if spec.name == "vllm":
        return {"budget_bytes": VLLM_KV_BYTES}
    return {
        "free_before_bytes": SGLANG_FREE_BEFORE,
        "free_after_bytes": SGLANG_FREE_AFTER,
        "mem_fraction_static": SGLANG_MEM_FRACTION,
    }


def case_key(case: dict[str, Any]) -> tuple[str, str, int, int, str, str]:
    """What names one run: config, flag set, TP, PP, KV dtype, GPU."""
    return (case["config"], case.get("variant", DEFAULT), case["tp"], case.get("pp", 1), case["kv_dtype"], case["gpu"])


def _pp(tokens: tuple[str, ...]) -> int:
    for flag in ("--pipeline-parallel-size", "--pp-size"):
        if flag in tokens:
            return int(tokens[tokens.index(flag) + 1])
    return 1


def _case(spec: EngineSpec, name: str, folder: Path, gpu: str, tp: int, dtype: str, flags: FlagSet | None) -> dict[str, Any]:
    tokens = flags.tokens[spec.name] if flags else ()
    return {
        "config": name,
        "dir": str(folder),
        "variant": flags.name if flags else DEFAULT,
        "flags": list(tokens),
        "tp": tp,
        "pp": _pp(tokens),
        "kv_dtype": dtype,
        "gpu": gpu,
        "max_model_len": flags.context if flags and flags.context else context_length(name),
        **budget(spec),
    }


def cases(
    spec: EngineSpec,
    gpus: tuple[str, ...] = GPU_GENERATIONS,
    configs: list[str] | None = None,
    variants: tuple[str, ...] | None = None,
    tps: tuple[int, ...] = TPS,
    kv_dtypes: tuple[str, ...] | None = None,
) -> list[dict[str, Any]]:
    """The sweep's cases for `spec` on `gpus`: the default grid (TP × KV dtype × GPU) where
    `variants` names "default" (or is None), and each named flag set on FLAG_GPU."""
    out = []
    chosen = [f for f in FLAG_SETS if variants is None or f.name in variants]
    for name in configs or config_names():
        folder = model_dir(name)
        for gpu in gpus:
            if variants is None or DEFAULT in variants:
                dtypes = kv_dtypes or spec.kv_dtypes
                out += [_case(spec, name, folder, gpu, tp, d, None) for tp in tps for d in dtypes]
            if gpu != FLAG_GPU:
                continue
            for flags in chosen:
                if (flags.moe_only and not has_experts(name)) or (flags.configs and name not in flags.configs):
                    continue
                dtype = flags.kv_dtype or spec.kv_dtypes[0]
                out += [_case(spec, name, folder, gpu, tp, dtype, flags) for tp in flags.tps]
    return out

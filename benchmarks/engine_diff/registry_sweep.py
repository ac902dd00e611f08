"""The registry sweep: every class of the engines' registries that kvtop plans, and every real config at hand,
built by the engine on the meta device at TP 1 and TP 2, its figures cached for docs/fidelity_registry.md.

    python benchmarks/engine_diff/registry_sweep.py --engine vllm --set real      # every real config (held-out)
    python benchmarks/engine_diff/registry_sweep.py --engine vllm --set classes   # a config per planned class
    python benchmarks/engine_diff/registry_sweep.py --defaults                    # write the classes' default configs

Each case is the sweep's own (cases._case: KV auto, sm90, no flag, the fixed budget) run by the engine's runner
(vllm_runner / sglang_runner, one forked process per case, under `nice`, with a time limit per case:
registry_runner.py). The rows (engine figures only: status, each stage's parameter bytes by top-level child and,
vLLM, its KV cache specs layer by layer; SGLang's cell bytes) are merged into
tests/data/engine_diff/registry/<engine>-<version>.json; kvtop's side is recomputed when the doc is rendered
(registry_render.py), so the doc regenerates without the engines.
"""

from __future__ import annotations

import argparse
import functools
import json
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.engine_diff.cases import FLAG_GPU, budget
from benchmarks.engine_diff.engines import ENGINES
from benchmarks.engine_diff.published_fields import DERIVED_FIELDS, NOT_WRITTEN
from benchmarks.engine_diff.registry_configs import (
    DEFAULT_CONFIGS,
    ENGINE_CONFIG_TYPES,
    HUB_ID_CONFIGS,
    NO_DEFAULT,
    NO_PUBLISHED_CONFIG,
    REGISTRY_DATA,
    SUBFOLDER_CONFIGS,
    TOKENIZER_FILES,
    ConfigFile,
    config_for_class,
    default_configs,
    planned_classes,
    real_configs,
    variant_configs,
)
from benchmarks.engine_diff.run import HERE, _env, relative_paths
from benchmarks.engine_diff.venvs import CACHE, ensure_venv

WORK = CACHE / "registry"
# configs whose real checkpoint holds an lm_head of its own, which vLLM reads to untie (vllm_runner checkpoint-head)
CHECKPOINT_HEADS = REGISTRY_DATA / "checkpoint_heads.json"
CHECKPOINT_HEAD = "checkpoint_lm_head"
TPS = (1, 2)
# vLLM 0.33.0 picks the Mistral parser itself only beside consolidated*.safetensors (transformers_utils/config.py
# get_config, repo_utils.is_mistral_model_repo), which a config folder lacks: the flag an operator passes (SGLang's
# runner is given none: not judged on params.json yet)
MISTRAL_FORMAT_FLAGS = ("--config-format", "mistral")
# Classes vLLM 0.33.0 builds on one attention backend only, which its selector never picks first: the flag an operator
# passes (the row keeps it, and kvtop plans the row with it). Rnj1ForCausalLM: rnj1.py passes chunk_lookback to every
# layer's Attention, which only TRITON_ATTN's impl takes (FLASH_ATTN's raises TypeError 'unexpected keyword argument
# chunk_lookback'; kvtop refuses it there: engines/vllm/backends.CHUNK_LOOKBACK_ERAS).
BACKEND_FLAGS: dict[str, tuple[str, ...]] = {"Rnj1ForCausalLM": ("--attention-backend", "TRITON_ATTN")}
# Classes vLLM 0.33.0 builds on Blackwell only, swept there (the row keeps its gpu): FlintForCausalLM's
# models/flint/model.py asserts a FlashInferImpl ("Flint requires FlashInfer attention"), and FlashInfer takes its
# attention sinks on sm100 only (on sm90 the default FLASH_ATTN fails that assertion; FLASHINFER is refused: "attention
# sinks not supported", registry sweep, TP 1 and 2); on sm100 the selector picks FLASHINFER first.
CLASS_GPUS: dict[str, str] = {"FlintForCausalLM": "sm100"}
KEEP = ("config", "source", "architecture", "tp", "pp", "variant", "kv_dtype", "gpu", "max_model_len", "status",
        "error_type", "message", "cell_size", "seconds")  # fmt: skip
STAGE_KEEP = ("layers", "param_bytes", "layer_specs")


def fixture_path(engine: str, version: str) -> Path:
    return REGISTRY_DATA / f"{engine}-{version}.json"


def load_rows(engine: str, version: str) -> list[dict[str, Any]]:
    path = fixture_path(engine, version)
    return list(json.loads(path.read_text())["rows"]) if path.exists() else []


@functools.cache
def _first_rows(engine: str, version: str) -> dict[tuple[str, int], dict[str, Any]]:
    """(config, tp) -> the fixture's first row of that case, the fixture read once (vllm-0.33.0.json is 2.5 MB)."""
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    for row in load_rows(engine, version):
        rows.setdefault((row["config"], row["tp"]), row)
    return rows


def row_of(engine: str, version: str, config: str, tp: int) -> dict[str, Any]:
    """The engine's row of `config` at `tp` (its first, as the fixture lists them), for reading only; KeyError if
    the fixture holds none."""
    return _first_rows(engine, version)[(config, tp)]


def _model_dir(config: ConfigFile) -> Path:
    folder = WORK / "models" / config.name
    folder.mkdir(parents=True, exist_ok=True)
    own, other = ("params.json", "config.json") if config.mistral_format else ("config.json", "params.json")
    (folder / other).unlink(missing_ok=True)  # a Mistral-format folder holds params.json and no config.json
    shutil.copyfile(config.path, folder / own)
    marker = folder / CHECKPOINT_HEAD  # vllm_runner's checkpoint-head stand-in
    heads = json.loads(CHECKPOINT_HEADS.read_text())["heads"]
    if config.name in heads:
        marker.write_text(heads[config.name]["tensor"] + "\n")
    else:
        marker.unlink(missing_ok=True)
    quant = config.quant_file()
    if quant is not None:
        shutil.copyfile(quant, folder / "hf_quant_config.json")
    for sub, source in SUBFOLDER_CONFIGS.get(config.name, {}).items():  # configs the engine reads in a subfolder
        (folder / sub).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, folder / sub / "config.json")
    for name, content in TOKENIZER_FILES.get(config.name, {}).items():  # tokenizer files it reads as it builds
        (folder / name).write_text(json.dumps(content) + "\n")
    for hub_id, source in HUB_ID_CONFIGS.get(config.name, {}).items():  # a checkpoint it names by Hub id
        (WORK / hub_id).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, WORK / hub_id / "config.json")
    return folder


def _case(engine: str, config: ConfigFile, tp: int) -> dict[str, Any]:
    flags = list(MISTRAL_FORMAT_FLAGS) if config.mistral_format and engine == "vllm" else []
    flags += list(BACKEND_FLAGS.get(config.architecture, ())) if engine == "vllm" else []
    return {"config": config.name, "dir": str(_model_dir(config)), "variant": "default", "flags": flags, "tp": tp,
            "pp": 1, "kv_dtype": "auto", "gpu": CLASS_GPUS.get(config.architecture, FLAG_GPU), "max_model_len": config.context(),
            **budget(ENGINES[engine])}  # fmt: skip


def _row(answer: dict[str, Any], config: ConfigFile) -> dict[str, Any]:
    row = {k: answer[k] for k in KEEP if k in answer}
    row.update(source=config.source, architecture=config.architecture)
    if config.architecture in BACKEND_FLAGS and answer.get("flags"):  # the backend flag the case ran with
        row["flags"] = list(answer["flags"])
    if isinstance(row.get("message"), str):
        row["message"] = row["message"].splitlines()[0][:300] if row["message"] else ""
        tail = [line.strip() for line in answer.get("traceback_tail") or [] if line.strip()]
        said = [line for line in tail if line.startswith("Value error,")] or tail[-1:]
        if said and said[0][:80] not in row["message"]:  # pydantic's first line says no more than "1 validation error"
            row["message"] = f"{row['message']} … {said[0]}"[:400]
    if answer.get("stages"):
        row["stages"] = [{k: s[k] for k in STAGE_KEEP if k in s} for s in answer["stages"]]
    return row


def run(engine: str, configs: list[ConfigFile], tps: tuple[int, ...], seconds: int, tag: str) -> list[dict[str, Any]]:
    """The engine's answers for each config at each TP (the runner's JSON lines, trimmed to the rows' keys)."""
    spec = ENGINES[engine]
    version = spec.versions[0]
    WORK.mkdir(parents=True, exist_ok=True)
    todo = [_case(engine, c, tp) for c in configs for tp in tps]
    cases_file, answers = WORK / f"{engine}-{tag}-cases.json", WORK / f"{engine}-{tag}-answers.jsonl"
    cases_file.write_text(json.dumps(todo))
    answers.unlink(missing_ok=True)
    command = ["nice", "-n", "10", str(ensure_venv(spec, version)), str(HERE / "registry_runner.py"), spec.runner[:-3],
               str(seconds), "--cases", str(cases_file), "--out", str(answers)]  # fmt: skip
    with (WORK / f"{engine}-{tag}-runner.log").open("w") as log:
        subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=_env(spec), cwd=WORK, check=False)
    return reread(engine, configs, tag)


def reread(engine: str, configs: list[ConfigFile], tag: str) -> list[dict[str, Any]]:
    """The rows of the engine's last answers file of a set (the runner's JSON lines, trimmed to the rows' keys)."""
    by_name = {c.name: c for c in configs}
    answers = WORK / f"{engine}-{tag}-answers.jsonl"
    rows = []
    for line in answers.read_text().splitlines() if answers.exists() else []:
        answer = json.loads(line)
        rows.append(_row(answer, by_name[answer["config"]]))
    return rows


def parameters(engine: str, config: ConfigFile, tp: int) -> list[str]:
    """The engine's named parameters of one config at one TP, grouped over layers (param_shapes.grouped): where a
    weights difference comes from."""
    from benchmarks.engine_diff.param_shapes import grouped

    spec = ENGINES[engine]
    out = WORK / "params"
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob(f"{spec.name}-{config.name}-*"):
        old.unlink()
    (WORK / "params-cases.json").write_text(json.dumps([_case(engine, config, tp)]))
    command = ["nice", "-n", "10", str(ensure_venv(spec, spec.versions[0])), str(HERE / "param_shapes_runner.py"),
               spec.runner[:-3], "--cases", str(WORK / "params-cases.json"), "--out", str(WORK / "params.jsonl")]  # fmt: skip
    with (WORK / "params-runner.log").open("w") as log:
        subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env={**_env(spec), "PARAM_SHAPES_DIR": str(out)},
                       cwd=WORK, check=False)  # fmt: skip
    return [line for path in sorted(out.glob(f"{spec.name}-{config.name}-*.json")) for line in grouped(path)]


def merge(engine: str, rows: list[dict[str, Any]]) -> Path:
    """The fixture with these rows in place of any of the same config and TP."""
    version = ENGINES[engine].versions[0]
    keyed = {(r["config"], r["tp"]): r for r in load_rows(engine, version)}
    keyed.update({(r["config"], r["tp"]): r for r in rows})
    path = fixture_path(engine, version)
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {"engine": engine, "version": version, "gpu": FLAG_GPU, "kv_dtype": "auto",
            "rows": [keyed[k] for k in sorted(keyed)]}  # fmt: skip
    path.write_text(relative_paths(json.dumps(body, indent=0, sort_keys=True)) + "\n")  # no machine's paths
    return path


def _engine_defaults(engine: str, pairs: list[list[str | None]]) -> dict[str, Any]:
    """registry_runner `defaults` in the engine's venv: {class: config or error}."""
    WORK.mkdir(parents=True, exist_ok=True)
    (WORK / f"defaults-{engine}-in.json").write_text(json.dumps(pairs))
    spec = ENGINES[engine]
    command = [str(ensure_venv(spec, spec.versions[0])), str(HERE / "registry_runner.py"), "defaults",
               str(WORK / f"defaults-{engine}-in.json"), str(WORK / f"defaults-{engine}-out.json")]  # fmt: skip
    subprocess.run(command, env=_env(spec), cwd=WORK, check=True)
    return dict(json.loads((WORK / f"defaults-{engine}-out.json").read_text()))


def write_defaults(engine: str) -> list[str]:
    """The default config of each class kvtop plans that no real config names: its transformers config class, in
    `engine`'s venv, or the config class an engine ships for the class's model (ENGINE_CONFIG_TYPES), in that
    engine's venv."""
    from kvtop.domain.architectures.registry import BY_CLASS_NAME

    have = config_for_class(real_configs() + default_configs())
    wanted = sorted({name for e in ENGINES if e in ("vllm", "sglang") for name, kind, _ in planned_classes(e)
                     if kind != "not_modelled" and name not in have})  # fmt: skip
    by_engine: dict[str, list[list[str | None]]] = {}
    for name in wanted:
        linked = ENGINE_CONFIG_TYPES.get(name)
        model_type = linked[1] if linked else BY_CLASS_NAME[name].model_type if name in BY_CLASS_NAME else None
        by_engine.setdefault(linked[0] if linked else engine, []).append([name, model_type])
    made: dict[str, Any] = {}
    for venv_engine, pairs in sorted(by_engine.items()):
        made.update(_engine_defaults(venv_engine, pairs))
    DEFAULT_CONFIGS.mkdir(parents=True, exist_ok=True)
    failed = {}
    for name, data in made.items():
        if "error" in data and len(data) == 1:
            failed[name] = NO_PUBLISHED_CONFIG.get(name) or (
                f"the engine's config class: {NO_DEFAULT[name]}" if name in NO_DEFAULT else data["error"])
        else:
            data.update(DERIVED_FIELDS[name](data) if name in DERIVED_FIELDS else {})
            data = {key: value for key, value in data.items() if key not in NOT_WRITTEN.get(name, ())}
            (DEFAULT_CONFIGS / f"{name}.json").write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    no_config = REGISTRY_DATA / "no_config.json"
    previous = json.loads(no_config.read_text()) if no_config.exists() else {}
    kept = merge_no_config(previous, failed, wanted, made.keys() - failed.keys())
    no_config.write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n")
    return sorted(made)


def merge_no_config(
    previous: dict[str, str], failed: dict[str, str], wanted: Iterable[str], made: Iterable[str]
) -> dict[str, str]:
    """no_config.json as docs/fidelity_registry.md's "no config at hand" reads it: the classes this run wanted (kvtop
    plans them, no config names them) and did not make a default for, each with this run's reason (else the one it
    had). A class that has a config now, or is not modelled, is not wanted and is dropped (it was kept before
    session 47, which left H2OVLChatModel and 21 others listed after their configs were committed)."""
    without = set(wanted) - set(made)
    return {name: why for name, why in {**previous, **failed}.items() if name in without}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--engine", choices=("vllm", "sglang"), default="vllm")
    parser.add_argument("--set", choices=("real", "classes"), default="real")
    parser.add_argument("--only", help="comma-separated config names")
    parser.add_argument("--skip-done", action="store_true", help="leave out configs the fixture already holds")
    parser.add_argument("--tps", default="1,2")
    parser.add_argument("--tag", help="names the run's work files (default: the set), so two runs can go at once")
    parser.add_argument("--seconds", type=int, default=240, help="time limit per case")
    parser.add_argument("--defaults", action="store_true", help="write the default configs (no engine run)")
    parser.add_argument("--params", help="print the engine's parameters of this one config (at the first of --tps)")
    parser.add_argument("--reread", action="store_true", help="merge the last answers file again (no engine run)")
    args = parser.parse_args()
    if args.defaults:
        print(f"{len(write_defaults(args.engine))} classes asked for; see {DEFAULT_CONFIGS.relative_to(REGISTRY_DATA.parents[2])}")
        return 0
    if args.params:
        chosen = {c.name: c for c in real_configs() + default_configs()}[args.params]
        print(*parameters(args.engine, chosen, int(args.tps.split(",")[0])), sep="\n")
        return 0
    if args.set == "real":
        configs = real_configs()
    else:
        planned = {name for name, kind, _ in planned_classes(args.engine) if kind != "not_modelled"}
        chosen = config_for_class(real_configs() + default_configs())
        variants = [c for c in variant_configs() if c.architecture in planned]
        configs = sorted({c.name: c for n, c in chosen.items() if n in planned}.values(), key=lambda c: c.name)
        configs += variants
    if args.only:
        configs = [c for c in configs if c.name in args.only.split(",")]
    if args.skip_done:
        done = {r["config"] for r in load_rows(args.engine, ENGINES[args.engine].versions[0])}
        configs = [c for c in configs if c.name not in done]
    print(f"{len(configs)} configs × TP {args.tps} on {args.engine}", flush=True)
    if args.reread:
        rows = reread(args.engine, real_configs() + default_configs(), args.tag or args.set)
    else:
        rows = run(args.engine, configs, tuple(int(t) for t in args.tps.split(",")), args.seconds, args.tag or args.set)
    print(f"{len(rows)} rows into {merge(args.engine, rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

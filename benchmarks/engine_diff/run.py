"""Run an engine's own KV sizing code over every config and compare it with kvtop.

    python benchmarks/engine_diff/run.py --engine vllm --version 0.33.0
    python benchmarks/engine_diff/run.py --engine sglang            # every pinned version
    python benchmarks/engine_diff/run.py --table-only               # docs/fidelity.md from the fixtures

Makes the (engine, version) venv under `.cache/engine_diff/` if missing (see venvs.py), runs the
engine's runner in it once per GPU generation (niced), writes the engine's figures to
`tests/data/engine_diff/<engine>-<version>.json`, then recomputes kvtop's side for every fixture
and writes `docs/fidelity.md`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the repository root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.engine_diff.cases import cases, config_names
from benchmarks.engine_diff.engines import ENGINES, GPU_GENERATIONS, EngineSpec
from benchmarks.engine_diff.venvs import CACHE, REPO, ensure_venv, installed_versions

FIXTURES = REPO / "tests" / "data" / "engine_diff"
HERE = Path(__file__).resolve().parent


def stand_ins(python: Path, spec: EngineSpec) -> list[str]:
    code = f"import sys; sys.path.insert(0, {str(HERE)!r}); import {spec.runner[:-3]} as r; print('\\n'.join(r.STAND_INS))"
    done = subprocess.run(
        [str(python), "-c", code], check=True, capture_output=True, text=True, env=_env(spec)
    )
    return done.stdout.split()


def _env(spec: EngineSpec) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the runner sees the engine's venv only, never kvtop
    env.update(
        VLLM_CACHE_ROOT=str(CACHE / "vllm-cache"),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        SGLANG_CACHE_ROOT=str(CACHE / "sglang-cache"),
        CUDA_VISIBLE_DEVICES="",
        TOKENIZERS_PARALLELISM="false",
    )
    env.update(spec.env)
    return env


def sweep(
    spec: EngineSpec, version: str, gpus: tuple[str, ...], configs: list[str] | None, run: bool = True
) -> Path:
    python = ensure_venv(spec, version)
    work = CACHE / "runs" / f"{spec.name}-{version}"
    work.mkdir(parents=True, exist_ok=True)
    results: list[dict[str, object]] = []
    for gpu in gpus:
        todo = cases(spec, (gpu,), configs)
        out = work / f"{gpu}.jsonl"
        if run:
            out.unlink(missing_ok=True)
        for attempt in range(
            5 if run else 0
        ):  # a crash of the runner process resumes after the case it died on
            done = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
            keys = {(d["config"], d["tp"], d["kv_dtype"]) for d in done}
            left = [c for c in todo if (c["config"], c["tp"], c["kv_dtype"]) not in keys]
            if not left:
                break
            if attempt:
                crashed = left.pop(0)
                with out.open("a") as fh:
                    fh.write(
                        json.dumps(
                            {
                                **{k: crashed[k] for k in ("config", "tp", "kv_dtype", "gpu")},
                                "status": "harness-error",
                                "message": "the runner process died on this case",
                            }
                        )
                        + "\n"
                    )
            (work / f"{gpu}.cases.json").write_text(json.dumps(left))
            cmd = [
                "nice",
                "-n",
                "10",
                str(python),
                str(HERE / spec.runner),
                "--cases",
                str(work / f"{gpu}.cases.json"),
                "--out",
                str(out),
            ]
            with (work / f"{gpu}.log").open("a") as log:
                subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=_env(spec), cwd=work)
        results += [json.loads(line) for line in out.read_text().splitlines()]
        print(f"{spec.name} {version} {gpu}: {len(todo)} cases", file=sys.stderr)
    path = FIXTURES / f"{spec.name}-{version}.json"
    if (configs or set(gpus) != set(GPU_GENERATIONS)) and path.exists():  # a partial rerun replaces its rows
        old = json.loads(path.read_text())["results"]
        chosen = set(configs or config_names())
        kept = [r for r in old if not (r["config"] in chosen and r["gpu"] in gpus)]
        results = kept + results
    fixture = {
        "engine": spec.name,
        "version": version,
        "packages": installed_versions(python, (spec.package, "torch", "transformers")),
        "stand_ins": stand_ins(python, spec),
        "results": [_for_fixture(r) for r in results],
    }
    FIXTURES.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(fixture, indent=1, sort_keys=True) + "\n")
    return path


def _for_fixture(result: dict[str, object]) -> dict[str, object]:
    """A result as committed: no machine paths or tracebacks; pydantic's 'N validation error'
    first line replaced by the engine's own 'Value error, …' text."""
    out = {k: v for k, v in result.items() if k not in ("dir", "traceback_tail")}
    message = str(out.get("message", ""))
    if "validation error for" in message:
        for line in result.get("traceback_tail") or []:  # type: ignore[union-attr]
            if "Value error, " in str(line):
                out["message"] = str(line).split("Value error, ", 1)[1].split(" [type=")[0][:600]
                break
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description="engine-vs-kvtop KV sizing, over every config")
    parser.add_argument("--engine", choices=sorted(ENGINES))
    parser.add_argument("--version", help="one engine version (default: every pinned one)")
    parser.add_argument("--gpus", default=",".join(GPU_GENERATIONS), help="sm80,sm90,sm100")
    parser.add_argument("--configs", default=None, help="comma-separated config names (default: all)")
    parser.add_argument("--table-only", action="store_true", help="only rewrite docs/fidelity.md")
    parser.add_argument(
        "--from-runs",
        action="store_true",
        help="rebuild the fixtures from the last runs under .cache (no engine run)",
    )
    args = parser.parse_args()
    if not args.table_only:
        specs = [ENGINES[args.engine]] if args.engine else list(ENGINES.values())
        for spec in specs:
            for version in [args.version] if args.version else spec.versions:
                configs = args.configs.split(",") if args.configs else None
                path = sweep(spec, version, tuple(args.gpus.split(",")), configs, run=not args.from_runs)
                print(f"wrote {path.relative_to(REPO)}", file=sys.stderr)
    from benchmarks.engine_diff.table import write_table

    print(f"wrote {write_table().relative_to(REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

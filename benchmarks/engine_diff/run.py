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
import re
import subprocess
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the repository root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.engine_diff.cases import DEFAULT, FORKED, IN_PROCESS, case_key, cases, config_path
from benchmarks.engine_diff.engines import ENGINES, GPU_GENERATIONS, TPS, EngineSpec
from benchmarks.engine_diff.table import fixture_paths, read_fixture
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
    spec: EngineSpec,
    version: str,
    gpus: tuple[str, ...],
    configs: list[str] | None,
    variants: tuple[str, ...] | None = None,
    run: bool = True,
    tps: tuple[int, ...] = TPS,
    kv_dtypes: tuple[str, ...] | None = None,
) -> Path:
    """Run the engine's runner over the cases (one runner process per GPU generation, one forked
    process per case inside it), then write the fixture: the rows of this run replace the same
    cases' rows of the committed fixture, the others are kept."""
    python = ensure_venv(spec, version)
    work = CACHE / "runs" / f"{spec.name}-{version}"
    work.mkdir(parents=True, exist_ok=True)
    results: list[dict[str, object]] = []
    for gpu in gpus:
        todo = cases(spec, (gpu,), configs, variants, tps, kv_dtypes)
        if not todo:
            continue
        out = work / f"{gpu}.jsonl"
        if run:
            out.unlink(missing_ok=True)
            (work / f"{gpu}.cases.json").write_text(json.dumps(todo))
            cmd = ["nice", "-n", "10", str(python), str(HERE / spec.runner),
                   "--cases", str(work / f"{gpu}.cases.json"), "--out", str(out)]  # fmt: skip
            with (work / f"{gpu}.log").open("a") as log:
                subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=_env(spec), cwd=work)
        done = {case_key(r): r for r in (json.loads(line) for line in out.read_text().splitlines())}
        for case in todo:  # the runner process itself died before this case (never a figure)
            if case_key(case) not in done:
                done[case_key(case)] = {**case, "status": "harness-error", "message": "no answer: the runner process stopped before this case (it died or the sweep was stopped)"}
        results += [{**done[case_key(case)], "harness": FORKED} for case in todo]
        print(f"{spec.name} {version} {gpu}: {len(todo)} cases", file=sys.stderr)
    main, flags = fixture_paths(spec.name, version)
    previous = read_fixture(spec.name, version)
    fresh_rows = results
    fresh = {case_key(r) for r in results}  # a partial rerun replaces its own rows, keeps the others
    results = [r for r in previous.get("results", []) if case_key(r) not in fresh] + results
    head = {
        "engine": spec.name,
        "version": version,
        "packages": {**previous.get("packages", {}),
                     FORKED: installed_versions(python, (spec.package, "torch", "transformers", "triton"))},
        "stand_ins": {**previous.get("stand_ins", {}), FORKED: stand_ins(python, spec)},
    }  # fmt: skip
    rows = sorted((_for_fixture(r) for r in results), key=case_key)
    FIXTURES.mkdir(parents=True, exist_ok=True)
    default_rows = [r for r in rows if r.get("variant", DEFAULT) == DEFAULT]
    flag_rows = [r for r in rows if r.get("variant", DEFAULT) != DEFAULT]
    # A file is rewritten only where this run answered some of its cases (its other rows kept).
    if any(r.get("variant", DEFAULT) == DEFAULT for r in fresh_rows):
        main.write_text(json.dumps({**head, "results": default_rows}, indent=1, sort_keys=True) + "\n")
    if any(r.get("variant", DEFAULT) != DEFAULT for r in fresh_rows):
        harnesses = {str(r.get("harness", IN_PROCESS)) for r in flag_rows}  # the head names only these
        own = {key: {h: v for h, v in head[key].items() if h in harnesses} for key in ("packages", "stand_ins")}
        flags.write_text(compact_fixture({**head, **own}, flag_rows))
    return main


def compact_fixture(head: dict[str, object], rows: list[dict[str, object]]) -> str:
    """A fixture as JSON with one result a line: the flag sweep's hundreds of rows stay a file of
    hundreds of lines (and a rerun's diff one line per changed row), not one of 100,000+."""
    lines = [json.dumps(row, sort_keys=True, separators=(",", ":")) for row in rows]
    head_text = json.dumps(head, indent=1, sort_keys=True)[: -len("\n}")]
    return head_text + ',\n "results": [\n' + ",\n".join(lines) + "\n ]\n}\n"


def _for_fixture(result: dict[str, object]) -> dict[str, object]:
    """A result as committed: no machine paths or tracebacks; pydantic's 'N validation error'
    first line replaced by the engine's own 'Value error, …' text."""
    out = {k: v for k, v in result.items() if k not in ("dir", "traceback_tail")}
    if isinstance(out.get("log"), list):  # a line logged by every rank once
        out["log"] = list(dict.fromkeys(out["log"]))
    message = str(out.get("message", ""))
    if "validation error for" in message:
        for line in result.get("traceback_tail") or []:  # type: ignore[union-attr]
            if "Value error, " in str(line):
                message = str(line).split("Value error, ", 1)[1].split(" [type=")[0][:600]
                break
    if message:
        out["message"] = relative_paths(message)
    if "log" in out:
        out["log"] = [relative_paths(str(line)) for line in out["log"]]  # type: ignore[union-attr]
    return out


CHECKOUT_PREFIX = re.compile(r"(?<![\w.])/(?:[\w.+-]+/)+?(?=\.cache/engine_diff/|tests/data/|benchmarks/engine_diff/)")
SITE_PACKAGES = re.compile(r"(?<![\w.])/(?:[\w.+-]+/)+?site-packages/")


def relative_paths(text: str) -> str:
    """Paths of a checkout (this one's or the one an older row was made in: the config folders under
    .cache among them) relative to it, and a venv's site-packages named as such: a committed file
    names no path of the machine that made it."""
    text = text.replace(f"{REPO}/", "").replace(str(REPO), ".")
    text = SITE_PACKAGES.sub("site-packages/", CHECKOUT_PREFIX.sub("", text))
    return OTHER_PATH.sub(lambda m: "<…>/" + "/".join(m.group(0).rsplit("/", 2)[-2:]), text)


# Any other absolute path (a build machine's, as in torch's gloo messages): "<…>/" and its last two parts.
OTHER_PATH = re.compile(r"(?<![\w.:/<>])/(?:[\w.+-]+/)+[\w.+-]+")


def main() -> int:
    parser = argparse.ArgumentParser(description="engine-vs-kvtop KV sizing, over every config")
    parser.add_argument("--engine", choices=sorted(ENGINES))
    parser.add_argument("--version", help="one engine version (default: every pinned one)")
    parser.add_argument("--gpus", default=",".join(GPU_GENERATIONS), help="sm80,sm90,sm100")
    parser.add_argument("--configs", default=None, help="comma-separated config names (default: all)")
    parser.add_argument("--variants", default=None, help="comma-separated flag sets, default among them (default: all)")
    parser.add_argument("--tps", default=",".join(map(str, TPS)), help="TP sizes of the default grid")
    parser.add_argument("--kv-dtypes", default=None, help="KV dtypes of the default grid (the engine's spelling)")
    parser.add_argument(
        "--order-check", action="store_true",
        help="run the order check (order_check.py) for the chosen engine versions, then the table",
    )  # fmt: skip
    parser.add_argument("--no-table", action="store_true", help="write the fixtures only (the table later)")
    parser.add_argument("--table-only", action="store_true", help="only rewrite docs/fidelity.md")
    parser.add_argument(
        "--from-runs",
        action="store_true",
        help="rebuild the fixtures from the last runs under .cache (no engine run)",
    )
    args = parser.parse_args()
    for name in args.configs.split(",") if args.configs else ():
        try:  # a name not found, or found twice, stops the run before any venv is made
            config_path(name)
        except (FileNotFoundError, ValueError) as e:
            parser.error(f"--configs: {e}")
    specs = [ENGINES[args.engine]] if args.engine else list(ENGINES.values())
    if args.order_check:
        from benchmarks.engine_diff.order_check import order_check, write_order_checks

        checks = {
            f"{spec.name}-{version}": order_check(spec, version)
            for spec in specs
            for version in ([args.version] if args.version else spec.versions)
        }
        print(f"wrote {write_order_checks(checks).relative_to(REPO)}", file=sys.stderr)
    elif not args.table_only:
        for spec in specs:
            for version in [args.version] if args.version else spec.versions:
                configs = args.configs.split(",") if args.configs else None
                variants = tuple(args.variants.split(",")) if args.variants else None
                path = sweep(
                    spec, version, tuple(args.gpus.split(",")), configs, variants, run=not args.from_runs,
                    tps=tuple(int(t) for t in args.tps.split(",")),
                    kv_dtypes=tuple(args.kv_dtypes.split(",")) if args.kv_dtypes else None,
                )
                print(f"wrote {path.relative_to(REPO)}", file=sys.stderr)
    if args.no_table:
        return 0
    from benchmarks.engine_diff.table import write_table

    print(f"wrote {write_table().relative_to(REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

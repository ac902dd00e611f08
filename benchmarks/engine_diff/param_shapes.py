"""The engine's own parameters, name by name, for one config at one layout: where a weights gap comes from.

    python benchmarks/engine_diff/param_shapes.py --engine sglang --variant ep --tp 2 --configs zai-org--GLM-5

The fixtures keep only each stage's bytes by top-level child (`param_bytes`); this runs the same cases through
the engine's runner (param_shapes_runner.py, in the engine's venv: venvs.ensure_venv) and prints each stage's
parameters grouped over layers (`layers.N.`): name, shape, dtype, how many, bytes. The files stay under
.cache/engine_diff/param_shapes/. The expected bytes of tests/domain/test_engine_param_shapes.py were read so (SGLang 0.5.23, vLLM 0.33.0).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.engine_diff.cases import FLAG_GPU, cases
from benchmarks.engine_diff.engines import ENGINES
from benchmarks.engine_diff.run import HERE, _env
from benchmarks.engine_diff.venvs import CACHE, ensure_venv


def grouped(path: Path) -> list[str]:
    """One line per parameter name with its layer index as N: shape, dtype, count, bytes."""
    groups: dict[tuple[str, str, str], list[int]] = {}
    for name, shape, dtype, nbytes in json.loads(path.read_text()):
        key = (re.sub(r"\.\d+\.", ".N.", name), str(shape), dtype)
        entry = groups.setdefault(key, [0, 0])
        entry[0] += 1
        entry[1] += nbytes
    lines = [f"{n:<72} {s:<22} {d:<20} ×{c:<4} {b:>18,}" for (n, s, d), (c, b) in groups.items()]
    return [*lines, f"{'total':<120} {sum(b for _, b in groups.values()):>18,}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--engine", choices=sorted(ENGINES), required=True)
    parser.add_argument("--version", help="default: the engine's newest pinned version")
    parser.add_argument("--variant", default="default", help="a flag set of cases.py (ep, pp2, pp4, …)")
    parser.add_argument("--tp", type=int, default=2)
    parser.add_argument("--configs", required=True, help="comma-separated config names")
    args = parser.parse_args()
    spec = ENGINES[args.engine]
    version = args.version or spec.versions[0]
    todo = [c for c in cases(spec, (FLAG_GPU,), args.configs.split(","), (args.variant,), (args.tp,), (spec.kv_dtypes[0],))
            if c["tp"] == args.tp]  # fmt: skip
    work = CACHE / "param_shapes"
    out = work / "params"
    out.mkdir(parents=True, exist_ok=True)
    (work / "cases.json").write_text(json.dumps(todo))
    command = ["nice", "-n", "10", str(ensure_venv(spec, version)), str(HERE / "param_shapes_runner.py"),
               spec.runner[:-3], "--cases", str(work / "cases.json"), "--out", str(work / "answers.jsonl")]  # fmt: skip
    with (work / "runner.log").open("w") as log:
        subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env={**_env(spec), "PARAM_SHAPES_DIR": str(out)},
                       cwd=work, check=False)  # fmt: skip
    for case in todo:
        prefix = f"{spec.name}-{case['config']}-{case.get('variant', 'default')}-tp{case['tp']}-pp{case.get('pp', 1)}-s"
        for path in sorted(out.glob(prefix + "*.json")):
            print(f"== {path.name}", *grouped(path), sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

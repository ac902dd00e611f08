"""An engine's runner (vllm_runner / sglang_runner) that also writes each stage's named_parameters.

Run in the engine's venv by param_shapes.py: the runner's own cases, each stage's model built on meta as the
runner builds it; beside its JSON-lines answer, one file a stage under $PARAM_SHAPES_DIR holding
[name, shape, dtype, bytes] for every parameter (what the fixture's `param_bytes` sums by top-level child; for
SGLang less those its loader empties after loading, sglang_standins.EMPTIED_AFTER_LOADING).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
RUNNER = sys.argv.pop(1)
runner: Any = __import__(RUNNER)
OUT = os.environ["PARAM_SHAPES_DIR"]
STATE: dict[str, Any] = {"case": {}, "stage": 0}


def _write(model: Any, emptied: frozenset[str] = frozenset()) -> None:
    rows = [[name, list(p.shape), str(p.dtype), p.numel() * p.element_size()]
            for name, p in model.named_parameters(remove_duplicate=True) if name not in emptied]  # fmt: skip
    case = STATE["case"]
    tag = f"{RUNNER.split('_')[0]}-{case.get('config')}-{case.get('variant', 'default')}-tp{case.get('tp')}"
    with open(os.path.join(OUT, f"{tag}-pp{case.get('pp', 1)}-s{STATE['stage']}.json"), "w") as fh:
        json.dump(rows, fh)
    STATE["stage"] += 1


if RUNNER == "vllm_runner":  # one process a case, its stages in order
    _case, _bytes = runner.run_case, runner._param_bytes

    def _run_case(case: dict[str, Any], platform: Any) -> Any:
        STATE.update(case=case, stage=0)
        return _case(case, platform)

    def _param_bytes(model: Any) -> Any:
        _write(model)
        return _bytes(model)

    runner.run_case, runner._param_bytes = _run_case, _param_bytes
else:  # SGLang: one process a pipeline rank
    _rank, _bytes = runner._run_rank, runner.param_bytes

    def _run_rank(case: dict[str, Any], pp_rank: int) -> Any:
        STATE.update(case=case, stage=pp_rank)
        return _rank(case, pp_rank)

    def _sglang_bytes(model: Any) -> Any:
        from sglang_standins import emptied_after_loading

        _write(model, frozenset(emptied_after_loading(model)))
        return _bytes(model)

    runner._run_rank, runner.param_bytes = _run_rank, _sglang_bytes

if __name__ == "__main__":
    sys.exit(runner.main())

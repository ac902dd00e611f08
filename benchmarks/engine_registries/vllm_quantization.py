"""The `--quantization` words each vLLM release takes and those it refuses as deprecated, read from its source.

`python benchmarks/engine_registries/vllm_quantization.py ROOT...` prints JSON keyed by each ROOT's last part (name
it by its release): each ROOT holds a release's `vllm/` tree (a wheel's site-packages, or the two files below
unzipped from the wheel). Read without importing vLLM:

- model_executor/layers/quantization/__init__.py: the strings of `QuantizationMethods = Literal[...]` (v0.8.5 on;
  `QUANTIZATION_METHODS = list(get_args(QuantizationMethods))`) and of `DEPRECATED_QUANTIZATION_METHODS` (v0.14.0 on);
- config/model.py: the line of `ModelConfig._verify_quantization`'s "Unknown quantization method" and of the
  deprecated check (a ValueError unless --allow-deprecated-quantization).

kvtop/domain/engines/vllm/arg_choices.py's QUANTIZATION_ERAS and DEPRECATED_ERAS (v0.14.1-v0.32.0, session 58) were
made with it from the PyPI x86_64 wheels (their files read by HTTP range requests).
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

INIT = "vllm/model_executor/layers/quantization/__init__.py"
MODEL = "vllm/config/model.py"


def _strings(node: ast.expr) -> list[str]:
    elements = node.slice.elts if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple) else (
        node.elts if isinstance(node, ast.List | ast.Tuple) else [])  # fmt: skip
    return sorted(e.value for e in elements if isinstance(e, ast.Constant) and isinstance(e.value, str))


def read(root: Path) -> dict[str, object]:
    """One release's methods, deprecated methods and the lines that hold them."""
    found: dict[str, object] = {}
    for node in ast.walk(ast.parse((root / INIT).read_text())):
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) else None)  # fmt: skip
        if not isinstance(target, ast.Name) or node.value is None:  # type: ignore[union-attr]
            continue
        if target.id in ("QuantizationMethods", "DEPRECATED_QUANTIZATION_METHODS"):
            found[target.id] = _strings(node.value)  # type: ignore[union-attr]
            found[f"{target.id}_line"] = node.lineno
    model = (root / MODEL).read_text().splitlines()
    found["unknown_line"] = next((i + 1 for i, line in enumerate(model) if "Unknown quantization method" in line), None)
    found["deprecated_check_line"] = next(
        (i + 1 for i, line in enumerate(model) if "in me_quant.DEPRECATED_QUANTIZATION_METHODS" in line), None)
    return found


if __name__ == "__main__":
    print(json.dumps({Path(root).name: read(Path(root)) for root in sys.argv[1:]}, indent=1))

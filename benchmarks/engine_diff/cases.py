"""The sweep: every config in the test data × TP × KV dtype × GPU generation, one fixed budget.

Each config becomes a folder holding `config.json` (and `hf_quant_config.json` where the model
has one), which is all the engines read without weights. The context is 32,768 tokens, or the
model's `max_position_embeddings` where that is smaller (both sides get the same number).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from benchmarks.engine_diff.engines import GIB, MAX_CONTEXT, TPS, EngineSpec
from benchmarks.engine_diff.venvs import CACHE
from tests.conftest import CONFIGS

QUANT_SUFFIX = ".hf_quant_config.json"

# The fixed budgets: vLLM's KV memory (`--kv-cache-memory-bytes`), and SGLang's measured free
# memory before and after weight load with mem_fraction_static (rest = after − before × (1 − mfs)).
VLLM_KV_BYTES = 40 * GIB
SGLANG_FREE_BEFORE = 80 * GIB
SGLANG_FREE_AFTER = 60 * GIB
SGLANG_MEM_FRACTION = 0.75  # rest = 60 GiB − 80 GiB × 0.25 = 40 GiB, exact in binary


def config_names() -> list[str]:
    return sorted(
        p.name[: -len(".json")] for p in CONFIGS.glob("*.json") if not p.name.endswith(QUANT_SUFFIX)
    )


def model_dir(name: str) -> Path:
    """A folder the engine can load: config.json (+ hf_quant_config.json)."""
    folder = CACHE / "models" / name
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CONFIGS / f"{name}.json", folder / "config.json")
    quant = CONFIGS / f"{name}{QUANT_SUFFIX}"
    if quant.exists():
        shutil.copyfile(quant, folder / "hf_quant_config.json")
    return folder


def context_length(name: str) -> int:
    config = json.loads((CONFIGS / f"{name}.json").read_text())
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


def cases(spec: EngineSpec, gpus: tuple[str, ...], configs: list[str] | None = None) -> list[dict[str, Any]]:
    out = []
    for name in configs or config_names():
        folder = model_dir(name)
        for gpu in gpus:
            for tp in TPS:
                for dtype in spec.kv_dtypes:
                    out.append(
                        {
                            "config": name,
                            "dir": str(folder),
                            "tp": tp,
                            "kv_dtype": dtype,
                            "gpu": gpu,
                            "max_model_len": context_length(name),
                            **budget(spec),
                        }
                    )
    return out

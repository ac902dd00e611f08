"""What every reading rule reads: the row under reading (`Case`), the helpers the rules share, and the
rules common to both engines. The engines' rules are in readings_vllm.py and readings_sglang.py;
readings.py picks the first that matches (see its docstring for the kinds of reading).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MLA = ("DeepSeek-V3", "DeepSeek-R1", "Kimi-K2", "DeepSeek-V3-0324-NVFP4")
SWA_IN_CONFIG = ("Mistral-7B-v0.1", "Phi-3-mini-4k")
WINDOWED_GROUPS = ("gpt-oss", "gemma-3", "Llama-4-Scout")
MAMBA_HYBRIDS = ("Qwen3-Next", "Nemotron-H", "Nemotron-3-Nano")
CHECKPOINT_FP8_KV = ("Llama-3.1-70B-Instruct-FP8", "Qwen3-235B-A22B-NVFP4")


@dataclass(frozen=True)
class Case:
    engine: str
    version: str
    config: str
    variant: str  # "default" or a flag set (cases.FLAG_SETS)
    tp: int
    pp: int
    kv_dtype: str
    gpus: tuple[str, ...]
    kvtop: Any  # table.Side
    side: Any  # table.Side (the engine's)
    raw: dict[str, Any]  # the engine's result for the first GPU of the row

    def has(self, *names: str) -> bool:
        return any(n in self.config for n in names)

    @property
    def release(self) -> tuple[int, ...]:
        return tuple(int(p) for p in self.version.split(".")[:2])


Rule = tuple[str, str, Callable[[Case], bool], str]  # id, title, applies, the reading


def kvtop_refuses(c: Case) -> bool:
    return c.kvtop.status != "ok" and c.side.status == "ok"


def engine_refuses(c: Case, *words: str) -> bool:
    return c.side.status != "ok" and c.kvtop.status == "ok" and all(w in c.side.message for w in words)


def both_ok(c: Case) -> bool:
    return c.kvtop.status == "ok" and c.side.status == "ok"


def logged(c: Case, words: str) -> bool:
    return any(words in m for m in c.raw.get("log") or [])


def config_json(c: Case) -> dict[str, Any]:
    from benchmarks.engine_diff.cases import config_path

    return dict(json.loads(config_path(c.config).read_text()))


def text_config_json(c: Case) -> dict[str, Any]:
    """The language model's section of a composite config (else the config itself)."""
    config = config_json(c)
    return dict(config.get("text_config") or config)


def stated_dtype(c: Case) -> str:
    config = config_json(c)
    text = config.get("text_config") or {}
    return str(
        config.get("torch_dtype") or config.get("dtype") or text.get("torch_dtype") or text.get("dtype") or ""
    )


def hf_quant_config_json(c: Case) -> dict[str, Any]:
    """The config's hf_quant_config.json beside it ({} where it has none)."""
    from benchmarks.engine_diff.cases import QUANT_SUFFIX, config_path

    path = config_path(c.config).with_name(c.config + QUANT_SUFFIX)
    return dict(json.loads(path.read_text())) if path.exists() else {}


def kvtop_refuses_flag(c: Case) -> bool:
    return kvtop_refuses(c) and "not a flag of" in c.kvtop.message


def top_level_modelopt_algo(c: Case) -> bool:
    quant = config_json(c).get("quantization_config") or {}
    return isinstance(quant, dict) and "quant_algo" in quant and "quant_method" not in quant


COMMON_RULES: list[Rule] = [
    (
        "K1",
        "kvtop: architecture not modelled",
        lambda c: kvtop_refuses(c) and "is not modelled by kvtop" in c.kvtop.message,
        "kvtop: the config's architecture (model_type) has no entry in kvtop, which refuses it; the engine "
        "serves it and sizes its pool (the figures in the row). Issue 26 (architectures as data) adds them; the "
        "architecture table below lists which",
    ),
    (
        "K2",
        "kvtop: a per-layer list where kvtop reads one integer",
        lambda c: kvtop_refuses(c) and "must be an integer" in c.kvtop.message,
        "kvtop: the config gives a per-layer list (moe_layer_freq, intermediate_size, …) where kvtop reads one "
        "integer and refuses the file; the engine reads it layer by layer (issue 26)",
    ),
]

"""Every multimodal class of vLLM's and SGLang's registries, each marked with what kvtop does with it, written to
docs/multimodal.md (tests/domain/test_multimodal_classes.py checks the file is what this writes now):

    python benchmarks/architectures/multimodal_classes.py docs/multimodal.md

The registries are tests/data/architectures/engine_registries.json (vLLM 0.33.0's `_MULTIMODAL_MODELS` keys;
SGLang 0.5.23's EntryClass names, which do not say which take images: SGLang's multimodal classes are taken as
those vLLM registers as multimodal plus `SGLANG_ONLY`, read by name from its srt/models modules). The marks are
kvtop's own (`coverage.verdict`, `towers_coverage.tower_verdict`), not a copy.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.architectures.towers_coverage import tower_verdict

REGISTRIES = Path(__file__).resolve().parents[2] / "tests" / "data" / "architectures" / "engine_registries.json"

# SGLang 0.5.23 classes that take images or video but that vLLM does not register as multimodal (by name and module)
SGLANG_ONLY = frozenset({
    "BailingMM2NativeForConditionalGeneration", "BailingMMNativeForConditionalGeneration", "DeepseekVL2ForCausalLM",
    "DotsVLMForCausalLM", "GlmImageForConditionalGeneration", "JetVLMForConditionalGeneration",
    "LlavaLlamaForCausalLM", "LlavaMistralForCausalLM", "LlavaQwenForCausalLM", "LlavaVidForCausalLM",
    "LocateAnythingForConditionalGeneration", "MllamaForConditionalGeneration", "MossVLForConditionalGeneration",
    "MultiModalityCausalLM", "NVILAForConditionalGeneration", "NVILALiteForConditionalGeneration",
    "POINTSV15ChatModel", "Sarashina2VisionForCausalLM", "YiVLForCausalLM",
})  # fmt: skip

LANGUAGE = {"entry": "planned", "wrapper": "planned (text section)", "generic": "generic reading",
            "not_modelled": "not modelled"}  # fmt: skip
TOWER = {"tower": "planned", "no_tower": "not modelled", "not_modelled": "not modelled"}


def classes() -> list[tuple[str, bool, bool]]:
    """(class, in vLLM's multimodal registry, in SGLang's multimodal classes), sorted by name."""
    registries = json.loads(REGISTRIES.read_text())
    vllm = set(registries["vllm_multimodal"])
    sglang = {name for name in registries["sglang"] if name in vllm or name in SGLANG_ONLY}
    return [(name, name in vllm, name in sglang) for name in sorted(vllm | sglang, key=str.lower)]


def render() -> str:
    """docs/multimodal.md's text."""
    rows = classes()
    counts: dict[str, int] = {}
    lines = []
    for name, in_vllm, in_sglang in rows:
        kind, why = verdict(name)
        tower, reason = tower_verdict(name)
        mark = "tower planned" if tower == "tower" else "not modelled" if tower == "not_modelled" else "tower not modelled"
        counts[mark] = counts.get(mark, 0) + 1
        engines = ", ".join(e for e, on in (("vLLM", in_vllm), ("SGLang", in_sglang)) if on)
        detail = reason if tower != "no_tower" else f"{reason} (language model: {why})"
        lines.append(f"| {name} | {engines} | {LANGUAGE[kind]} | {TOWER[tower]} | {detail.replace('|', '/')} |")
    summary = ", ".join(f"{count} {mark}" for mark, count in sorted(counts.items()))
    return "\n".join([
        "# Multimodal classes: what kvtop plans",
        "",
        "Written by `benchmarks/architectures/multimodal_classes.py` from the engines' registries",
        "(tests/data/architectures/engine_registries.json: vLLM 0.33.0 `_MULTIMODAL_MODELS`, SGLang 0.5.23",
        "EntryClass names that vLLM registers as multimodal or that take images by their module) and kvtop's own",
        "verdicts (`kvtop.domain.architectures.coverage.verdict`, `towers_coverage.tower_verdict`). *Tower planned*:",
        "the vision tower and projector are a row of the weights book (docs/engines/architectures.md); *tower not",
        "modelled*: the language model is planned (or read generically) and the plan names the tower's bytes",
        "\"not modelled\"; *not modelled*: a config naming the class is refused with the reason shown.",
        "",
        f"{len(rows)} classes: {summary}.",
        "",
        "| class | engines | language model | tower | reason |",
        "|---|---|---|---|---|",
        *lines,
        "",
    ])  # fmt: skip


if __name__ == "__main__":
    Path(sys.argv[1]).write_text(render())

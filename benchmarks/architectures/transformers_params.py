"""Parameter counts of real configs, from transformers' own model classes on the meta device (no memory).

An oracle independent of kvtop for the weights book: the checkpoint holds the tensors transformers defines
for its `model_type` (the language model; a multimodal wrapper's towers are counted apart). Run in a venv
with transformers and torch (not kvtop's dependencies):

    python benchmarks/architectures/transformers_params.py tests/data/configs/heldout \
        tests/data/configs/heldout/transformers_params.json

Each config gets {"transformers": version, "class": the model class, "language_params": parameters outside
the towers (tied matrices counted once, and the routers' `e_score_correction_bias`, a buffer in transformers but
a checkpoint tensor every engine loads), "tower_params": the rest, "tied": whether the LM head is the embedding}, or {"skipped": why} where transformers has no class for it (remote code) or cannot build it.
`quantization_config` is dropped first: counts are of parameters, whatever their storage.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

TOWER_WORDS = ("vision", "visual", "audio", "multi_modal_projector", "mm_projector", "image", "embed_vision",
               "embed_audio", "patch_embed", "vit", "merger")  # fmt: skip


def count(path: Path) -> dict[str, object]:
    import torch
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForImageTextToText

    raw = json.loads(path.read_text())
    raw.pop("quantization_config", None)
    raw.pop("auto_map", None)  # remote code is never run: a config transformers has no class for is skipped
    for key in ("text_config", "llm_config"):
        if isinstance(raw.get(key), dict):
            raw[key].pop("quantization_config", None)
    model_type = raw.get("model_type")
    if model_type not in transformers.CONFIG_MAPPING:
        return {"skipped": f"transformers {transformers.__version__} has no config class for {model_type!r}"}
    try:
        config = AutoConfig.for_model(**raw)
    except Exception as err:  # noqa: BLE001 - reported, not hidden
        return {"skipped": f"config: {type(err).__name__}: {str(err)[:200]}"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        built = None
        for auto in (AutoModelForCausalLM, AutoModelForImageTextToText):
            try:
                with torch.device("meta"):
                    built = auto.from_config(config)
                break
            except Exception as err:  # noqa: BLE001
                last = err
        if built is None:
            return {"skipped": f"model: {type(last).__name__}: {str(last)[:200]}"}
    seen: set[int] = set()
    language = tower = 0
    for name, param in built.named_parameters(remove_duplicate=False):
        if id(param) in seen:
            continue
        seen.add(id(param))
        if any(word in name for word in TOWER_WORDS):
            tower += param.numel()
        else:
            language += param.numel()
    for name, buffer in built.named_buffers():
        if name.endswith(
            "e_score_correction_bias"
        ):  # a buffer in transformers, a checkpoint tensor the engines load
            language += buffer.numel()
    out_emb = built.get_output_embeddings()
    in_emb = built.get_input_embeddings()
    tied = out_emb is not None and in_emb is not None and out_emb.weight is in_emb.weight
    return {
        "transformers": transformers.__version__,
        "class": type(built).__name__,
        "language_params": language,
        "tower_params": tower,
        "tied": bool(tied),
    }


def main(folder: str, out: str) -> None:
    results = {}
    for path in sorted(Path(folder).glob("*.json")):
        if path.name.endswith(".hf_quant_config.json") or path.name == "transformers_params.json":
            continue
        results[path.stem] = count(path)
        print(path.stem, results[path.stem], file=sys.stderr)
    Path(out).write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

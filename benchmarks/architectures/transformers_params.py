"""Parameter counts of real configs, from transformers' own model classes on the meta device (no memory).

An oracle independent of kvtop for the weights book: the checkpoint holds the tensors transformers defines
for its `model_type` (the language model; a multimodal wrapper's towers are counted apart). Run in a venv
with transformers and torch (not kvtop's dependencies):

    python benchmarks/architectures/transformers_params.py tests/data/configs/heldout \
        tests/data/configs/heldout/transformers_params.json [STEM ...]

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


def as_transformers(raw: dict) -> dict:
    """A remote-code config as the transformers class its checkpoints convert to: InternVL's `internvl_chat`
    (InternVisionModel + mlp1) is transformers' `internvl` (InternVLVisionModel + InternVLMultiModalProjector,
    the same tensors: transformers' models/internvl/convert_internvl_weights_to_hf.py maps the fields so)."""
    if raw.get("model_type") != "internvl_chat":
        return raw
    vision = dict(raw.get("vision_config") or {})
    side = lambda v: [v, v] if isinstance(v, int) else v  # noqa: E731
    converted_vision = {
        "hidden_size": vision.get("hidden_size", 3200), "num_hidden_layers": vision.get("num_hidden_layers", 48),
        "num_attention_heads": vision.get("num_attention_heads", 25),
        "intermediate_size": vision.get("intermediate_size", 12800),
        "attention_bias": vision.get("qkv_bias", False), "use_qk_norm": vision.get("qk_normalization", True),
        "norm_type": vision.get("norm_type", "rms_norm"), "image_size": side(vision.get("image_size", 224)),
        "patch_size": side(vision.get("patch_size", 14)), "num_channels": vision.get("num_channels", 3),
        "use_mean_pooling": True, "use_absolute_position_embeddings": True, "use_mask_token": False,
    }  # fmt: skip
    return {
        "model_type": "internvl", "architectures": ["InternVLForConditionalGeneration"],
        "vision_config": converted_vision, "text_config": raw.get("llm_config"),
        "downsample_ratio": raw.get("downsample_ratio", 0.5), "vision_feature_layer": raw.get("select_layer", -1),
        "tie_word_embeddings": raw.get("tie_word_embeddings", False),
    }  # fmt: skip


def count(path: Path) -> dict[str, object]:
    import torch
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForImageTextToText

    raw = as_transformers(json.loads(path.read_text()))
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
        # a config with a vision tower is built whole (Qwen3.5's CausalLM class is its text model alone)
        autos = (AutoModelForCausalLM, AutoModelForImageTextToText)
        for auto in autos[::-1] if "vision_config" in raw else autos:
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


def main(folder: str, out: str, only: list[str]) -> None:
    """Count every config of `folder` (or only the stems named after it, kept beside the others in `out`)."""
    results = json.loads(Path(out).read_text()) if only and Path(out).exists() else {}
    for path in sorted(Path(folder).glob("*.json")):
        if path.name.endswith(".hf_quant_config.json") or path.name == "transformers_params.json":
            continue
        if only and path.stem not in only:
            continue
        results[path.stem] = count(path)
        print(path.stem, results[path.stem], file=sys.stderr)
    Path(out).write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])

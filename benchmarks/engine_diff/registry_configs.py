"""The registry sweep's configs: every real config at hand, once, and a config for each registered class.

Real configs: every JSON file under tests/data that is a model's config (it names `architectures` or a
`model_type`; not a ModelOpt `*.hf_quant_config.json`), deduplicated by content (the first path in sorted
order names it, a checkpoint's own file before a reconstructed one; a config and the ModelOpt file beside it
count as one content). A reconstructed config (`*.RECONSTRUCTED.json`, `recon--*`: rebuilt from a checkpoint's
published figures, not its file) is judged beside the real ones but left out of the held-out share. A class of the engines' registries is swept with the first real config naming it, else with
the default config of its transformers config class, or of the config class the engine ships for the class's
model (ENGINE_CONFIG_TYPES; registry_runner.py `defaults`, written once under tests/data/engine_diff/registry/configs/
with its source in SOURCES.md; the fields a published config.json adds to a default are published_fields.py's).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.engine_diff.cases import QUANT_SUFFIX
from benchmarks.engine_diff.engines import MAX_CONTEXT
from benchmarks.engine_diff.venvs import REPO
from kvtop.domain.mistral_params import PARSER_POSITIONS

DATA = REPO / "tests" / "data"
REGISTRY_DATA = DATA / "engine_diff" / "registry"
DEFAULT_CONFIGS = REGISTRY_DATA / "configs"
VARIANT = "--"  # `<Class>--<what>.json` under DEFAULT_CONFIGS: a second composed config of the class
REGISTRIES = DATA / "architectures" / "engine_registries.json"
REGISTRY_KEYS = {"vllm": ("vllm_text_generation", "vllm_multimodal"), "sglang": ("sglang",)}
NOT_CONFIGS = ("transformers_params.json",)
# a Mistral-format checkpoint's config (vLLM --config-format mistral): judged from the class vLLM maps it to
MISTRAL_PARAMS = "params.json"
# The vision towers a config names by checkpoint id (towers_named.py reads them): encoders, not served models
TOWER_CONFIGS = DATA / "configs" / "towers_named"
# A checkpoint's configs in subfolders the engine reads beside config.json (a config folder holds config.json only):
# config name -> {subfolder: the file copied there as its config.json}. Kimi-Audio: vLLM 0.33.0 kimi_audio.py
# KimiAudioWhisperEncoder reads WhisperConfig.from_pretrained(model, subfolder="whisper-large-v3"), the checkpoint's
# copy of openai/whisper-large-v3's config: the served model's own file (families/, its source in families/SOURCES.md).
# A subfolder may be nested ("vit/…"): the sweep makes its parents.
SUBFOLDER_CONFIGS: dict[str, dict[str, Path]] = {
    "recon--moonshotai--Kimi-Audio-7B-Instruct": {
        "whisper-large-v3": DATA / "configs" / "families" / "openai--whisper-large-v3.json"
    },
    # Yi-VL: SGLang 0.5.23 yivl.py:44 CLIPVisionModel.from_pretrained(model, subfolder=mm_vision_tower), the folder
    # the composed config names: Yi-VL-34B's own vit/ config (towers_named/SOURCES.md)
    "default--YiVLForCausalLM": {
        "vit/clip-vit-H-14-laion2B-s32B-b79K-yi-vl-34B-448": DATA / "configs" / "towers_named"
        / "yi-vl--clip-vit-H-14-laion2B-s32B-b79K-yi-vl-34B-448.json"
    },
}
# Checkpoints a config names by Hub id, whose config the engine fetches as it reads the file (the Hub is not
# reachable here): config name -> {Hub id: the file the sweep writes as WORK/<Hub id>/config.json}. The runners run
# in WORK, where vLLM's get_config finds the id as a local folder. Ultravox: vLLM 0.33.0 configs/ultravox.py
# UltravoxConfig.__setattr__ get_config(text_model_id) (families/SOURCES.md: Llama-3.2-1B-Instruct).
HUB_ID_CONFIGS: dict[str, dict[str, Path]] = {
    "recon--fixie-ai--ultravox-v0_5-llama-3_2-1b": {
        "meta-llama/Llama-3.2-1B-Instruct": DATA / "configs" / "families" / "meta-llama--Llama-3.2-1B-Instruct.json"
    },
}
# Tokenizer files an engine reads as it builds the model (a config folder holds config.json only): config name ->
# {file name: its JSON}. Dots3 NOTE: vLLM 0.33.0 models/dots3_note/nvidia/multimodal.py Dots3NoteForCausalLM.__init__
# reads added_tokens.json's "<|imgpad|>" (IMAGE_PAD, common/processor.py) into config.image_token_index, used only
# when images are embedded at run time: the id is a stand-in (151665, past the Qwen-2.5 tokenizer's special tokens,
# whose bos / eos ids 151643 / 151645 the config names; no checkpoint's file is at hand) and sizes nothing.
TOKENIZER_FILES: dict[str, dict[str, dict[str, int]]] = {
    "recon--tokenspeed--Dots3Note-text": {"added_tokens.json": {"<|imgpad|>": 151665}},
}
POSITION_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
                 "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len")  # fmt: skip
NO_POSITIONS_CONTEXT = 2048  # vLLM's default_max_len where a config names none of them


# Speculative drafts among the real configs, and the target each is planned beside when judged as a draft
# (registry_judge): SpecForge names each Eagle-3 head after its target, and the head's hidden size and vocabulary
# are the target's (Llama-3.1-70B: 8,192 and 128,256; Qwen3-235B-A22B: 4,096 and 151,936).
DRAFT_TARGETS = {
    "sgl-project--SpecForge-llama3-70B-eagle3": "meta-llama--Llama-3.1-70B-Instruct",
    "sgl-project--SpecForge-qwen3-235B-A22B-eagle3": "Qwen--Qwen3-235B-A22B",
}


# Classes whose model's config class ships inside an engine (a remote-code model transformers does not know), or
# whose own model_type is not kvtop's entry's: class -> (the engine whose venv makes the default, its model_type,
# where the engine links the class to it). Only config classes whose defaults are a model the engine builds; the
# others are in NO_DEFAULT with the reason.
ENGINE_CONFIG_TYPES: dict[str, tuple[str, str, str]] = {
    "Alpamayo2Super": ("vllm", "alpamayo2_super",
                       "vllm/model_executor/models/alpamayo2_super.py get_hf_config -> Alpamayo2SuperConfig"),
    "DoryForCausalLM": ("vllm", "dory", "vllm/transformers_utils/configs/dory.py, the Dory architecture's config"),
    "HfMoondream": ("vllm", "moondream3", "vllm/model_executor/models/moondream3.py imports Moondream3Config"),
    "Moondream3ForCausalLM": ("vllm", "moondream3", "vllm/model_executor/models/moondream3.py imports Moondream3Config"),
    "GigaChat35ForCausalLM": ("sglang", "gigachat3_5", "sglang/srt/models/gigachat35.py imports GigaChat35Config"),
    "IQuestQ1ForCausalLM": ("sglang", "iquest_q1", "sglang/srt/configs/iquest_q1.py names the class"),
    "Spark2_5ForCausalLM": ("sglang", "spark2_5", "sglang/srt/configs/spark2_5.py names the class"),
    # kvtop's entry is step3p7's (the composite Step3p7Config); Step-3.5's own model_type is step3p5
    "Step3p5ForCausalLM": ("vllm", "step3p5", "vllm/transformers_utils/config.py _CONFIG_REGISTRY step3p5 -> "
                           "Step3p7TextConfig; transformers 5.20.2 maps step3p5 to the same class"),
    "Step3TextForCausalLM": ("vllm", "step3_text", "vllm/transformers_utils/config.py _CONFIG_REGISTRY step3_text -> "
                             "Step3TextConfig (configs/step3_vl.py)"),
    "Step3VLForConditionalGeneration": ("vllm", "step3_vl", "vllm/transformers_utils/config.py _CONFIG_REGISTRY "
                                        "step3_vl -> Step3VLConfig (configs/step3_vl.py)"),
    # the vision token's id the class reads from the tokenizer is answered by vllm_input_standins' token-id-tokenizer
    "IsaacForConditionalGeneration": ("vllm", "isaac", "vllm/transformers_utils/config.py _CONFIG_REGISTRY isaac -> "
                                      "IsaacConfig (transformers_utils/configs/isaac.py), models/isaac.py"),
}  # fmt: skip

# Classes whose engine ships a config class whose defaults are not a model the engine builds: never written as a
# default; where no other config names the class, no_config.json carries the reason into docs/fidelity_registry.md's
# "no config at hand" (none since session 47: each has a real or reconstructed config).
NO_DEFAULT: dict[str, str] = {
    "BailingMM2NativeForConditionalGeneration": "SGLang's BailingMM2Config leaves llm_config's intermediate_size None",
    "BailingMoeV3VLForConditionalGeneration": "vLLM's BailingMoeV3VLConfig defaults no_kda_lora False, "
                                              "which vLLM's bailing_moe_v3.py refuses",
    "K2HorizonForCausalLM": "SGLang's K2HorizonConfig sizes are None by default",
    "KimiVLForConditionalGeneration": "KimiVLConfig defaults grouped top-k without num_expert_group / topk_group "
                                      "(vLLM refuses it, SGLang fails on it)",
}  # fmt: skip

# Registered classes with no config at hand: no checkpoint config.json in the corpora and too few published figures to
# rebuild one (tests/data/configs/recon/SOURCES.md says how a rebuilt one is sourced); no_config.json carries the
# reason into docs/fidelity_registry.md's "no config at hand" (searched in session 44, issue 26).
# The kinds of reason, each the start of one: no config found; a base class no checkpoint names; a dispatcher to other
# classes, not a model.
WHY_NO_CONFIG = ("no published config: ", "no checkpoint names it: ", "not a model of its own: ")
NO_PUBLISHED_CONFIG: dict[str, str] = {
}  # fmt: skip


@dataclass(frozen=True)
class ConfigFile:
    """One config the sweep reads: its name (the engines' model folder), its file, and its class."""

    name: str
    path: Path
    architecture: str
    real: bool

    @property
    def source(self) -> str:
        return str(self.path.relative_to(REPO))

    @property
    def reconstructed(self) -> bool:
        """Rebuilt by kvtop's tests from a checkpoint's published figures (named so), not the checkpoint's own file."""
        return _reconstructed(self.path)

    def data(self) -> dict[str, Any]:
        return dict(json.loads(self.path.read_text()))

    @property
    def mistral_format(self) -> bool:
        """A Mistral-format `params.json` (the engine is told `--config-format mistral`)."""
        return self.path.name == MISTRAL_PARAMS

    def quant_file(self) -> Path | None:
        beside = self.path.with_name(self.path.name[: -len(".json")] + QUANT_SUFFIX)
        return beside if self.path.name != "config.json" and beside.exists() else None

    def context(self) -> int:
        """32,768 tokens, or the model's own length where smaller: the least of the fields vLLM derives it from
        (possible_keys, vllm/transformers_utils/model_arch_config_convertor.py, 0.33.0), else vLLM's 2,048."""
        data = self.data()
        text = data.get("text_config") or data.get("llm_config") or {}
        found = [v for v in (data.get(k) or text.get(k) for k in POSITION_KEYS) if isinstance(v, (int, float)) and v > 0]
        if self.mistral_format:  # vLLM's MistralConfigParser: 128,000 positions where params.json names none
            found = [data["max_position_embeddings"]] if data.get("max_position_embeddings") else [PARSER_POSITIONS]
        return int(min(MAX_CONTEXT, *found)) if found else NO_POSITIONS_CONTEXT


def _architecture(data: dict[str, Any]) -> str:
    names = data.get("architectures") or [data.get("model_type", "?")]
    return str(names[0])


def _reconstructed(path: Path) -> bool:
    return "RECONSTRUCTED" in path.name or path.name.startswith("recon--") or path.parent.name.startswith("recon--")


def _params_architecture(data: dict[str, Any], path: Path) -> str:
    """The class vLLM builds from a params.json, by kvtop's copy of its mapping (a refused one: the class the refusal
    names, else Mistral's text class)."""
    from kvtop.domain.errors import InputError
    from kvtop.domain.mistral_params import config_from_params

    try:
        return str(config_from_params(data, source=str(path))["architectures"][0])
    except InputError:
        whisper = ((data.get("multimodal") or {}).get("whisper_model_args") or {}).get("encoder_args") or {}
        if whisper:
            return "VoxtralRealtimeGeneration" if whisper.get("causal") else "VoxtralForConditionalGeneration"
        return "MistralForCausalLM"


def real_configs() -> list[ConfigFile]:
    """Every real config under tests/data, once by content (with its ModelOpt file), named by its file (its folder
    for config.json); checkpoints' own files first, reconstructed ones after."""
    seen: set[str] = set()
    names: set[str] = set()
    out = []
    for path in sorted(DATA.rglob("*.json"), key=lambda p: (_reconstructed(p), p)):
        if path.name.endswith(QUANT_SUFFIX) or path.name in NOT_CONFIGS or DEFAULT_CONFIGS in path.parents:
            continue
        if REGISTRY_DATA in path.parents or TOWER_CONFIGS in path.parents or "fixtures" in path.parts:
            continue
        try:
            data = json.loads(path.read_text())
        except (ValueError, UnicodeDecodeError):
            continue
        params = path.name == MISTRAL_PARAMS and isinstance(data, dict) and "dim" in data
        if not params and (not isinstance(data, dict) or not data.get("architectures")
                           or not isinstance(data["architectures"], list)):  # fmt: skip
            continue
        name = path.parent.name if path.name in ("config.json", MISTRAL_PARAMS) else path.name[: -len(".json")]
        config = ConfigFile(name, path, _params_architecture(data, path) if params else _architecture(data), True)
        quant = config.quant_file()
        digest = hashlib.sha256(path.read_bytes() + (quant.read_bytes() if quant else b"")).hexdigest()
        if digest in seen:
            continue
        seen.add(digest)
        if name in names:
            config = ConfigFile(f"{path.parent.name}--{name}", path, config.architecture, True)
        names.add(config.name)
        out.append(config)
    return out


def default_configs() -> list[ConfigFile]:
    """The composed configs, one per class (`<Class>.json`) first, then a class's variants (`<Class>--<what>.json`:
    a second composed config judging what the first cannot, e.g. a context beyond a window), never chosen as the
    class's config (config_for_class) but swept with it under `--set classes`."""
    paths = sorted(DEFAULT_CONFIGS.glob("*.json"), key=lambda p: (p.stem.split(VARIANT)[0], VARIANT in p.stem, p.stem))
    return [ConfigFile(f"default--{p.stem}", p, p.stem.split(VARIANT)[0], False) for p in paths]


def variant_configs() -> list[ConfigFile]:
    """The composed variants (`<Class>--<what>.json`) of default_configs."""
    return [c for c in default_configs() if VARIANT in c.path.stem]


def registered(engine: str) -> list[str]:
    data = json.loads(REGISTRIES.read_text())
    return sorted({name for key in REGISTRY_KEYS[engine] for name in data[key]})


def planned_classes(engine: str) -> list[tuple[str, str, str]]:
    """(class, kvtop's verdict, why) for each class of the engine's registry; the sweep builds those kvtop plans."""
    from kvtop.domain.architectures.coverage import verdict

    return [(name, *verdict(name)) for name in registered(engine)]


# Classes judged by their composed config (configs/<Class>.json) though a real file names them: the real file's rows
# stay in the held-out measure as they are (engine could not build), the class's row reads the composed one.
# POINTSV15ChatModel: WePOINTS--POINTS-1-5-Qwen-2-5-7B-Chat's config.json states no model_type, so no stand-in can be
# registered for it (checkpoint_configs.NO_STAND_IN); the composed copy states SGLang's own "pointsv1.5_chat".
# HfMoondream: vLLM 0.33.0 serves the class as Moondream3ForCausalLM over hf_config.config (models/registry.py,
# moondream3.py); vikhyatk--moondream2's file is another model (moondream1, empty `config`: NO_STAND_IN says why), so
# the class reads its default, Moondream3Config's (ENGINE_CONFIG_TYPES), the model vLLM builds for it.
JUDGED_BY_COMPOSED = frozenset({"HfMoondream", "POINTSV15ChatModel"})


def config_for_class(configs: list[ConfigFile]) -> dict[str, ConfigFile]:
    """class -> the config the sweep builds it from: the first real one naming it, else its default (a class in
    JUDGED_BY_COMPOSED: its composed default first)."""
    out: dict[str, ConfigFile] = {}
    composed = [c for c in configs if not c.real and c.architecture in JUDGED_BY_COMPOSED]
    for config in composed + [c for c in configs if c.real] + [c for c in configs if not c.real]:
        out.setdefault(config.architecture, config)
    return out

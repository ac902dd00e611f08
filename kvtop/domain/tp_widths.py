"""Language-model widths an engine's TP linear layers divide with an assertion, and the refusal where one does not.

vLLM's and SGLang's MergedColumnParallelLinear asserts every output width divides by TP (a bare assertion), and
their ColumnParallelLinear / RowParallelLinear divide the output / input width with `divide()` ("X is not
divisible by Y"); neither pads a dense MLP on a GPU (SGLang pads heads and MLP widths only on CPU:
configs/update_config.py adjust_config_with_unaligned_cpu_tp). So a dense MLP whose intermediate width does not
divide by TP stops the launch while the model is built. vLLM's VocabParallelEmbedding (and ParallelLMHead) pads
the vocabulary to a multiple of 64 and then `divide()`s it by TP, so at a TP that is no power of two it may refuse
the embedding first (Qwen2.5-1.5B's 151,936 at TP 6); SGLang's pads it to 64 × TP where 64 does not divide. Each engine package supplies its `TpWidths` (which linear
class asserts what, read in which releases); an engine that supplies none is not checked here. Attention heads are
checked for every engine by `kvtop.domain.layout.validate_layout`; routed experts by each engine's MoE split rules.
Shared experts' widths are not checked here (an engine may build them whole: SGLang with DeepEP).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engines.catalogue import display_name
from kvtop.domain.launch import spelling_of
from kvtop.domain.model import MlpKind
from kvtop.domain.refusals import Refusal
from kvtop.domain.rounding import round_up

if TYPE_CHECKING:
    from kvtop.domain.ledger_values import Ledger
    from kvtop.domain.model import ModelSpec


class DivideCheck(BaseModel):
    """How one linear layer refuses a width TP does not divide: the engine's message and its code."""

    model_config = ConfigDict(frozen=True)
    words: str  # the engine's message, with {width} and {tp}
    source: str  # the engine's file, class and the releases read


class TpWidths(BaseModel):
    """The dense MLP's first projection as the engine builds it: gate and up fused (gated), or up alone (plain);
    the vocabulary, padded to a multiple of `vocab_padding` and then divided (None: the engine pads it to TP)."""

    model_config = ConfigDict(frozen=True)
    gated: DivideCheck  # gate_up_proj: MergedColumnParallelLinear
    plain: DivideCheck  # up_proj / fc1: ColumnParallelLinear
    vocab: DivideCheck | None = None  # the embedding: VocabParallelEmbedding
    vocab_padding: int = 64


def padded_vocab(vocab: int, padding: int) -> int:
    """The vocabulary rounded up to a multiple of `padding` (the engines' pad_vocab_size)."""
    return round_up(vocab, padding)


def undivided_mlp(model: ModelSpec, tp: int) -> tuple[int, int] | None:
    """The first dense layer whose MLP width does not divide by `tp`: (layer, width), else None."""
    for layer, kind in enumerate(model.layer_mlp):
        width = model.intermediate(layer)
        if kind is MlpKind.DENSE and width > 0 and width % tp:
            return layer, width
    return None


def mlp_width_refusal(ledger: Ledger, widths: TpWidths) -> Refusal | None:
    """The engine refuses the launch: its padded vocabulary (built first) or a dense MLP layer's width does not
    divide by TP (module docstring)."""
    model, tp = ledger.model, ledger.settings.tp
    if tp == 1:
        return None
    engine = ledger.settings.engine
    said = f"{display_name(engine)} {ledger.version.label} refuses TP {tp}: "
    vocab = padded_vocab(model.vocab_size, widths.vocab_padding)
    if widths.vocab is not None and vocab % tp:
        return Refusal(
            field=spelling_of(engine, "tp"),
            message=f"{said}the vocabulary of {model.vocab_size:,} padded to {vocab:,} (a multiple of "
            f"{widths.vocab_padding}) does not divide by {tp} ({widths.vocab.words.format(width=vocab, tp=tp)})",
            source=widths.vocab.source,
        )
    found = undivided_mlp(model, tp)
    if found is None:
        return None
    layer, width = found
    check = widths.gated if model.mlp_gated else widths.plain
    return Refusal(
        field=spelling_of(engine, "tp"),
        message=f"{said}the dense MLP of layer {layer} is {width:,} wide (intermediate_size), which does not divide "
        f"by {tp} ({check.words.format(width=width, tp=tp)}); pick a TP that divides {width:,}",
        source=check.source,
    )

"""SGLang's Ministral3 decoder builds its layer stack twice; the first stack's linear weights are garbage that stays on
the GPU through the KV sizing (the calibration's weights term adds them to the book through weights_held.py;
docs/engines/sglang.md §20.6).

What the code does (models/ministral3.py, read at 0.5.7, 0.5.15 and 0.5.23; 0.5.6 has no such file):
`Ministral3Model.__init__` calls `LlamaModel.__init__`, which builds the embedding, every decoder layer of the rank's
stage (`make_layers` of `LlamaDecoderLayer`: its attention's qkv_proj / o_proj and its MLP's gate_up_proj /
down_proj, quantized as the checkpoint says) and the final norm, then replaces `self.layers` with a second
`make_layers` of `Ministral3DecoderLayer`. The first stack is unreferenced from then on, but each of its linear
modules sits in a reference cycle (its parameters keep the module's bound `weight_loader`: layers/parameter.py
`BasevLLMParameter._weight_loader`, the same for unquantized weights' `set_weight_attrs`), so only Python's cyclic
collector frees them. Built first and dropped after the second stack, they reach the oldest generation, and no
full collection runs before `profile_max_num_token` sizes the pool; the first is `freeze_gc`'s `gc.collect()` at
the CUDA graph capture (model_executor/runner/base_cuda_graph_runner.py at 0.5.15, cuda_graph_runner.py at 0.5.7),
after the pool is sized. (Each Ministral3DecoderLayer also builds a LlamaAttention it replaces at once: young garbage,
collected during the build, not counted.)

The two stacks also build two rope modules, both kept: `get_rope` keys its module by `max_position` among the rest
(layers/rotary_embedding/factory.py `_ROPE_DICT`, a process-wide dict that holds every module it built), and the first
stack's LlamaAttention passes `config.max_position_embeddings` (models/llama.py LlamaDecoderLayer) where
Ministral3Attention passes `getattr(config, "original_max_position_embeddings", 16384)` (ministral3.py:116-118 at 0.5.7,
:124-126 at 0.5.15, :126-128 at 0.5.23; Ministral3Config states that field inside `rope_parameters` only, so 16,384). Where the
two differ a second float32 cos/sin cache stays beside the first (`second_rope`): a YaRN rope spans the block's
original positions × factor in both (factory.py reads `original_max_position_embeddings` from the block, not from
`max_position`), as long as the first; any other rope 16,384 positions.

The class is `Ministral3ForCausalLM`, alone or as the language model SGLang's LlavaForConditionalGeneration builds
for `Mistral3ForConditionalGeneration` with a `ministral3` text_config (models/mistral.py, llava.py
`_get_sgl_model_cls`): kvtop reads either as model_type `ministral3`.

Judged: mattbucci's 2 × RTX 3090 start of Devstral-Small-2-24B-AWQ (TP 2, SGLang with local patches that touch no
model class; tests/data/calibration/sglang.jsonl) printed 'Load weight end. … type=LlavaForConditionalGeneration,
quant=awq … mem usage=12.91 GB' against a 7.25 GiB book, and 'Capture cuda graph end. … mem usage=-5.29 GB': the
first stack is 40 layers × (qkv 5,120 × 3,072 + o 2,048 × 5,120 + gate_up 5,120 × 32,768 + down 16,384 × 5,120) AWQ
elements a rank, 0.5 + 2.5 / 128 B each = 5.38 GiB.
"""

from __future__ import annotations

from collections.abc import Callable

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.sglang.pp_split import PP_SPLIT_ERAS
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.layout import largest_stage_layers
from kvtop.domain.weights import WeightsBook
from kvtop.domain.wording import gib

TWICE_MODEL_TYPES = frozenset({"ministral3"})  # the text model SGLang builds as Ministral3ForCausalLM
# the per-layer rows of the book the first stack repeats: its linear modules, the ones a cycle keeps
STACK_ROWS = ("attention", "mlp")
TWICE_ERAS: Eras[bool] = Eras((
    Era("", False, "no models/ministral3.py before 0.5.7 (0.5.6 read)"),
    Era("0.5.7", True, "models/ministral3.py Ministral3Model.__init__: LlamaModel.__init__ builds the layers, "
                       "make_layers builds them again (read at 0.5.7, 0.5.15, 0.5.23)"),
))  # fmt: skip


def first_stack(inputs: CalibrationInputs, book_of: Callable[[CalibrationInputs], WeightsBook]) -> tuple[int, str] | None:
    """(bytes, why) of the first, unreferenced layer stack the largest rank holds at the KV sizing; None where SGLang's
    release or the model class builds one stack. `book_of` gives the one-stage book (asked only where this applies)."""
    model = inputs.model
    if model is None or model.model_type not in TWICE_MODEL_TYPES or not TWICE_ERAS.at(inputs.version):
        return None
    rows = {row.component: row.bytes for row in book_of(inputs).rows}
    whole = sum(rows.get(name, 0) for name in STACK_ROWS)
    layers = largest_stage_layers(model.num_layers, inputs.layout.pp, PP_SPLIT_ERAS.at(inputs.version))
    size = whole * layers // model.num_layers
    if size <= 0:
        return None
    return size, (
        f"a second copy of the {layers} decoder layers' attention and MLP weights ({gib(size)}): "
        "models/ministral3.py builds LlamaModel's layers, then its own, and the first stack is garbage in a "
        "reference cycle until the gc.collect() at the CUDA graph capture, after the KV pool is sized"
    )


MINISTRAL3_ROPE_POSITIONS = 16_384  # Ministral3Attention's max_position where the config states none at its top level


def second_rope(inputs: CalibrationInputs, width_bytes: int) -> tuple[int, str] | None:
    """(bytes, why) of the second rope module's cos/sin cache at `width_bytes` a value, whole on every rank (the
    module's docstring); None where SGLang's release or the model class builds one stack, or both modules share a key."""
    model = inputs.model
    if model is None or model.model_type not in TWICE_MODEL_TYPES or not TWICE_ERAS.at(inputs.version):
        return None
    if model.max_position_embeddings == MINISTRAL3_ROPE_POSITIONS:
        return None  # one key: get_rope hands the first module back
    positions = model.max_position_embeddings if model.rope_type == "yarn" else MINISTRAL3_ROPE_POSITIONS
    size = positions * model.head_dim * width_bytes
    return size, (
        f"a second rope cos/sin cache ({positions:,} positions × {model.head_dim} × {width_bytes} B): models/ministral3.py's "
        f"attention asks get_rope for {MINISTRAL3_ROPE_POSITIONS:,} positions, LlamaModel's for "
        f"{model.max_position_embeddings:,}, and _ROPE_DICT keeps both modules"
    )

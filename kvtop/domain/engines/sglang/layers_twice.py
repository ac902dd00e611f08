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
from kvtop.domain.wording import GIB

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
        f"a second copy of the {layers} decoder layers' attention and MLP weights ({size / GIB:.2f} GiB): "
        "models/ministral3.py builds LlamaModel's layers, then its own, and the first stack is garbage in a "
        "reference cycle until the gc.collect() at the CUDA graph capture, after the KV pool is sized"
    )

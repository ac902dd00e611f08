"""Which Mistral-format checkpoints (`params.json`, no config.json) SGLang reads (docs/engines/sglang.md).

SGLang 0.5.23 `utils/hf_transformers/config.py get_config` takes its own Mistral parser only where
`mistral_utils.is_mistral_model(model)` holds: the model path names mistral-large-3, mistral-small-4 or leanstral
(or an EAGLE draft of a Mistral model); any other path is read as config.json, which such a checkpoint lacks, and
transformers refuses it ("Unrecognized model … Should have a `model_type` key in its config.json").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.refusals import MODEL_FLAG, Refusal

if TYPE_CHECKING:
    from kvtop.domain.ledger_values import Ledger

SOURCE = "srt/utils/hf_transformers/mistral_utils.py is_mistral_model, config.py get_config"
# the words of the model path that make SGLang read params.json (None: not checked in that release)
READS_PARAMS_ERAS: Eras[tuple[str, ...] | None] = Eras((
    Era("", None, "not checked before 0.5.23"),
    Era("0.5.23", ("mistral-large-3", "mistral-small-4", "leanstral"), f"SGLang 0.5.23 {SOURCE}"),
))  # fmt: skip


def params_json_refusal(ledger: Ledger) -> Refusal | None:
    """A params.json checkpoint whose path names none of the models SGLang reads params.json for."""
    words = READS_PARAMS_ERAS.at(ledger.version)
    path = ledger.model.source.lower()
    if not ledger.model.config_format or words is None or any(word in path for word in words):
        return None
    eagle = "eagle" in path and "mistral" in path
    if eagle:
        return None
    return Refusal(
        field=MODEL_FLAG,  # kvtop's option that named the checkpoint (SGLang's --model-path), as every model refusal
        message=f"SGLang {ledger.version.label} reads a params.json only where the model path names "
        f"{', '.join(words)}; elsewhere it reads config.json, which this checkpoint lacks",
        source=SOURCE,
    )

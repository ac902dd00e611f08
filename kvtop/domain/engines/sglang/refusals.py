"""Launches SGLang sizes but refuses at start (docs/engines/sglang.md §4.6), as `kvtop.domain.refusals` values.

- A `--context-length` above the model's positions: `ModelConfig.__init__` (srt/configs/model_config.py)
  compares it with the derived context length and raises ValueError ("User-specified context_length (…)
  is greater than the derived context_length (…)") unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN is
  set; the same in every release kvtop models.
- `--pp-size` > 1 on a class that cannot pipeline (`PP_REFUSED_ERAS`, from 0.5.23's engine-diff runs at PP 2 and
  4): `ModelRunner.__init__` asserts `self.support_pp` ("Pipeline Parallel is not compatible with this model.":
  the class's forward takes no pp_proxy_tensors), or the class's constructor asserts a single stage
  (Qwen3NextForCausalLM, FalconH1ForCausalLM: `assert self.pp_group.is_first_rank and self.pp_group.is_last_rank`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.refusals import Refusal, context_above_positions

if TYPE_CHECKING:
    from kvtop.domain.ledger import Ledger

CONTEXT_SOURCE = "srt/configs/model_config.py ModelConfig: context_length > the derived context length"
CONTEXT_OVERRIDE = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"


_NO_PP_PROXY = "model_executor/model_runner.py ModelRunner.__init__: assert self.support_pp"
_ONE_STAGE = "the model class's constructor: assert self.pp_group.is_first_rank and self.pp_group.is_last_rank"
PP_REFUSED_ERAS: Eras[dict[str, str]] = Eras((
    Era("", {}, "not checked before 0.5.23: no PP refusal known"),
    Era("0.5.23", {
        "Gemma3ForConditionalGeneration": _NO_PP_PROXY,
        "Llama4ForConditionalGeneration": _NO_PP_PROXY,
        "Qwen3NextForCausalLM": f"models/qwen3_next.py, {_ONE_STAGE}",
        "FalconH1ForCausalLM": f"models/falcon_h1.py, {_ONE_STAGE}",
    }, "engine-diff runs at PP 2 and 4 (tests/data/engine_diff/sglang-0.5.23.flags.json: the engine refuses)"),
))  # fmt: skip


def launch_refusals(ledger: Ledger) -> tuple[Refusal, ...]:
    found = [context_above_positions(ledger, source=CONTEXT_SOURCE, override=CONTEXT_OVERRIDE)]
    pp, model = ledger.settings.pp, ledger.model
    source = PP_REFUSED_ERAS.at(ledger.version).get(model.architecture)
    if pp > 1 and source is not None:
        found.append(Refusal(
            field="--pp-size",
            message=f"SGLang {ledger.version.label} cannot pipeline {model.architecture} over {pp} stages ("
            + ("'Pipeline Parallel is not compatible with this model.': its forward takes no pp_proxy_tensors"
               if source == _NO_PP_PROXY else "its constructor asserts a single stage")
            + "); use --tp",
            source=source,
        ))  # fmt: skip
    return tuple(r for r in found if r is not None)

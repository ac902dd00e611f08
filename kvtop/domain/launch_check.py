"""Whether an engine starts a launch kvtop can size: a model class its release does not register first
(`architecture_check`: each package's `architectures` lists, `kvtop.domain.engine_architectures`), then the
engine's own refusals (`EngineRules.launch_refusals`, `kvtop.domain.refusals`). Looked up by the ledger's
engine id, above the protocols that name `Refusal`.
"""

from __future__ import annotations

from kvtop.domain.engine_architectures import ArchitectureCheck
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.ledger import Ledger
from kvtop.domain.refusals import MODEL_FLAG, Refusal


def launch_refusals(ledger: Ledger) -> tuple[Refusal, ...]:
    """What the ledger's engine, at its release, refuses in this launch (empty: it starts): a model class it
    does not register first, then the engine's own refusals."""
    found = architecture_check(ledger)
    unregistered = (Refusal(field=MODEL_FLAG, message=found.message, source=found.source),) if found.refused else ()
    return (*unregistered, *engine_rules(ledger.settings.engine).launch_refusals(ledger))


def architecture_check(ledger: Ledger) -> ArchitectureCheck:
    """What the ledger's engine, at its release, does with the model's class (registered, its Transformers
    backend, remote code, refused, or not checked), from the engine's own lists."""
    rules = engine_rules(ledger.settings.engine)
    return rules.architectures.check(ledger.model, ledger.settings, ledger.version)

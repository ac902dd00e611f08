"""The 'note: …' lines under a plan, and under `plan --compare`'s table: one wording of the domain's notes."""

from __future__ import annotations

from kvtop.domain.ledger import Ledger
from kvtop.domain.model import ModelSpec


def config_default_notes(m: ModelSpec) -> list[str]:
    """The defaults the config left out (`ModelSpec.defaults_used`, nominal and assumed), in the plan's words."""
    return [
        *(  # whose defaults they are: the entry's config class (ConfigDefault.what), not always transformers'
            f"the config leaves out {', '.join(d.said for d in m.defaults_used if d.what == what)}: {what}"
            + ("s" if sum(d.what == what for d in m.defaults_used) > 1 else "")
            for what in dict.fromkeys(d.what for d in m.defaults_used)
        ),
        *(f"the config leaves out {d.said}" for d in m.nominal_defaults),
        *(f"the config leaves out {d.said}: {d.what}" for d in m.assumed_defaults),  # a missing dtype: 16 bit
    ]


def unmodelled_notes(not_modelled: tuple[str, ...]) -> list[str]:
    """What a ledger leaves out (`Ledger.not_modelled`), in the plan's words."""
    return [f"not modelled: {note}" for note in not_modelled]


def plan_notes(ledger: Ledger) -> list[str]:
    """The 'note: …' lines under a plan: how the config was read, the ledger's notes, the defaults the config left
    out, what is not modelled (`--compare` says the same, once for the rows that share one)."""
    m = ledger.model
    return [*m.reading_notes, *ledger.notes, *config_default_notes(m), *unmodelled_notes(ledger.not_modelled)]

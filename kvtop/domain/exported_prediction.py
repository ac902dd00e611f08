"""kvtop's own token prediction as a kvtop exporter published it, read back where no ledger travels (Prometheus).

`kvtop_rank_token_capacity{source="predicted"}` carries the figure the node's `kvtop export` predicted; the ledger
behind it stays on the node. A view read through Prometheus shows the figure as the exporter's, never as "no
prediction" (the node header once said "no prediction: prediction not exported (kvtop export predicts 406,693
tokens)", session 67's walk), and never as a ledger of its own.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from kvtop.domain.wording import LEDGER_ON_NODE

#: Who predicted or counted a figure read through Prometheus, in every view's words: the findings (cluster_findings),
#: the Prometheus node source's notices and the header read this one constant.
EXPORTER = "kvtop export"


class ExportedPrediction(BaseModel):
    """The least rank's token capacity as the node's exporter predicted it (tokens; no ledger here)."""

    model_config = ConfigDict(frozen=True)

    tokens: int

    def said(self, compact: bool = False) -> str:
        """'tokens 406,693 predicted by kvtop export (its ledger stays on the node)'; compact: 'tokens 406,693 pred
        (kvtop export)'."""
        if compact:
            return f"tokens {self.tokens:,} pred ({EXPORTER})"
        return f"tokens {self.tokens:,} predicted by {EXPORTER} ({LEDGER_ON_NODE})"

    @property
    def figure(self) -> str:
        """'406,693 by kvtop export': the rank ledger's predicted figure where only the exporter's travels."""
        return f"{self.tokens:,} by {EXPORTER}"

    @property
    def no_ledger(self) -> str:
        """The rank ledger's line where its budget would be: 'kvtop export published the figure only: its ledger
        stays on the node' (68 characters: one line at 80 columns)."""
        return f"{EXPORTER} published the figure only: {LEDGER_ON_NODE}"

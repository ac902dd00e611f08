"""The AWQ weight widths SGLang loads. A config saying `bits: 3` stops the start.

`AWQConfig.__init__` raises "Currently, only 4-bit weight quantization is supported for AWQ, but got 3 bits."
(srt/layers/quantization/awq/awq.py:86, 0.5.21-0.5.23; :85 at 0.5.14; AWQ_BITS_ERAS: read from 0.4.9) and
`AWQMarlinConfig.TYPE_MAP` holds 4 and 8
(awq.py:249, `is_awq_marlin_compatible` False for any other width, so the Marlin override does not take a 3). An
8-bit checkpoint may load through Marlin where `check_marlin_supported` takes uint8 with zero points: not refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.refusals import Refusal

if TYPE_CHECKING:
    from kvtop.domain.ledger_values import Ledger

AWQ_SCHEMES = frozenset({"awq", "awq_marlin"})
# the widths AWQConfig (4) and AWQMarlinConfig.TYPE_MAP (4 and 8) take, by release: the same in every wheel read
AWQ_BITS_ERAS: Eras[tuple[int, ...]] = Eras((
    Era("", (4, 8), "srt/layers/quantization/awq.py:46 AWQConfig; awq_marlin imported from vLLM's awq_marlin.py "
        "(its TYPE_MAP 4 and 8) (read at 0.4.9; releases before not read)"),
    Era("0.5.3rc0", (4, 8), "srt/layers/quantization/awq.py:95 AWQConfig, :156 AWQMarlinConfig.TYPE_MAP (0.5.3rc0; "
        ":120, :196 at 0.5.10), awq/awq.py:85, :216 (0.5.12; :218 at 0.5.14), :86, :249 (0.5.22, 0.5.23)"),
))  # fmt: skip


def awq_bits_refusal(ledger: Ledger) -> Refusal | None:
    """An AWQ checkpoint of a width neither of SGLang's AWQ configs takes (None: not AWQ, or 4/8-bit)."""
    quant, era = ledger.model.quant, AWQ_BITS_ERAS.era(ledger.version)
    if quant.scheme not in AWQ_SCHEMES or quant.ignored or quant.weight_bits in era.value:
        return None
    return Refusal(
        field="quantization_config.bits",
        message=f"SGLang {ledger.version.label} loads AWQ at 4 bits (8 through Marlin), not {quant.weight_bits} "
        f"('Currently, only 4-bit weight quantization is supported for AWQ, but got {quant.weight_bits} bits.')",
        source=era.source,
    )

"""The AWQ weight widths vLLM loads: 4-bit only. A config saying `bits: 3` (or 8) stops the start.

v0.18.0: `AWQConfig.__init__` raises "Currently, only 4-bit weight quantization is supported for AWQ, but got 3
bits." (model_executor/layers/quantization/awq.py:51) and `AWQMarlinConfig.TYPE_MAP` holds 4 only (awq_marlin.py:71),
so the Marlin override does not take it either (awq.py:53 at v0.20.0). From v0.24.0 `quantization: awq` is
`AutoAWQConfig` (quantization/__init__.py:141-142 at v0.24.0, as awq_linear.py reads it), whose TYPE_MAP holds 4 only:
"Unsupported num_bits = 3. Supported: 4." (auto_awq.py:204 at v0.27.1 and v0.33.0). The widths are the same in
every release read; only the words change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtop.domain.engines.versions import Era, Eras, era_for
from kvtop.domain.refusals import Refusal

if TYPE_CHECKING:
    from kvtop.domain.ledger_values import Ledger

AWQ_SCHEMES = frozenset({"awq", "awq_marlin"})
#: The widths each release's AWQ configs take, with the line that refuses the others.
AWQ_BITS_ERAS: Eras[tuple[tuple[int, ...], str]] = Eras((
    Era("", ((4,), "Currently, only 4-bit weight quantization is supported for AWQ, but got {bits} bits."),
        "model_executor/layers/quantization/awq.py:51 AWQConfig (v0.18.0; awq_marlin.py:71 TYPE_MAP {4: uint4})"),
    Era("0.24.0", ((4,), "Unsupported num_bits = {bits}. Supported: 4."),
        "model_executor/layers/quantization/auto_awq.py:204 AutoAWQConfig TYPE_MAP {4: uint4} (v0.27.1, v0.33.0; "
        "the class from v0.24.0)"),
))  # fmt: skip


def awq_bits_refusal(ledger: Ledger) -> Refusal | None:
    """An AWQ checkpoint of a width vLLM's AWQ configs refuse (None: not AWQ, or 4-bit)."""
    quant = ledger.model.quant
    era = era_for(AWQ_BITS_ERAS, ledger.version)
    taken, said = era.value
    if quant.scheme not in AWQ_SCHEMES or quant.ignored or quant.weight_bits in taken:
        return None
    return Refusal(
        field="quantization_config.bits",
        message=f"vLLM {ledger.version.label} loads AWQ at {', '.join(map(str, taken))} bits only, "
        f"not {quant.weight_bits} ('{said.format(bits=quant.weight_bits)}')",
        source=era.source,
    )

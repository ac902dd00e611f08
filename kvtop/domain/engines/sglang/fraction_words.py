"""The automatic memory fraction's MiB, said beside the GB and GiB kvtop prints (session 69's operator pass).

SGLang's `_handle_gpu_memory_settings` reserves MiB out of nvidia-smi's total (`eras._s7_activation_reserve`), and the
fraction it leaves is then taken of the memory free before the weights load (the budget's reserve step, 'pre-load ×
(1 − fraction)', in GB and GiB). The MiB reserve is said in GiB and GB too, so it reads beside the step's
GB (GiB) as the same kind of figure, not as a third unit.
"""

from __future__ import annotations

from kvtop.domain.wording import MIB, gb_gib


def mib_said(reserved_mib: float) -> str:
    """' (SGLang counts in MiB, 1 MiB = 1,048,576 B: 15.03 GB (14.00 GiB) of the GPU's total; the budget's reserve
    is 1 − the fraction of the memory free before the load)': the MiB reserve as the budget prints its figures, GB
    then GiB, and why the budget's reserve step is another figure."""
    reserve = reserved_mib * MIB
    return (f" (SGLang counts in MiB, 1 MiB = 1,048,576 B: {gb_gib(reserve)} of the GPU's total; "
            "the budget's reserve is 1 − the fraction of the memory free before the load)")  # fmt: skip

"""The automatic memory fraction's MiB, said beside the GB and GiB kvtop prints (session 69's operator pass).

SGLang's `_handle_gpu_memory_settings` reserves MiB out of nvidia-smi's total (`eras._s7_activation_reserve`), and the
fraction it leaves is then taken of the memory free before the weights load (the budget's reserve step, 'pre-load ×
(1 − fraction)', in GB and GiB). The MiB reserve is said in GiB and GB too, so it reads beside the step's
GB (GiB) as the same kind of figure, not as a third unit.
"""

from __future__ import annotations

from kvtop.domain.wording import GB, MIB, figure, gib


def mib_said(reserved_mib: float) -> str:
    """' (in MiB, as SGLang counts: 1 MiB = 1,048,576 B; the reserve is 13.64 GiB, 14.65 GB)': what the MiB reserve is
    in the units the budget's steps print."""
    reserve = reserved_mib * MIB
    return f" (in MiB, as SGLang counts: 1 MiB = 1,048,576 B; the reserve is {gib(reserve)}, {figure(reserve / GB)} GB)"

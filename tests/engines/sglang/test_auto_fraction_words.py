"""SGLang's automatic memory fraction says its MiB in words an operator reads beside kvtop's GB and GiB (session 69:
"1,024 of it 1 GiB per 8 of TP × PP (8 × 1)" named neither the unit of the 1,024 nor how it relates to the step's
GB (GiB) figures).

Expected by SGLang 0.5.9's arithmetic (server_args.py `_handle_gpu_memory_settings`; see
test_auto_fraction_smi_total.py) for Llama-3-70B at TP 8 on an H100 (81,559 MiB): the parallel term is
8 × 1 ÷ 8 × 1,024 = 1,024 MiB, the reserve 14,848 MiB = 15,569,256,448 B: 14.50 GiB, 15.57 GB."""

from __future__ import annotations

from kvtop.domain.engines.base import MeasuredInputs
from tests.engines.sglang.test_auto_fraction_smi_total import H100_SMI, RESERVED_MIB, _fraction


def test_the_reserve_says_its_unit_and_the_parallel_term_its_gpus() -> None:
    _, source = _fraction(H100_SMI, "H100", MeasuredInputs())
    reserve_bytes = int(RESERVED_MIB) * 1_048_576
    assert reserve_bytes == 15_569_256_448  # 14.50 GiB (÷ 2**30), 15.57 GB (÷ 10**9)
    assert "81559 − 14848 MiB reserve, 1024 MiB of it for 8 GPUs of TP × PP (8 × 1; 1,024 MiB per 8 GPUs)" in source
    # GB then GiB, as the budget's reserve row beside it prints its own figure ('15.56 GB (14.49 GiB)')
    assert "÷ 81559 MiB (SGLang counts in MiB, 1 MiB = 1,048,576 B: 15.57 GB (14.50 GiB) of the GPU's total; " in source
    assert "1 GiB per 8 of TP × PP" not in source


def test_the_reserve_reads_through_the_one_gb_gib_formatter() -> None:
    # session 70: the MiB reserve's GB and GiB are written by the one pair every view writes (units.fmt_both is the
    # domain's wording.gb_gib), not by hand; 15,569,256,448 B ÷ 10**9 = 15.57 GB, ÷ 2**30 = 14.50 GiB
    from kvtop import units
    from kvtop.domain import wording

    assert units.fmt_both is wording.gb_gib and units.fmt_gb is wording.gb
    _, source = _fraction(H100_SMI, "H100", MeasuredInputs())
    assert f": {units.fmt_both(int(RESERVED_MIB) * 1_048_576)} of the GPU's total" in source
    assert wording.gb_gib(15_569_256_448) == "15.57 GB (14.50 GiB)"


def test_the_parallel_slack_holds_from_the_release_it_was_read_at() -> None:
    # `tp_size * pp_size / 8 * 1024` MiB, read in the wheels from v0.5.3rc2 (server_args.py:647-648) to v0.5.23
    # (arg_groups/memory_hook.py:311-312); v0.5.3rc0 sizes the reserve by GPU class (:498-515), a parallel share
    # inside the rows below 160 GiB (the H100's at TP 8: (9.5 + 8 / 2) × 1,024 = 13,824 MiB; 32 GiB flat above), not
    # this separate term
    from kvtop.domain.engines.sglang import eras
    from kvtop.domain.engines.versions import ResolvedVersion

    assert (eras.PARALLEL_MIB, eras.PARALLEL_RANKS, eras.PARALLEL_SINCE) == (1024, 8, "0.5.3rc2")
    assert eras.AUTO_FRACTION_ERAS.at(ResolvedVersion(text="0.5.3rc2")) is eras._s7_activation_reserve
    assert eras.AUTO_FRACTION_ERAS.at(ResolvedVersion(text="0.5.23")) is eras._s7_activation_reserve
    assert eras.AUTO_FRACTION_ERAS.at(ResolvedVersion(text="0.5.3rc0")) is eras._s6_gpu_class

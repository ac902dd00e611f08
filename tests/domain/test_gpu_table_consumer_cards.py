"""The consumer and workstation cards kvtop's GPU table gained in session 52 read from the names NVML prints to
the totals nvidia-smi printed, and `--gpu` as an operator types them ('GTX 1080', '1080').

Expected values: the public nvidia-smi printouts compiled in
tests/data/samples/nvidia_smi/nvml-names-totals-session52.csv (one row per card, its sources' search-index ids), and
NVIDIA's spec pages' CUDA-core counts, not the table itself. A GTX 1080 start had to be planned with --gpu-memory
because the table lacked the card (#27, session 52).
"""

from __future__ import annotations

import csv

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.gpus import compute_capability, gpu_model_key, gpu_total_bytes, is_listed_card, sm_count
from tests.data_paths import SAMPLES

MIB = 2**20
ROWS = list(
    csv.DictReader((SAMPLES / "nvidia_smi" / "nvml-names-totals-session52.csv").open(encoding="utf-8"))
)
# a memory variant NVML names as its smaller card (the RTX 3080 12GB, the RTX 4060 Ti 16GB): reached by its key only
BY_NAME = [row for row in ROWS if not row["kvtop_key"].endswith(("-12GB", "-16GB"))]
VARIANTS = [row for row in ROWS if row not in BY_NAME]


@pytest.mark.parametrize("row", BY_NAME, ids=lambda row: row["name_as_nvml_prints"])
def test_an_nvml_name_reads_to_its_key_and_the_total_nvidia_smi_printed(row: dict[str, str]) -> None:
    name = row["name_as_nvml_prints"]
    assert gpu_model_key(name) == row["kvtop_key"]
    assert gpu_total_bytes(name) == gpu_total_bytes(row["kvtop_key"]) == int(row["total_mib"]) * MIB
    assert is_listed_card(name)


@pytest.mark.parametrize("row", VARIANTS, ids=lambda row: row["kvtop_key"])
def test_a_memory_variant_is_its_own_key_and_the_name_keeps_the_smaller_card(row: dict[str, str]) -> None:
    assert gpu_total_bytes(row["kvtop_key"]) == int(row["total_mib"]) * MIB
    smaller = next(other for other in BY_NAME if other["name_as_nvml_prints"] == row["name_as_nvml_prints"])
    assert gpu_total_bytes(row["name_as_nvml_prints"]) == int(smaller["total_mib"]) * MIB
    assert compute_capability(row["kvtop_key"]) == compute_capability(row["name_as_nvml_prints"])


# (each row's printed capability and SM count: test_gpu_table_nvml_names.py's, over both printouts)
# CUDA cores per NVIDIA's product spec pages, and the cores of one SM (Pascal GP10x, Ampere GA10x, Ada, Blackwell
# GB20x: 128; Turing: 64): the SM count is their quotient
CUDA_CORES = {
    "NVIDIA GeForce GTX 1080": (2560, 128), "NVIDIA GeForce GTX 1080 Ti": (3584, 128),
    "NVIDIA GeForce RTX 2080 Ti": (4352, 64), "NVIDIA GeForce RTX 3060": (3584, 128),
    "RTX 3080 12GB": (8960, 128), "NVIDIA GeForce RTX 4080": (9728, 128), "NVIDIA GeForce RTX 5060 Ti": (4608, 128),
    "NVIDIA GeForce RTX 5070 Ti": (8960, 128), "NVIDIA RTX A4000": (6144, 128), "NVIDIA A40": (10752, 128),
}  # fmt: skip


@pytest.mark.parametrize("name", CUDA_CORES)
def test_the_sm_count_is_the_spec_pages_cores_over_the_cores_of_one_sm(name: str) -> None:
    cores, per_sm = CUDA_CORES[name]
    assert sm_count(name) == cores // per_sm


def test_the_names_operators_type_read_too() -> None:
    """`--gpu` as an operator writes it: 'GTX 1080', 'rtx 4060 ti 16gb', 'RTX 4070 Ti Super'."""
    assert gpu_model_key("GTX 1080") == gpu_model_key("gtx1080") == "GTX1080"
    assert gpu_total_bytes("GTX 1080") == 8192 * MIB
    assert gpu_total_bytes("rtx 4060 ti 16gb") == 16_380 * MIB
    assert gpu_model_key("RTX 4070 Ti Super") == "RTX4070-TI-SUPER"
    assert sm_count("GTX 1080") == 20
    # a variant written onto the number, as the corpus's records spell it ('RTX5060Ti') and operators type it
    assert gpu_model_key("RTX5060Ti") == gpu_model_key("rtx 5060 ti") == "RTX5060-TI"
    assert gpu_model_key("RTX4070TiSuper") == "RTX4070-TI-SUPER"


def test_a_bare_number_fails_on_the_field_and_names_the_cards_it_may_mean() -> None:
    with pytest.raises(InputError) as raised:
        gpu_total_bytes("1080")
    message = str(raised.value)
    assert message.startswith("--gpu: unknown GPU '1080'")
    assert "did you mean GTX1080, GTX1080-TI?" in message


def test_a_named_card_without_a_fit_of_its_own_takes_the_gap_and_its_context_by_sm_count() -> None:
    """The GTX 1080 Ti (no CUDA-total fit, 28 SMs: NVIDIA's 3,584 cores ÷ 128) reads through the same functions as
    the cards with one: nvidia-smi's 11,264 MiB less the fitted gap, and one process's context of the committed
    fit per 100 SMs × 0.28, both calibrated (before session 52 the context was 0.75 GiB assumed, the card unknown).
    Since session 52 the GTX 1080, which this test named first, has a fit of its own: the corpus's two vLLM
    0.6.4.post1 starts on one (file19400629813-*-gtx1080-v064post1) printed 'total_gpu_memory=7.92GiB'."""
    from kvtop.domain.calibration.cuda_context import CUDA_CONTEXT_FITS, CUDA_CONTEXT_KEY, one_process_context
    from kvtop.domain.calibration.gpu_totals import (
        CUDA_TOTAL_FITS,
        FALLBACK_KEY,
        cuda_total_estimate,
        gap_features,
    )
    from kvtop.domain.calibration.inputs import CalibrationInputs
    from kvtop.domain.engines.registry import engine_rules
    from kvtop.domain.engines.versions import from_flag
    from kvtop.domain.launch import parse_flags
    from kvtop.domain.layout import ParallelLayout
    from kvtop.sources.hub import load_config_file
    from tests.data_paths import CONFIGS

    own = cuda_total_estimate("GTX 1080", 8192 * MIB, CUDA_TOTAL_FITS)
    assert (own.source, round(own.bytes / 2**30, 2)) == ("calibrated", 7.92)  # the logs' printed total
    assert "cuda_total.GTX1080" in CUDA_TOTAL_FITS and "cuda_total.GTX1080-TI" not in CUDA_TOTAL_FITS
    total = cuda_total_estimate("GTX 1080 Ti", 11_264 * MIB, CUDA_TOTAL_FITS)
    gap = CUDA_TOTAL_FITS[FALLBACK_KEY]
    smi = 11_264 * MIB
    assert (total.source, total.bytes, total.error_bytes) == ("calibrated", smi - gap.predict(gap_features(smi)),
                                                               gap.error_bytes)  # fmt: skip
    inputs = CalibrationInputs(
        model=load_config_file(CONFIGS / "families" / "meta-llama--Llama-3.2-1B-Instruct.json"),
        settings=parse_flags("vllm", ["--engine-version", "0.6.4.post1"]), layout=ParallelLayout(tp=1),
        gpu_name="GTX1080-TI", gpu_total_bytes=11_264 * MIB, weights_bytes=0, context_length=2048,
        version=from_flag("0.6.4.post1", engine_rules("vllm").calendar),
    )  # fmt: skip
    context = one_process_context(inputs, dict(CUDA_CONTEXT_FITS), "test")
    assert context.source == "calibrated"
    assert context.bytes == CUDA_CONTEXT_FITS[CUDA_CONTEXT_KEY].predict((3584 / 128 / 100,))

"""`plan`'s header says what the GPU total beside the GPU's name is: it showed '1× H100 (79.65 GiB)' over a table
whose first row is 'GPU memory as CUDA reports it 79.19 GiB', two totals of one GPU with no word for either (an
operator trial, session 48). The header's is nvidia-smi's (tests/data/samples/nvidia_smi/q-fb-block-81559mib-
reserved328.txt: 'Total : 81559 MiB' = 79.65 GiB), the row's CUDA's (calibrated: tests/calibrated_figures.py, the mean
of the H100 totals the corpus's logs printed; since session 52 its 19 sources' mean is 79.1842 GiB, printed 79.18 GiB,
where 15 sources' was 79.1881, 79.19 GiB)."""

from __future__ import annotations

import pytest

from kvtop.cli import main
from kvtop.units import fmt_gib
from tests.calibrated_figures import H100_CUDA_TOTAL_BYTES
from tests.data_paths import CONFIGS

LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")


def plan(capsys: pytest.CaptureFixture[str], *args: str, engine: tuple[str, ...] = ("--engine", "vllm")) -> list[str]:
    assert main(["plan", "--model", LLAMA_8B, *engine, *args]) == 0
    return capsys.readouterr().out.splitlines()


def test_the_header_names_nvidia_smis_total_and_the_budget_cudas(capsys: pytest.CaptureFixture[str]) -> None:
    lines = plan(capsys, "--gpu", "H100")
    assert "  ·  TP1 on 1× H100 (79.65 GiB, nvidia-smi's total)  ·  " in lines[0]  # 81,559 MiB ÷ 1,024
    assert fmt_gib(H100_CUDA_TOTAL_BYTES) == "79.18 GiB"
    cuda = [line for line in lines if line.lstrip().startswith("GPU memory as CUDA reports it")]
    assert len(cuda) == 2  # the calibrated row before the start, and the budget's first row
    assert "79.18 GiB  ± " in cuda[0] and cuda[1].rstrip().endswith("(79.18 GiB)  calibrated")


def test_a_given_total_and_a_unified_hosts_are_named_for_what_they_are(capsys: pytest.CaptureFixture[str]) -> None:
    assert "1× GPU (80.00 GiB, --gpu-memory)" in plan(capsys, "--gpu-memory", "80GiB")[0]
    assert "1× H100 (24.00 GiB, --gpu-memory)" in plan(capsys, "--gpu", "H100", "--gpu-memory", "24GiB")[0]
    # GB10's total is CUDA's (no nvidia-smi figure on unified memory): TensorRT-LLM 1.1.0rc3 logged 'device total
    # memory 119.70 GiB' there (tests/data/cases/trtllm/trtllm-dgxspark-gptoss120b-v110rc3)
    assert "1× GB10 (119.70 GiB, CUDA's total on unified memory)" in plan(capsys, "--gpu", "GB10")[0]


def test_compare_and_layouts_name_the_total_as_plan_does(capsys: pytest.CaptureFixture[str]) -> None:
    assert "4× H100 (79.65 GiB, nvidia-smi's total)  ·  KV auto" in plan(capsys, "--tp", "4", "--compare", "all", engine=())[0]
    lines = plan(capsys, "--layouts", "1x8 tp8", "1x8 tp4 dp2")
    assert "  ·  H100 (79.65 GiB, nvidia-smi's total)  ·  " in lines[0]


def test_the_json_names_the_total_as_the_header_does(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    out = json.loads("\n".join(plan(capsys, "--gpu", "H100", "--json")))
    assert out["gpu"] == {"name": "H100", "total_bytes": 81_559 * 2**20, "total_is": "nvidia-smi's total",
                          "engine_total_bytes": H100_CUDA_TOTAL_BYTES, "engine_total_source": "calibrated",
                          "memory_variant": None}
    cuda = next(term for term in out["terms"] if term["term"] == "cuda_total")
    assert cuda["bytes"] == H100_CUDA_TOTAL_BYTES and cuda["label"] == "GPU memory as CUDA reports it"


@pytest.mark.parametrize("engine", ["sglang", "lmdeploy", "trtllm"])
def test_each_engine_budget_names_the_total_it_starts_from(capsys: pytest.CaptureFixture[str], engine: str) -> None:
    """SGLang, LMDeploy and TensorRT-LLM size from the total plan is given (nvidia-smi's, the header's), not
    CUDA's: their budget's first row was an unnamed 'GPU memory 85.52 GB (79.65 GiB)' beside vLLM's named one."""
    lines = plan(capsys, "--gpu", "H100", engine=("--engine", engine))
    first = lines[next(i for i, line in enumerate(lines) if line.startswith("Budget (")) + 1]
    # 81,559 MiB (the H100's nvidia-smi total) = 85,520,809,984 B = 85.52 GB = 79.65 GiB
    assert first.lstrip().startswith("GPU memory (nvidia-smi's total)")
    assert first.rstrip().endswith("85.52 GB (79.65 GiB)")
    given = plan(capsys, "--gpu-memory", "24GiB", engine=("--engine", engine))
    first = given[next(i for i, line in enumerate(given) if line.startswith("Budget (")) + 1]
    assert first.split("  ")[1] == "GPU memory" and first.rstrip().endswith("(24.00 GiB)  measured")


def test_a_given_total_equal_to_the_tables_is_still_said_given(capsys: pytest.CaptureFixture[str]) -> None:
    """`--gpu H100 --gpu-memory 81559MiB` was headed 'nvidia-smi's total': the origin was read back from the bytes,
    and 81,559 MiB is the H100's table figure (tests/data/samples/nvidia_smi: 'Total : 81559 MiB'). The operator
    gave it, so it is said as --gpu-memory, in the header and the JSON alike; --gpu alone stays the table's."""
    import json

    given = ("--gpu", "H100", "--gpu-memory", "81559MiB")
    assert "  ·  TP1 on 1× H100 (79.65 GiB, --gpu-memory)  ·  " in plan(capsys, *given)[0]  # 81,559 MiB ÷ 1,024
    out = json.loads("\n".join(plan(capsys, *given, "--json")))
    assert out["gpu"] == {"name": "H100", "total_bytes": 81_559 * 2**20, "total_is": "--gpu-memory",
                          "engine_total_bytes": 81_559 * 2**20, "engine_total_source": "measured",
                          "memory_variant": None}
    table = json.loads("\n".join(plan(capsys, "--gpu", "H100", "--json")))["gpu"]
    assert table["total_is"] == "nvidia-smi's total" and table["engine_total_source"] == "calibrated"
    assert "  ·  TP1 on 1× H100 (79.65 GiB, nvidia-smi's total)  ·  " in plan(capsys, "--gpu", "H100")[0]
    # compare and layouts read the same origin
    compared = plan(capsys, *given, "--tp", "4", "--compare", "all", engine=())[0]
    assert "4× H100 (79.65 GiB, --gpu-memory)  ·  KV auto" in compared
    assert "  ·  H100 (79.65 GiB, --gpu-memory)  ·  " in plan(capsys, *given, "--layouts", "1x8 tp8")[0]

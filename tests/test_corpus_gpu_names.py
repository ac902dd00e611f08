"""Every card the corpus names is one kvtop reads: a calibration record's `gpu` (tests/data/calibration/*.jsonl) is a
key of the GPU table as the corpus looks it up (`gpu_key`, no prefix reading), and a case's `gpu_model`
(tests/data/cases/**/case.json, free text) names a listed card; a record or case that names none is listed here with
the reason. Why: a spelling the table missed ('A4000', 'RTX6000Ada') left a record unplanned, or planned on the
fallback gap with a second CUDA-total fit of its own ('cuda_total.RTX6000ADA' beside 'cuda_total.RTX6000-ADA'),
without a word (#27, session 52).

Expected values: the cards as the records' and cases' own text names them; totals where a record printed one.
"""

from __future__ import annotations

import json
import re

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.gpus import (
    GPU_TOTAL_MIB,
    UNIFIED_TOTAL_MIB,
    compute_capability,
    gpu_key,
    gpu_model_key,
    gpu_total_bytes,
    is_larger_variant,
)
from tests.corpus_records import RECORDS
from tests.data_paths import CASES

MIB = 2**20
NAMED = {record_id: record for record_id, record in RECORDS.items() if record.get("gpu")}

# calibration records with no `gpu`: planned from a total they print (`gpu_total_mib`, `cuda_total`) or not at all
RECORDS_WITHOUT_A_CARD = {
    "case-lmdeploy-tutorial-v010-internlm-chat-7b-vgpu": "a vGPU slice of an A100 (20,470 MiB, gpu_total_mib): "
    "not a whole card, whose table total would be wrong",
    "file9907432117-mistral-7b-instruct-a100-mig-3g40gb-v033": "a MIG 3g.40gb slice of an A100 80GB (40,192 MiB, "
    "gpu_total_mib): not a whole card, and kvtop has no MIG profile",
    "rhdemo-qwen3.8-27b-fp8-h200-mig-3g71gb-v0240": "a MIG 3g.71gb slice of an H200 (71,424 MiB, gpu_total_mib): "
    "not a whole card, and kvtop has no MIG profile",
    "rhdemo-qwen3.8-27b-h200-mig-3g71gb-v0240-bf16-eager": "a MIG 3g.71gb slice of an H200 (71,424 MiB, "
    "gpu_total_mib): not a whole card, and kvtop has no MIG profile",
    "case-sglang-C13-llama-3.1-8b-80gb": "an 80 GB GPU the page does not name",
    "mlcommons2501-trtllm-gpt-oss-120b": "the GPU is not named (CUDA's total 276.50 GiB)",
    "case-vllm-15783-v073-80gb": "model and GPU not stated",
    "markat1-course-assistant-qwen3-8b-hami38000-h100sxm-v0520": "a HAMi slice of an H100 SXM5 (38,000 MiB, "
    "gpu_total_mib, CUDA's own total): the card's table total would plan the whole H100",
    "markat1-course-assistant-qwen3-8b-hami38000-a100-80gb-v0520": "a HAMi slice of an A100 80GB (38,000 MiB, "
    "gpu_total_mib, CUDA's own total): the card's table total would plan the whole A100",
    "markat1-course-assistant-qwen3-8b-hami38000-h100pcie-v0520": "a HAMi slice of an H100 PCIe (38,000 MiB, "
    "gpu_total_mib, CUDA's own total): the card's table total would plan the whole H100",
    "nakulmanchanda-ai-analytics-poc-qwen3-0.6b-hami50pct-a100-40gb-v0110": "a 50 % HAMi slice of an A100-SXM4-40GB "
    "(20,480 MiB, gpu_total_mib, CUDA's own total): the card's table total would plan the whole A100",
    "cduggn-ariadne-qwen3-8b-awq-hami20gib-a100-40gb-v0290": "a 20 GiB HAMi slice of an A100 40 GB SXM4 (20,480 MiB, "
    "gpu_total_mib, CUDA's own total): the card's table total would plan the whole A100",
}


def _case_card(text: str) -> str:
    """The card a case's free-text `gpu_model` names: the words before any aside ('(', ',', ';', '+'), less a count
    ('8 x A800-80G (SM80)' → 'A800-80G', '2 x NVIDIA RTX PRO 6000 Blackwell Server Edition, 95.01 GiB ...')."""
    first = re.split(r"[(,;+]", text)[0]
    return re.sub(r"^\s*\d+\s*[x×]\s*", "", first, flags=re.IGNORECASE).strip()


CASE_FILES = sorted(CASES.glob("*/*/case.json"))
CASE_TEXT = {
    f"{path.parent.parent.name}/{path.parent.name}": (lambda case: case.get("gpu_model", case.get("gpu")))(
        json.loads(path.read_text(encoding="utf-8"))
    )
    for path in CASE_FILES
}

NOT_STATED = "the source names no GPU"
# cases whose text names no card kvtop lists, and why (a class of card, another vendor's, or none)
CASES_WITHOUT_A_CARD = {
    "llamacpp/gemma2-2b-it-q4_k_m-np-auto-unified": NOT_STATED,
    "llamacpp/gpt-oss-20b-q8_0-kv-hexagon": "a Qualcomm Hexagon NPU, not an NVIDIA GPU",
    "llamacpp/ollama-llama31-8b-np4-kv-self-size": NOT_STATED,
    "sglang/C02": NOT_STATED, "sglang/C03": NOT_STATED, "sglang/C07": NOT_STATED, "sglang/C08": NOT_STATED,
    "sglang/C12": NOT_STATED, "sglang/C18": NOT_STATED, "sglang/C22": NOT_STATED,
    "sglang/C04": "a 141 GB class read off the free memory (its record names the H200 by that inference)",
    "sglang/C05": "a Moore Threads MTT S5000, not an NVIDIA GPU",
    "sglang/C11": "an AMD Instinct (MI300X inferred), not an NVIDIA GPU",
    "sglang/C13": "an 80 GB class, the card not stated", "sglang/C17": "an 80 GB class, the card not stated",
    "sglang/C21": "a 16 GB class, the card not stated", "sglang/C23": "a 24 GB class, the card not stated",
    "sglang/sglang-pr14254-mistral-small31-pp4": "not stated (an 80 GB part by its free memory)",
    "sglang/sglang-xinference3481-run2-qwen2-64L-automfs": "a 48 GB class (49,140 MiB), the card not stated",
    "trtllm/trtllm-2268-qwen15-7b-primary-pool": "a 40 GB class, the card not stated",
    "trtllm/trtllm-494-llama2-7b-triton-refusal": NOT_STATED,
    "trtllm/trtllm-docs-memory-md-4060-blocks": "an 80 GB class (A100 or H100), the card not stated",
    "trtllm/trtllm-kimi-k25-mla-fp8-test-output": "not stated (a >= 180 GB part by its pool)",
    "trtllm/trtllm-qwen3-8b-fp8-v120rc2-estimation": "an RTX 50-series card, which one not stated",
    "trtllm/trtllmbackend-309-tp2-total-tokens": NOT_STATED,
    "vllm/club3090-pr594-qwen36-27b-fp8-tp2": NOT_STATED, "vllm/glm52-nvfp4-tp4-v0260-fulllog": NOT_STATED,
    "vllm/glm53-flash-nvfp4-tp3-lilab-fork": NOT_STATED, "vllm/lmcache-1739-qwen3-14b": NOT_STATED,
    "vllm/srcbuild-dev15312-qwen3-vl-8b-init-failed": NOT_STATED,
    "vllm/vllm-11230-qwen25-72b-gptq-v064-refusal": "a 48 GB class (47.74 GiB logged), the card not stated",
    "vllm/vllm-15783-v073-80gb-util080": NOT_STATED, "vllm/vllm-15871-deepseek-v2-lite-offload": NOT_STATED,
    "vllm/vllm-17327-qwen3-v085-4workers": NOT_STATED, "vllm/vllm-49878-gemma4-kv-bytes-v026": NOT_STATED,
    "vllm/vllm-8933-tp4-v062-worker-refusal": NOT_STATED, "vllm/vllm-pr12569-llama31-70b-w8a8": NOT_STATED,
    "vllm/vllm-v0102-qwen3-8b-fp8-4090-underscore-flags": "not named (an RTX 4090 by CUDA's total)",
    "vllm/wsl-v0151-whisper-large-v3": NOT_STATED,
}  # fmt: skip


def _listed(key: str) -> bool:
    return key in GPU_TOTAL_MIB or key in UNIFIED_TOTAL_MIB


@pytest.mark.parametrize("record_id", sorted(NAMED))
def test_a_records_card_is_a_table_key_as_the_corpus_looks_it_up(record_id: str) -> None:
    """One key per card: the corpus's lookup (`gpu_key`), the fits' (`gpu_model_key`) and the capability agree."""
    record = NAMED[record_id]
    key = gpu_key(record["gpu"])
    assert _listed(key), f"{record_id}: gpu {record['gpu']!r} is no card of kvtop's table"
    assert gpu_model_key(record["gpu"]) == key
    assert compute_capability(record["gpu"]) is not None
    if record.get("gpu_total_mib") is not None and key in GPU_TOTAL_MIB:
        printed = int(record["gpu_total_mib"])
        # the total it printed is the table's, or a larger memory variant's (a 12 GB RTX 2060, a 22 GB RTX 2080 Ti)
        assert printed == GPU_TOTAL_MIB[key] or is_larger_variant(key, printed * MIB)


def test_the_records_without_a_card_are_the_ones_listed() -> None:
    assert {record_id for record_id in RECORDS if not RECORDS[record_id].get("gpu")} == set(
        RECORDS_WITHOUT_A_CARD
    )


def test_the_a4000_record_reads_as_the_rtx_a4000() -> None:
    """TensorRT-LLM#1188's 'Quadro A4000(16GB VRAM)': nvidia-smi's 16,376 MiB of the 'NVIDIA RTX A4000'
    (tests/data/samples/nvidia_smi/nvml-names-totals-session52.csv)."""
    record = RECORDS["trtllm-issue1188-qwen2.5-coder-0.5b-int8wo-a4000"]
    assert gpu_key(record["gpu"]) == "RTXA4000"
    assert GPU_TOTAL_MIB[gpu_key(record["gpu"])] * MIB == gpu_total_bytes(record["gpu"]) == 16_376 * MIB


def test_the_rtx_2000_ada_reads_by_its_nvml_name() -> None:
    """'NVIDIA RTX 2000 Ada Generation, 16,380 MiB' as public nvidia-smi printouts give it (search-index ids
    68330442097, 63453334174) and '(sm_89)' (57504630391): the name an operator copies from nvidia-smi plans on
    that card, as the session-56 record that names it (its printed total, `gpu_total_mib`)."""
    record = RECORDS["file7256429456-qwen2.5-1.5b-rtx2000ada-v0112-u06"]
    assert gpu_model_key("NVIDIA RTX 2000 Ada Generation") == gpu_key(record["gpu"]) == "RTX2000-ADA"
    assert gpu_total_bytes("NVIDIA RTX 2000 Ada Generation") == int(record["gpu_total_mib"]) * MIB == 16_380 * MIB
    assert compute_capability("NVIDIA RTX 2000 Ada Generation") == (8, 9)


def test_the_rtx_3050_6gb_reads_by_its_nvml_name() -> None:
    """'NVIDIA GeForce RTX 3050 6GB Laptop GPU · total VRAM 6,144 MB' (search-index id 67621234058) and its 'sm_86'
    (70416756008): the 6 GB card plans by its NVML name, as the session-56 record that names it; the 8 GB RTX 3050
    stays unknown (refused by name, not read as the 6 GB one)."""
    record = RECORDS["file65736513334-opt-125m-rtx3050-6gb-v0901-llm"]
    assert gpu_model_key("NVIDIA GeForce RTX 3050 6GB Laptop GPU") == gpu_key(record["gpu"]) == "RTX3050-6GB"
    assert gpu_total_bytes("NVIDIA GeForce RTX 3050 6GB Laptop GPU") == 6_144 * MIB
    assert compute_capability("NVIDIA GeForce RTX 3050 6GB") == (8, 6)
    with pytest.raises(InputError):
        gpu_total_bytes("NVIDIA GeForce RTX 3050")


@pytest.mark.parametrize("case_id", sorted(CASE_TEXT))
def test_a_cases_card_is_listed_or_its_absence_is_said(case_id: str) -> None:
    text = CASE_TEXT[case_id]
    read = _listed(gpu_model_key(_case_card(text))) if text else False
    assert read != (case_id in CASES_WITHOUT_A_CARD), f"{case_id}: {text!r}"


def test_a_case_and_its_record_name_cards_of_one_total() -> None:
    """A record taken from a case (its `source` the case's folder) is planned on the total of the card the case
    names ('A100 (80 GB implied …)' is the 'A100-80GB' record's 81,920 MiB)."""
    checked = 0
    for record in RECORDS.values():
        case_id = str(record.get("source", "")).removeprefix("cases/")
        text = CASE_TEXT.get(case_id)
        if not text or not record.get("gpu") or case_id in CASES_WITHOUT_A_CARD:
            continue
        assert gpu_total_bytes(_case_card(text)) == gpu_total_bytes(record["gpu"]), record["id"]
        checked += 1
    assert checked >= 10

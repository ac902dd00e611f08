"""A corpus record whose launch kvtop refuses by name is loaded and judged "refused", never a stop of the loader
(benchmarks/calibration/corpus.py `Record.refusal`; session 67 left the P-EAGLE record's config null to get past it).

The record: chiatzenw-cur/lossy-spec-decode-repetition's P-EAGLE smoke test (vLLM 0.26.0, gpt-oss-20b with
amazon/GPT-OSS-20B-P-EAGLE at k = 7 on an H100 PCIe; its log: 'Free memory on device (78.74/79.19 GiB) on startup',
'0.23 GiB for non-torch memory', 'GPU KV cache size: 1,125,241 tokens'). kvtop refuses the launch (a parallel-drafting
head's depth is its config's alone: engines/vllm/draft_parallel.py), so the record is not planned, while the figures
it printed that need no plan still count.
"""

from __future__ import annotations

import json
from decimal import Decimal

from benchmarks.calibration.corpus import CORPUS, by_id, resolve
from benchmarks.calibration.evaluate import blind
from benchmarks.calibration.report import _refused
from kvtop.domain.wording import GIB

P_EAGLE = "chiatzen-gpt-oss-20b-h100pcie-v0260-peagle-k7-u085-mml65536"
DOC = CORPUS.parents[2] / "docs" / "calibration.md"


def test_the_loader_judges_a_refused_launch_refused_and_keeps_its_printed_figures() -> None:
    record = by_id()[P_EAGLE]  # the whole corpus loads: no record stops it
    assert record.raw["config"] == "openai--gpt-oss-20b.json"  # the target's config, as the source ran it
    assert record.model is None and record.ledger() is None
    assert record.refusal is not None and "parallel drafting (P-EAGLE) with method 'eagle3'" in record.refusal
    assert record.figures["cuda_total"] == round(Decimal("79.19") * GIB)  # the log's 79.19 GiB, as printed
    assert record.figures["non_torch"] == round(Decimal("0.23") * GIB)
    assert record.tokens == 1_125_241
    assert blind(record, {}, weights_logged=False) is None  # no blind figure is judged


def test_a_record_kvtop_plans_carries_no_refusal() -> None:
    sequential = next(json.loads(line) for line in (CORPUS / "vllm.jsonl").read_text().splitlines()
                      if '"chiatzen-gpt-oss-20b-h100pcie-v0260-eagle3-k6-greedy-u085-mml65536"' in line)  # fmt: skip
    record = resolve(sequential)
    assert record.refusal is None and record.model is not None and record.ledger() is not None


def test_the_doc_names_every_refused_record_and_counts_them() -> None:
    corpus = {"vllm": [by_id()[P_EAGLE]]}
    lines = _refused(corpus)
    assert lines[0] == "### Refused"
    assert lines[2].startswith("1 record kvtop refuses by name")
    assert lines[-1].startswith(f"| {P_EAGLE} | vllm | 0.26.0 | --speculative-config: parallel drafting (P-EAGLE)")
    text = DOC.read_text()  # docs/calibration.md as run.py --write rendered it
    assert "### Refused" in text and f"| {P_EAGLE} | vllm | 0.26.0 |" in text

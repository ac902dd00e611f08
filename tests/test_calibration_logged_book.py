"""A record whose ledger kvtop cannot solve (no GPU total in the corpus: the DGX Spark's GB10) takes its log's
weights as its inputs' book (`Record.inputs`); the TensorRT-LLM PyTorch backend's MXFP4 padding (moe_weights.py)
would be added on top of weights that already hold it. Such a record never reaches the weights' error: the weights
term is made only where the ledger is (`evaluate.weights_term`), so the padding is counted once, on the book.
Expected figure: the log's `63.52` GiB (tests/data/calibration/trtllm.jsonl); moe_weights.py pads gpt-oss-120b's
experts by 2.55 GiB (width 2,880 → 2,944, CUTLASS's 128 alignment), which would put it 4 % over its own log."""

from __future__ import annotations

from benchmarks.calibration.corpus import load_all
from benchmarks.calibration.evaluate import weights_errors, weights_term

DGX_SPARK = "case-trtllm-dgxspark-gpt-oss-120b"


def test_a_logged_weight_taken_as_book_is_not_padded_into_the_weights_error() -> None:
    corpus = load_all()
    record = next(record for record in corpus["trtllm"] if record.id == DGX_SPARK)
    assert record.ledger() is None and record.inputs().weights_bytes == record.figures["weights"]  # the log's 63.52
    assert weights_term(record) is None  # no book of its own: no padded weights term
    assert DGX_SPARK not in {found.id for found, _ in weights_errors({"trtllm": corpus["trtllm"]})}

"""Every weights row a view shows reads in words, never the book's key (the trial: 'calibrated_beyond_book')."""

from kvtop.domain.deployment import Feature
from kvtop.domain.ledger import CALIBRATED_WEIGHTS_ROW
from kvtop.domain.ledger_words import FEATURE_WORDS, component_words
from kvtop.domain.node import REPORTED_WEIGHTS_ROW
from kvtop.domain.weights import COMPONENT_ORDER


def test_every_generic_row_and_the_ledgers_own_rows_read_in_words() -> None:
    for key in (*COMPONENT_ORDER, CALIBRATED_WEIGHTS_ROW, REPORTED_WEIGHTS_ROW):
        assert "_" not in component_words(key), key
    assert component_words(CALIBRATED_WEIGHTS_ROW) == "held beside the book (calibrated)"
    assert component_words("lm_head") == "LM head" and component_words("routed_experts") == "routed experts"
    assert component_words("some_new_row") == "some new row"  # a key without an entry: spaces, not underscores


def test_every_deployment_feature_reads_in_words() -> None:
    assert set(FEATURE_WORDS) == set(Feature)  # a new feature names its words, or this fails
    assert not [words for words in FEATURE_WORDS.values() if "_" in words]

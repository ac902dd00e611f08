"""The article before a figure or a name as it is read aloud (session 54's trial: "leaves a 11.63 GiB runtime reserve";
session 60's read: "no record on a L40")."""

from __future__ import annotations

import pytest

from kvtop.domain.wording import GIB, a_gib, a_or_an, with_article, with_the


@pytest.mark.parametrize(
    ("figure", "article"),
    [("8.00", "an"), ("80.50", "an"), ("800", "an"), ("11.63", "an"), ("18", "an"), ("11,500", "an"),
     ("18,000.00", "an"), ("1.00", "a"), ("110.00", "a"), ("1,800", "a"), ("0.77", "a"), ("6.00", "a"),
     ("180", "a"), ("1", "a")],
)  # fmt: skip
def test_the_article_follows_the_figure_read_aloud(figure: str, article: str) -> None:
    assert a_or_an(figure) == article


def test_a_byte_figure_takes_its_article() -> None:
    assert a_gib(round(11.63 * GIB)) == "an 11.63 GiB"
    assert a_gib(2.5 * GIB) == "a 2.50 GiB"


@pytest.mark.parametrize(
    ("name", "said"),
    [("L40", "an L40"), ("L40S", "an L40S"), ("A100", "an A100"), ("H100", "an H100"), ("RTX4090", "an RTX4090"),
     ("MI300X", "an MI300X"), ("MLA with MoE", "an MLA with MoE"), ("SGLang", "an SGLang"), ("8-bit", "an 8-bit"),
     ("GB200", "a GB200"), ("B300", "a B300"), ("T4", "a T4"), ("MoE", "a MoE"), ("GeForce", "a GeForce"),
     ("16-bit", "a 16-bit"), ("olmo2", "an olmo2"), ("intermediate_size", "an intermediate_size"),
     ("qwen3_moe", "a qwen3_moe"), ("vision-language", "a vision-language")],
)  # fmt: skip
def test_a_name_takes_the_article_of_its_first_sound(name: str, said: str) -> None:
    """A GPU model or an initialism is read letter by letter (aitch, el, ar, em: vowel sounds), a word as written."""
    assert with_article(name) == said


def test_a_label_with_its_article_or_a_possessive_takes_no_second_one() -> None:
    """The TensorRT-LLM PyTorch backend's terms are labelled 'the profiling run's CUDA graphs, …' and "TensorRT-LLM's
    profiled activation peak": explain's interval words said 'the error of the the profiling run's …'."""
    assert with_the("weights") == "the weights"
    # TensorRT-LLM's non-torch term (engines/trtllm/calibration.py), its article and all
    graphs = "the profiling run's CUDA graphs, workspaces, NCCL"
    assert with_the(graphs) == graphs
    assert with_the("TensorRT-LLM's profiled activation peak") == "TensorRT-LLM's profiled activation peak"

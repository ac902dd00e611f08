"""Every fuzzed input kind by name: the strategies the CI test and `benchmarks/fuzz_inputs.py` draw from."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from tests.domain.config_mutations import Planted, planted_configs
from tests.fuzz.kinds_cli import CLI_KINDS, CliInput
from tests.fuzz.kinds_http import HTTP_KINDS


def _config_input(planted: Planted) -> CliInput:
    files = [("config.json", planted.config)]
    if planted.quant is not None:
        files.append(("hf_quant_config.json", planted.quant))
    return CliInput(
        "config",
        ("plan", "--model", "{dir}/config.json", "--json"),
        tuple(files),
        (planted.name, *planted.mutations),
        json_key="token_capacity",
    )


def configs() -> st.SearchStrategy[CliInput]:
    """The config mutations of `tests/domain/config_mutations.py`, as a CLI input like the others."""
    return planted_configs().map(_config_input)


KINDS: dict[str, Callable[[], st.SearchStrategy[Any]]] = {**CLI_KINDS, **HTTP_KINDS, "config": configs}

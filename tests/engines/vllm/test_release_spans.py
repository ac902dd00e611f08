"""One table of the flags the launch check checks by release (flags.RELEASE_SPANS, flags_table.refuse_missing):
the memory-neutral ones and the one-off checks it folded (`-cc`, `--mamba-cache-mode`, the pooling runner's flags,
`--limit-mm-per-prompt`), each refused with the flag as typed and the releases read.

Expected values from the wheels' argparse (PyPI): `-cc` first in v0.12.0 (engine/arg_utils.py:1128; none in the
v0.11.2 wheel); `--mamba-cache-mode` first in v0.15.1 (none in v0.13.0); `--convert` first in v0.10.1 (none in
v0.10.0); `--task` last in v0.12.0 (none in v0.13.0).
"""

from __future__ import annotations

import pytest

from kvtop.domain.engines.vllm.flags import RELEASE_SPANS
from kvtop.domain.errors import InputError
from kvtop.domain.launch import check_parallel, parse_flags


@pytest.mark.parametrize(("typed", "version", "field", "says"), [
    (("-cc.cudagraph_mode", "PIECEWISE"), "0.11.2", "-cc.cudagraph_mode", "vLLM 0.11.2 has no -cc (first in v0.12.0"),
    (("--mamba-cache-mode", "align"), "0.13.0", "--mamba-cache-mode", "vLLM 0.13.0 has no --mamba-cache-mode (first in v0.15.1"),
    (("--convert", "embed"), "0.10.0", "--convert", "vLLM 0.10.0 has no --convert (first in v0.10.1"),
    (("--task", "embed"), "0.13.0", "--task", "vLLM 0.13.0 has no --task (last in v0.12.0 of the releases read; gone in v0.13.0)"),
])  # fmt: skip
def test_a_folded_flag_the_release_lacks_is_refused_from_the_one_table(
    typed: tuple[str, str], version: str, field: str, says: str
) -> None:
    with pytest.raises(InputError) as err:
        check_parallel(parse_flags("vllm", [*typed, "--engine-version", version]))
    assert err.value.field == field and says in str(err.value)


@pytest.mark.parametrize(("typed", "version"), [
    (("-cc.cudagraph_mode", "PIECEWISE"), "0.12.0"), (("--mamba-cache-mode", "align"), "0.15.1"),
    (("--convert", "embed"), "0.10.1"), (("--task", "embed"), "0.12.0"), (("--limit-mm-per-prompt", '{"image": 1}'), "0.6.4"),
])  # fmt: skip
def test_the_first_release_read_with_it_takes_it(typed: tuple[str, str], version: str) -> None:
    check_parallel(parse_flags("vllm", [*typed, "--engine-version", version]))


def test_the_table_holds_each_one_off_check() -> None:
    assert {"-cc", "--mamba-cache-mode", "--runner", "--convert", "--task", "--limit-mm-per-prompt"} <= set(RELEASE_SPANS)

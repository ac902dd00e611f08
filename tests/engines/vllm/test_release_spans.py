"""One table of the flags the launch check checks by release (flags.RELEASE_SPANS, flags_table.refuse_missing):
the memory-neutral ones and the one-off checks it folded (`-cc`, `--mamba-cache-mode`, the pooling runner's flags,
`--limit-mm-per-prompt`), each refused with the flag as typed and the releases read.

Expected values from the wheels' argparse (PyPI): `-cc` first in v0.12.0 (engine/arg_utils.py:1128; none in the
v0.11.2 wheel); `--mamba-cache-mode` first in v0.15.1 (none in v0.13.0); `--convert` first in v0.10.1 (none in
v0.10.0); `--task` last in v0.12.0 (none in v0.13.0).
The check runs where the launch states --engine-version (`check_parallel`) and again at the release the plan resolves
(budget.py: a log's release, known only after the launch check).
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.vllm.flags import RELEASE_SPANS
from kvtop.domain.errors import InputError
from kvtop.domain.launch import check_parallel, parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from tests.conftest import CONFIGS

H100 = 81559 << 20
LLAMA8B = model_from_config(
    json.loads((CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json").read_text()), source="llama-3.1-8b"
)


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


@pytest.mark.parametrize(("typed", "version", "field", "says"), [
    (("-cc", '{"cudagraph_mode": "NONE"}'), "0.11.2", "-cc", "vLLM 0.11.2 has no -cc (first in v0.12.0"),
    (("-cc.cudagraph_mode=NONE",), "0.11.2", "-cc.cudagraph_mode", "vLLM 0.11.2 has no -cc (first in v0.12.0"),
    (("--mamba-cache-mode", "align"), "0.13.0", "--mamba-cache-mode", "vLLM 0.13.0 has no --mamba-cache-mode (first in v0.15.1"),
])  # fmt: skip
def test_a_release_resolved_after_the_launch_check_refuses_a_flag_it_lacks(
    typed: tuple[str, ...], version: str, field: str, says: str
) -> None:
    """No --engine-version: the launch check cannot say; the plan at the release resolved later (a log's, as
    `explain` sets it) refuses the flag from the same table, as that release's argparse would."""
    settings = parse_flags("vllm", list(typed), strict=True)
    check_parallel(settings)
    logged = settings.model_copy(update={"engine_version": version})  # as explain sets a log's release
    with pytest.raises(InputError) as err:
        predict(LLAMA8B, logged, gpu_total_bytes=H100, gpu_name="H100")
    assert err.value.field == field and says in str(err.value)


def test_a_release_resolved_later_with_the_flag_plans() -> None:
    settings = parse_flags("vllm", ["-cc.cudagraph_mode=NONE"], strict=True).model_copy(update={"engine_version": "0.12.0"})
    ledger = predict(LLAMA8B, settings, gpu_total_bytes=H100, gpu_name="H100")
    assert ledger.engine.token_capacity > 0


def test_a_release_only_inferred_from_dates_does_not_refuse_the_flag() -> None:
    """A release inferred from a log's dates is the newest out that day, the engine could be older, never newer —
    and a flag first in v0.12.0 on its command line says it is at least v0.12.0: no refusal there."""
    from kvtop.domain.engines.versions import ResolvedVersion, VersionSource

    settings = parse_flags("vllm", ["-cc.cudagraph_mode=NONE"], strict=True).model_copy(update={"engine_version": "0.11.2"})
    dated = ResolvedVersion(text="0.11.2", approximate=True, source=VersionSource.LOG_DATES)
    ledger = predict(LLAMA8B, settings, gpu_total_bytes=H100, gpu_name="H100", version=dated)
    assert ledger.engine.token_capacity > 0

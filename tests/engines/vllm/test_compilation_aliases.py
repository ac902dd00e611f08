"""`--max-cudagraph-capture-size` and `--compilation-config.pass_config.fuse_allreduce_rms` read as vLLM reads them
(compilation_aliases.py).

From vLLM's code: engine/arg_utils.py:1124 at v0.11.1 adds `--max-cudagraph-capture-size` (v0.11.0 has none) and
:1762-1769 copies it into compilation_config.max_cudagraph_capture_size, refusing both at once ("mutually exclusive");
PassConfig.fuse_allreduce_rms exists from v0.12.0 (config/compilation.py:121; :126 at v0.13.0; v0.11.2 has
`enable_fi_allreduce_fusion` only, :113), a pydantic dataclass field read as pydantic's bool. The Kimi-K2.5 GB300 start
(`vllm_command.txt`) passed both: its log's config shows 'max_cudagraph_capture_size': 2048 and 'Enabled custom
fusions: …allreduce_rms'.
"""

from __future__ import annotations

import pytest

from benchmarks.calibration.corpus import load
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm import fusion_workspace as fw
from kvtop.domain.engines.vllm.compilation import graph_config
from kvtop.domain.engines.vllm.flags import VllmFlags
from kvtop.domain.errors import InputError

V0210 = ResolvedVersion(text="0.21.0")
RECORDS = {record.id: record for record in load("vllm")}
MINIMAX_TP4 = "prathmesh-mm25-nvfp4-gb300-tp4-ep-v0210"


def test_the_top_level_flag_sets_the_field() -> None:
    assert graph_config({"max-cudagraph-capture-size": "2048"}, V0210).max_capture_size == 2048


def test_both_spellings_at_once_are_refused_as_vllm_does() -> None:
    flags = {"max-cudagraph-capture-size": "2048", "compilation-config.max_cudagraph_capture_size": "512"}
    with pytest.raises(InputError, match="mutually exclusive"):
        graph_config(flags, V0210)


def test_a_release_without_the_flag_refuses_it() -> None:
    with pytest.raises(InputError, match="from v0.11.1"):
        graph_config({"max-cudagraph-capture-size": "2048"}, ResolvedVersion(text="0.11.0"))


def test_both_are_flags_the_rules_read_not_unmodelled() -> None:
    flags = VllmFlags()
    for spelling in ("--max-cudagraph-capture-size", "--compilation-config.pass_config.fuse_allreduce_rms"):
        assert spelling in flags.read_by_rules and spelling not in flags.unmodelled
    assert flags.as_parsed("--compilation_config.pass_config.fuse_allreduce_rms") == (
        "--compilation-config.pass_config.fuse_allreduce_rms"
    )


def _workspace(value: str, version: str = "0.21.0"):  # type: ignore[no-untyped-def]
    record = RECORDS[MINIMAX_TP4].inputs()
    settings = record.settings.model_copy(
        update={"flags": {**record.settings.flags, "compilation-config.pass_config.fuse_allreduce_rms": value}}
    )
    return fw.fusion_workspace(record.model_copy(update={"settings": settings, "version": ResolvedVersion(text=version)}), 8192)


def test_fuse_allreduce_rms_false_holds_no_workspace_and_true_the_default_s() -> None:
    assert _workspace("false") is None
    found = _workspace("true")
    assert found is not None and found.bytes == 2048 * (1 << 20)  # the default's at v0.21.0 (TP 4, GB300)


def test_fuse_allreduce_rms_true_where_the_default_is_off_is_named_not_modelled() -> None:
    found = _workspace("true", "0.17.0")  # before v0.18.0 the default turns the pass off
    assert found is not None and not found.modelled and found.bytes == 0


def test_fuse_allreduce_rms_before_v0_12_0_is_refused() -> None:
    with pytest.raises(InputError, match="from v0.12.0"):
        _workspace("true", "0.11.2")
    assert _workspace("false", "0.12.0") is None  # v0.12.0's PassConfig has the field (config/compilation.py:121)


def test_fuse_allreduce_rms_reads_what_pydantic_s_bool_reads() -> None:
    """PassConfig is a pydantic dataclass: its bool takes these words in any case (pydantic's lax str → bool) and
    refuses the rest; kvtop agrees word by word."""
    from pydantic import TypeAdapter, ValidationError

    from kvtop.domain.engines.vllm.compilation import stated_pass_config
    from kvtop.domain.engines.vllm.compilation_aliases import fuse_allreduce_rms

    for word in ("true", "False", "YES", "no", "On", "off", "t", "F", "y", "N", "1", "0", "2", "maybe", " yes"):
        flags = {"compilation-config.pass_config.fuse_allreduce_rms": word}
        try:
            expected: bool | None = TypeAdapter(bool).validate_python(word)
        except ValidationError:
            expected = None
        if expected is None:
            with pytest.raises(InputError, match="a pydantic bool"):
                fuse_allreduce_rms(stated_pass_config(flags, V0210), V0210)
        else:
            assert fuse_allreduce_rms(stated_pass_config(flags, V0210), V0210) is expected


def _workspace_whole(config: str, version: str = "0.21.0", **dotted: str):  # type: ignore[no-untyped-def]
    record = RECORDS[MINIMAX_TP4].inputs()
    flags = {**record.settings.flags, "compilation-config": config,
             **{f"compilation-config.{key}": value for key, value in dotted.items()}}  # fmt: skip
    settings = record.settings.model_copy(update={"flags": flags})
    return fw.fusion_workspace(record.model_copy(update={"settings": settings, "version": ResolvedVersion(text=version)}), 8192)


def test_the_whole_json_s_pass_config_is_read_as_the_dotted_field() -> None:
    """`--compilation-config '{"pass_config": {"fuse_allreduce_rms": …}}'` (`-cc`, as_parsed alike) is the same
    PassConfig field: false holds none, true the default's (2,048 MiB at TP 4 on GB300, v0.21.0, as the dotted flag)."""
    assert _workspace_whole('{"pass_config": {"fuse_allreduce_rms": false}}') is None
    found = _workspace_whole('{"pass_config": {"fuse_allreduce_rms": true}, "cudagraph_mode": "FULL_AND_PIECEWISE"}')
    assert found is not None and found.modelled and found.bytes == 2048 * (1 << 20)
    with pytest.raises(InputError, match="from v0.12.0"):
        _workspace_whole('{"pass_config": {"fuse_allreduce_rms": true}}', "0.11.2")
    with pytest.raises(InputError, match="a pydantic bool"):
        _workspace_whole('{"pass_config": {"fuse_allreduce_rms": "maybe"}}')


def test_a_field_not_read_is_named_not_modelled() -> None:
    """The mode (or the pass's own max size) may drop or resize the pass: named, in the fitted remainder."""
    found = _workspace_whole('{"mode": 0}')
    assert found is not None and not found.modelled and found.bytes == 0  # Hopper's words: test_fusion_workspace.py


def test_a_dotted_field_beside_the_whole_json_drops_it_as_vllm_s_parser_does() -> None:
    """FlexibleArgumentParser appends the dotted fields as one more `--compilation-config JSON` after the rest
    (utils/argparse_utils.py:461-500 at v0.33.0, :313-349 at v0.13.0; utils/__init__.py:1936-1978 at v0.11.0), and
    argparse keeps the last: the whole JSON's fields are gone, not merged."""
    flags = {"compilation-config": '{"cudagraph_mode": "PIECEWISE"}', "compilation-config.max_cudagraph_capture_size": "512"}
    config = graph_config(flags, V0210)
    assert config.mode is None and config.max_capture_size == 512
    kept = _workspace_whole('{"pass_config": {"fuse_allreduce_rms": false}}', **{"pass_config.fuse_allreduce_rms": "true"})
    assert kept is not None and kept.bytes == 2048 * (1 << 20)  # the dotted true alone: the default's workspace

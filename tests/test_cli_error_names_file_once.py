"""An input error names the field and the file the operator acts on, once, and says which file is which (session 69).

`kvtop plan` ended every input error " in FILE", FILE being whatever the error came from: "config file not found in
/x.json" (the file IS the fault), "--tp: … use TP 1 or 2 in tests/data/configs/Qwen--Qwen3-32B.json" (the flag is the
fault; the file is the model it was checked against). Now the file a flag names ends the line after ": ", and a file
read for another field is said in brackets with what it is. Expected figures: Qwen3-32B's config.json states 64
attention heads, which TP 3 does not divide (64 = 2^6: TP 1, 2, 4, 8, … do; kvtop offers those up to the heads' KV
grouping it checks).
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from kvtop.domain.errors import InputError, LayoutError
from tests.conftest import CONFIGS

QWEN3_32B = CONFIGS / "Qwen--Qwen3-32B.json"


def _error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["plan", "--engine", "vllm", "--gpu", "H100", *args]) == 2
    return capsys.readouterr().err.strip()


def test_a_missing_file_is_named_as_the_fault(capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")
    assert _error(capsys, "--model", "/x.json") == "kvtop: error: --model: config file not found: /x.json"


def test_a_layout_flag_names_the_model_it_was_checked_against(capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")
    assert _error(capsys, "--model", str(QWEN3_32B), "--tp", "3") == (
        "kvtop: error: --tp: 64 attention heads do not divide over attention TP 3: use TP 1 or 2 "
        f"(model {QWEN3_32B})"
    )


def test_each_part_is_said_once() -> None:
    assert str(InputError("must be an integer", field="num_hidden_layers", source="c.json")) == (
        "num_hidden_layers: must be an integer (in c.json)"
    )
    assert str(InputError("truncated safetensors file", source="m.safetensors")) == (
        "truncated safetensors file: m.safetensors"
    )
    refused = LayoutError("3 does not divide 64", field="--tp", source="c.json")
    assert (str(refused), refused.detail, refused.where) == ("--tp: 3 does not divide 64 (model c.json)",
                                                             "3 does not divide 64", " (model c.json)")  # fmt: skip


@pytest.mark.parametrize("field", ["log", "--engine-log"])
def test_a_log_path_is_named_as_the_fault_under_either_field(tmp_path, field: str) -> None:
    """A log read for `explain` (field 'log') or attached to a node (`--engine-log`) is the file the error is about:
    both end ': FILE' (the engine-log field ended ' (in FILE)' before the session's final read). The file: gzip's
    magic bytes (1f 8b, RFC 1952) followed by no deflate stream, so it does not decompress."""
    from kvtop.sources.engine_logs import read_engine_log

    broken = tmp_path / "engine.log.gz"
    broken.write_bytes(b"\x1f\x8b\x08\x00not deflate")
    with pytest.raises(InputError) as raised:
        read_engine_log(broken, field=field)
    assert str(raised.value).startswith(f"{field}: gzip-compressed") and str(raised.value).endswith(f": {broken}")


def test_the_raiser_says_the_file_is_the_fields_value_not_a_shared_list(tmp_path) -> None:
    """Whether the file ends the line (': FILE') is the raiser's word (`value_is_file`), not a list of field names: the
    same field reads either way, and a reader of a file named by a flag no list held (`--demo-cluster`, which ended
    ' (in FILE)' before session 70) ends ': FILE' as `--demo` does. The file: '{bad' is JSON whose second character
    opens no property name (json's own message)."""
    import kvtop.domain.errors as errors
    from kvtop.sources.json_file import read_json_object

    assert not hasattr(errors, "FILE_FIELDS")
    named = InputError("config file not found", field="--model", source="/x.json", value_is_file=True)
    read_in = InputError("must be an integer", field="--model", source="/x.json")
    assert (named.value_is_file, str(named)) == (True, "--model: config file not found: /x.json")
    assert (read_in.value_is_file, str(read_in)) == (False, "--model: must be an integer (in /x.json)")
    bad = tmp_path / "cluster.json"
    bad.write_text("{bad")
    for flag in ("--demo", "--demo-cluster"):
        with pytest.raises(InputError) as raised:
            read_json_object(bad, "demo cluster", field=flag)
        assert str(raised.value) == (f"{flag}: malformed JSON at line 1, column 2: Expecting property name enclosed "
                                     f"in double quotes: {bad}")  # fmt: skip

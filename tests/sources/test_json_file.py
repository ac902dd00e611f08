"""Config files are read bounded: regular files only, a size cap, and every parse failure one line."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from kvtop.domain.errors import InputError
from kvtop.sources.hub import load_model
from kvtop.sources.json_file import MAX_JSON_BYTES, read_json_object
from kvtop.sources.scenario import load_scenario


def test_a_fifo_is_refused_without_opening_it(tmp_path: Path) -> None:
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)  # opening it for reading would block until a writer came
    with pytest.raises(
        InputError, match=r"not a regular file \(a device, pipe or socket\): a config is read"
    ):
        load_model(str(fifo))


def test_a_device_is_refused() -> None:
    with pytest.raises(InputError, match=r"^--model: not a regular file .*: /dev/zero$"):
        load_model("/dev/zero")


def test_a_file_over_the_cap_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "config.json"
    with big.open("wb") as handle:
        handle.truncate(MAX_JSON_BYTES + 1)  # sparse: nothing is written
    with pytest.raises(InputError, match=r"larger than 16,777,216 bytes: not a config file"):
        read_json_object(big, "config")


@pytest.mark.parametrize(
    ("raw", "pattern"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00", r"^not UTF-8 text at byte 0 \(is it a config file\?\)"),
        (b"[" * 100_000 + b"]" * 100_000, r"^malformed JSON: nested too deeply"),
        (b'{"hidden_size": ' + b"9" * 5000 + b"}", r"^malformed JSON: Exceeds the limit \(4300 digits\)"),
        (b'{"hidden_size": 4096,', r"^malformed JSON at line 1, column 22"),
        (b"[1, 2]", r"^a config must be a JSON object"),
        (b"", r"^empty file: a config file holds one JSON object"),
        (b" \n\t\n", r"^empty file \(whitespace only\): a config file holds one JSON object"),
    ],
)
def test_a_malformed_file_is_one_line(tmp_path: Path, raw: bytes, pattern: str) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(raw)
    with pytest.raises(InputError, match=pattern) as caught:
        read_json_object(path, "config")
    assert str(caught.value).endswith(str(path)) and "\n" not in str(caught.value)


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(b"\xef\xbb\xbf" + b'{"model_type": "llama"}')
    assert read_json_object(path, "config") == {"model_type": "llama"}


def test_an_unreadable_model_or_scenario_names_its_flag(tmp_path: Path) -> None:
    """Every JSON failure names the flag that pointed at the file (a review found plan's and the
    demo's said only 'malformed JSON' or 'config file not found')."""
    trunc = tmp_path / "trunc.log"
    trunc.write_text('{"hidden_size": 4096,')
    with pytest.raises(InputError, match=r"^--model: malformed JSON at line 1, column 22"):
        load_model(str(trunc))
    # a folder: said as one, naming both files a checkpoint folder may hold (was '… not found in DIR/config.json')
    with pytest.raises(InputError, match=r"^--model: the checkpoint folder has no config\.json \(nor Mistral's "
                       rf"params\.json\): {re.escape(str(tmp_path))}$"):  # fmt: skip
        load_model(str(tmp_path))
    with pytest.raises(InputError, match=r"^--demo: malformed JSON at line 1, column 22"):
        load_scenario(str(trunc))


def test_an_empty_config_says_empty_file_naming_its_path(tmp_path: Path) -> None:
    """An operator's empty config.json read "malformed JSON at line 1, column 1" (json's own words for it), which
    sends one looking for a typo: it says "empty file", with the flag and the path."""
    empty = tmp_path / "config.json"
    empty.write_bytes(b"")
    with pytest.raises(InputError) as caught:
        load_model(str(empty))
    assert str(caught.value) == f"--model: empty file: a config file holds one JSON object: {empty}"
    with pytest.raises(InputError, match=rf"^--demo: empty file: a scenario file holds one JSON object: {empty}$"):
        load_scenario(str(empty))

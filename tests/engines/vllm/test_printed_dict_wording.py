"""A speculative config the log printed as a Python dict holding an object's repr (FR1 L8): vLLM's `non-default args`
line prints the parsed namespace's dict (api_utils.py), so a value such as an enum prints as its repr
(`SpeculativeMethod.NGRAM`), which no Python literal reads (log_facts._printed_json leaves it as printed). The verdict
says the log printed it, not that the person's flag is malformed; a typed flag's bad JSON keeps its own words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.domain.deployment_flags import as_json_object
from kvtop.domain.errors import InputError
from tests.engines.vllm.test_compile_cache import CONFIG, T4_START

PRINTED = "'speculative_config': {'method': 'ngram', 'num_speculative_tokens': 3, 'x': SpeculativeMethod.NGRAM}}"


def test_a_printed_repr_is_said_as_the_logs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "start.log"
    log.write_text(T4_START.replace("'enable_prefix_caching': False}", f"'enable_prefix_caching': False, {PRINTED}"))
    args = ["explain", str(log), "--model", str(CONFIG), "--no-calibration-store", "--json", "--engine-version", "0.30.0"]
    assert main(args) == 0
    said = json.dumps(json.loads(capsys.readouterr().out))
    assert "a Python dict as an engine's log prints its arguments" in said
    assert "give the launch's --speculative-config" in said and "is not JSON (" not in said


def test_a_typed_flags_bad_json_keeps_its_words() -> None:
    with pytest.raises(InputError, match=r"is not JSON \(Expecting property name"):
        as_json_object("{'method': 'ngram'}", "--speculative-config", '{"method": "eagle3"}')
    with pytest.raises(InputError, match=r"is not JSON \(Expecting property name .* 1: .{method"):
        as_json_object("{method: ngram}", "--speculative-config", '{"method": "eagle3"}')

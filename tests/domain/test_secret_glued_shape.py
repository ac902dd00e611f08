"""An issuer's token glued to a short flag (`-hfhf_…`: llama.cpp's `-hf` is `--hf-repo`, so no engine declares it
secret) is masked wherever kvtop shows the flag: the plan's note of flags it does not know, its JSON, and free text.
Before, the word boundary `_TOKENS` needs before `hf_` was missing, and the whole key was echoed."""

from __future__ import annotations

import pytest

from kvtop.cli import main
from kvtop.domain.secret_shapes import mask_secret_shapes
from tests.conftest import CONFIGS

LLAMA = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
KEY = "hf_Ab3dEfGh1jKlMn0pQrStUvWxYz1234567"  # the Hugging Face shape: hf_ and 34 mixed characters


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"-hf{KEY}", "-hfhf_***"),
        ("-hfhf_abc", "-hfhf_***"),  # a short key: the glued prefix alone says what it is
        (f"llama-server -m x.gguf -hf{KEY} -c 4096", "llama-server -m x.gguf -hfhf_*** -c 4096"),
        ("-xsk-Zq7vK2pLw9", "-xsk-***"),
        (f'"-hf{KEY}"', '"-hfhf_***"'),
    ],
)
def test_a_token_glued_to_a_short_flag_is_masked(text: str, shown: str) -> None:
    assert mask_secret_shapes(text) == shown


@pytest.mark.parametrize(
    "text",
    ["-hf hf_transfer", "--disk-cache-size-gb-2048", "-disk-cache", "-task-name", "x-hf_abc", "--dish_abc", "-sm layer"],
)
def test_words_that_only_hold_a_prefix_stay(text: str) -> None:
    assert mask_secret_shapes(text) == text


@pytest.mark.parametrize("engine_cmd", [f"llama-server -m {LLAMA} -hf{KEY}", f"vllm serve {LLAMA} -hfhf_abc"])
def test_plan_never_echoes_a_glued_token(capsys: pytest.CaptureFixture[str], engine_cmd: str) -> None:
    for as_json in ([], ["--json"]):
        assert main(["plan", "--cmd", engine_cmd, "--gpu", "H100", "--no-calibration-store", *as_json]) == 0
        out, err = capsys.readouterr()
        assert KEY not in out + err and "hf_abc" not in out + err
        assert "-hfhf_***" in out + err  # the flag still named, its key not


GOOGLE = "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW"  # Google's shape: AIza and 35 characters


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"-t1{KEY}", "-t1***"),  # a flag holding a digit
        (f"-token{KEY}", "-token***"),  # a flag longer than four letters
        (f"-k{GOOGLE}", "-k***"),  # an issuer `_GLUED` does not list
        ("-tAKIAIOSFODNN7EXAMPLE", "-t***"),  # AWS's documented example key id
    ],
)
def test_a_whole_token_of_any_shape_glued_to_a_flag_is_masked(text: str, shown: str) -> None:
    assert mask_secret_shapes(text) == shown


@pytest.mark.parametrize("engine_cmd", [f"python -m sglang.launch_server --model-path {LLAMA} -t1{KEY}",
                                        f"llama-server -m {LLAMA} -token{KEY}"])  # fmt: skip
def test_plan_never_echoes_a_token_glued_to_a_longer_flag(capsys: pytest.CaptureFixture[str], engine_cmd: str) -> None:
    """Both were echoed whole in the note of flags kvtop does not know (and its JSON) before."""
    for as_json in ([], ["--json"]):
        assert main(["plan", "--cmd", engine_cmd, "--gpu", "H100", "--no-calibration-store", *as_json]) == 0
        out, err = capsys.readouterr()
        assert KEY not in out + err and KEY[3:] not in out + err

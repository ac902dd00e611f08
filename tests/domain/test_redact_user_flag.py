"""curl's `-u/--user NAME:PASSWORD` shows no password, on a command line and in a line of text (session 61).

A co-tenant's or a wrapper script's `curl -u admin:PASSWORD http://prom:9090/…` was shown whole: the password has
no issuer's shape and no secret's name beside it, only its place after the colon (curl's manual page: "-u, --user
<user:password>", "-U, --proxy-user <user:password>"). A uid:gid (`docker run -u 1000:1000`) stays.
"""

from __future__ import annotations

import pytest

from kvtop.domain.redact import redact_argv
from kvtop.domain.secret_shapes import mask_secret_shapes
from kvtop.domain.secret_text import redact_text

PASSWORD = "Q7vXk2pLm9"


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        (["curl", "-u", f"admin:{PASSWORD}", "http://prom:9090"], ("curl", "-u", "admin:***", "http://prom:9090")),
        (["curl", f"--user=admin:{PASSWORD}", "http://x"], ("curl", "--user=admin:***", "http://x")),
        (["curl", "--proxy-user", f"p:{PASSWORD}", "http://x"], ("curl", "--proxy-user", "p:***", "http://x")),
        (["curl", "-U", f"p:{PASSWORD}"], ("curl", "-U", "p:***")),
        # what stays: a uid:gid, a bare user name, python's unbuffered switch
        (["docker", "run", "-u", "1000:1000", "img"], ("docker", "run", "-u", "1000:1000", "img")),
        (["curl", "-u", "admin", "http://x"], ("curl", "-u", "admin", "http://x")),
        (["python", "-u", "serve.py"], ("python", "-u", "serve.py")),
    ],
)
def test_a_user_flag_s_password_is_masked_on_a_command_line(argv: list[str], shown: tuple[str, ...]) -> None:
    assert redact_argv(argv) == shown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"bash -c 'curl -u admin:{PASSWORD} http://prom:9090/api'", "bash -c 'curl -u admin:*** http://prom:9090/api'"),
        (f"curl --user admin:{PASSWORD} http://x", "curl --user admin:*** http://x"),
        (f'curl -U "proxy:{PASSWORD}" http://x', 'curl -U "proxy:***" http://x'),
        ("docker run -u 1000:1000 vllm/vllm-openai", "docker run -u 1000:1000 vllm/vllm-openai"),
    ],
)
def test_a_user_flag_s_password_is_masked_in_text_and_at_the_last_mask(text: str, shown: str) -> None:
    assert redact_text(text) == shown
    assert mask_secret_shapes(text) == shown  # where every command prints and the TUI draws



@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (f"admin:{PASSWORD}", "admin:***"),
        (f"ops@example.com:{PASSWORD}", "ops@example.com:***"),  # an e-mail login, common for curl's -u
        (f"corp/ops:{PASSWORD}", "corp/ops:***"),  # a domain-qualified login
        ("1000:1000", "1000:1000"),
        ("admin", "admin"),
    ],
)
def test_a_command_line_and_a_line_of_text_mask_the_same_values(value: str, shown: str) -> None:
    """One rule for both: a login holding '@' or '/' lost its password on a command line but not in text."""
    assert redact_argv(["curl", "-u", value, "http://x"])[2] == shown
    assert redact_text(f"curl -u {value} http://x") == f"curl -u {shown} http://x"
    assert mask_secret_shapes(f"curl --user={value} http://x") == f"curl --user={shown} http://x"

"""Small modules with one job: no module of kvtop's is over 500 lines (the project's rule).

kvtop/domain/redact.py had grown to 508 lines holding three jobs (which names are secret, free-text redaction,
argv and the self-redacting values); it is now secret_names.py, secret_text.py and redact.py.
"""

from __future__ import annotations

from pathlib import Path

MAX_LINES = 500
KVTOP = Path(__file__).resolve().parent.parent / "kvtop"


def test_no_module_is_over_500_lines() -> None:
    sizes = {path.relative_to(KVTOP.parent).as_posix(): len(path.read_text().splitlines()) for path in KVTOP.rglob("*.py")}
    over = {path: lines for path, lines in sizes.items() if lines > MAX_LINES}
    assert not over, f"split these by job: {over}"

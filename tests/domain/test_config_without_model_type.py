"""A config with no model_type (`{}`: no model's config.json) is said to be that, not "a generic reading of
'generic'": the file names no model_type, and a generic reading needs the standard decoder fields (hidden_size, num_attention_heads, …)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.domain.errors import InputError
from kvtop.sources.hub import load_model


@pytest.mark.parametrize(
    ("config", "field"),
    [({}, "hidden_size"), ({"hidden_size": 4096, "intermediate_size": 11008}, "num_attention_heads")],
)
def test_no_model_type_is_named(tmp_path: Path, config: dict[str, int], field: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    with pytest.raises(InputError) as caught:
        load_model(str(path))
    said = str(caught.value)
    assert (
        said.startswith(f"{field}: missing")
        and "config.json has no model_type" in said
        and "'generic'" not in said
    )


def test_a_typed_config_keeps_its_generic_wording(tmp_path: Path) -> None:
    path = tmp_path / "frob.json"
    path.write_text('{"architectures": ["FrobForCausalLM"], "model_type": "frob"}')
    with pytest.raises(InputError, match=r"a generic reading of 'frob' needs it"):
        load_model(str(path))

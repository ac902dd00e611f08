"""`model_from_config`: a Hugging Face `config.json` (as a dict) read into one frozen `ModelSpec`.

As transformers would: every field kvtop reads is validated at the door (`config_schema`), a field the
file leaves out takes the class default of its `model_type`, and the family's entry in
`kvtop.domain.architectures` (data, read by one reader) turns fields into facts. A bad field is an
`InputError` naming it and the file; a `model_type` without an entry is read generically where its
fields allow (and says so), else an `UnsupportedModelError` names the field that stops it, the nearest
entry and `--model-family`.

It lives beside `kvtop.domain.model`, not in it: the architecture entries import the model's types, so
the door that calls them sits above both (the import graph has no model <-> architectures circle).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvtop.domain.architectures.config_reader import read_config
from kvtop.domain.config_override import ConfigOverride
from kvtop.domain.model import ModelSpec


def model_from_config(
    config: dict[str, Any],
    *,
    source: str = "config.json",
    name: str | None = None,
    hf_quant_config: dict[str, Any] | None = None,
    hf_source: str = "hf_quant_config.json",
    family: str | None = None,
    named_configs: Mapping[str, Mapping[str, Any]] | None = None,
    override: ConfigOverride | None = None,
) -> ModelSpec:
    """Normalise a Hugging Face `config.json` into a ModelSpec, through its architecture entry.

    `family` forces the entry to read the config as (`--model-family`); the config's own class defaults
    then do not apply, so every field that entry reads must be in the file. `named_configs`: the configs of the
    checkpoints kvtop holds, by Hub id (`kvtop.sources.hub.named_text_configs`), for a language model a config
    names by id (Ultravox's text_model_id; architectures/named_text.py). `override`: a launch's override of the
    config (`ConfigOverride`, SGLang's --json-model-override-args), merged in before anything is read, and said in
    the model's notes.
    """
    if override is None:
        return read_config(
            config, source=source, name=name, hf_quant_config=hf_quant_config, hf_source=hf_source, family=family,
            named_configs=named_configs,
        )
    spec = read_config(
        override.apply(config), source=f"{source} with {override.flag}", name=name, hf_quant_config=hf_quant_config,
        hf_source=hf_source, family=family, named_configs=named_configs,
    )
    return spec.model_copy(update={"read_from": (*spec.read_from, override.said)})

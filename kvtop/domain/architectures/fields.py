"""A validated text section with its file, field prefix and entry: the values an architecture entry reads.

Entries name config fields as strings; `Fields` reads them from the typed `TextConfig` (every field kvtop
reads is bounded there), records which class defaults were used, and turns a missing or malformed value
into an `InputError` naming the field. A field may be one integer or a list with one per layer (real
checkpoints have both: `moe_layer_freq`, `intermediate_size`): `per_layer` reads either. A dotted name reads a
field of a nested section (DBRX's `ffn_config.moe_num_experts`), typed in the schema like the rest.
"""

from __future__ import annotations

from typing import Any

from kvtop.domain.config_schema import TextConfig
from kvtop.domain.errors import InputError
from kvtop.domain.wording import with_article

# Every real config states these: a class default for them (transformers' 32 layers, 4096 wide)
# would describe another model than the checkpoint, so their absence is an error, not a default.
STRUCTURAL_FIELDS = frozenset({"hidden_size", "num_hidden_layers"})


class Fields:
    """The text section an entry reads, with where it came from (for errors) and the defaults it used."""

    def __init__(
        self,
        text: TextConfig,
        *,
        source: str,
        prefix: str,
        model_type: str,
        defaulted: frozenset[str] = frozenset(),
        structural_defaults: bool = False,
        generic: bool = False,
        untyped: bool = False,
    ) -> None:
        self.text = text
        self.source = source
        self.prefix = prefix
        self.model_type = model_type
        self._defaulted = defaulted
        # a wrapper's text section built from its class defaults (LlavaConfig: LlamaConfig()) may rely on
        # them for its shape too (llava-1.5's text_config states neither hidden_size nor num_hidden_layers)
        self._structural_defaults = structural_defaults
        self._who = f"a generic reading of {model_type!r}" if generic else f"{with_article(model_type)} config"
        # no model_type in the file (`{}`, a file that is not a model's config): the error says so, not 'generic'
        self._untyped = untyped
        self._defaults_read: dict[str, Any] = {}

    def get(self, name: str) -> Any:
        """The field's value; a dotted name reads a nested section (DBRX's `attn_config.kv_n_heads`)."""
        value: Any = self.text
        for part in name.split("."):
            value = getattr(value, part) if value is not None else None
        if name in self._defaulted and value is not None:
            self._defaults_read[name] = value
        return value

    def stated(self, name: str) -> bool:
        """The file itself gives the field (not a class default)."""
        return name in self.text.model_fields_set and name not in self._defaulted

    def defaults_read(self) -> tuple[tuple[str, Any], ...]:
        """(name, value) for each default a reader used (the file left the field out), in the order of names."""
        return tuple(sorted(self._defaults_read.items()))

    def need(self, name: str) -> int:
        """A count the model cannot be read without (the model's shape: never a class default)."""
        value = self.get(name)
        if value is None or (
            name in STRUCTURAL_FIELDS and name in self._defaulted and not self._structural_defaults
        ):
            raise self._missing(name)
        if isinstance(value, list):
            raise self.error(name, "must be one integer here, not a list per layer")
        return int(value)

    def _missing(self, name: str) -> InputError:
        """A needed field the file lacks; where it has no model_type either, that is said first (`{}` is no model's
        config, and 'a generic reading of generic' would not say so)."""
        if self._untyped:
            return self.error(name, "missing, and config.json has no model_type: is this a model's config.json? "
                              "(read without one, kvtop needs the standard decoder fields: hidden_size, num_hidden_layers, "
                              "num_attention_heads, intermediate_size, vocab_size)")  # fmt: skip
        return self.error(name, f"missing ({self._who} needs it)")

    def opt(self, name: str, default: int = 0) -> int:
        value = self.get(name)
        if isinstance(value, list):
            raise self.error(name, "must be one integer here, not a list per layer")
        return default if value is None else int(value)

    def flag(self, name: str, default: bool = False) -> bool:
        value = self.get(name)
        return default if value is None else bool(value)

    def per_layer(self, name: str, layers: int, default: int | None = None) -> tuple[int, ...]:
        """One integer for every layer: a list with one per layer as stated, or one integer repeated."""
        value = self.get(name)
        if value is None:
            if default is None:
                raise self._missing(name)
            return (default,) * layers
        if isinstance(value, list):
            if len(value) != layers:
                raise self.error(name, f"must list one value per layer ({layers}), not {len(value)}")
            return tuple(int(v) for v in value)
        return (int(value),) * layers

    def error(self, name: str, message: str) -> InputError:
        return InputError(message, field=self.prefix + name, source=self.source)

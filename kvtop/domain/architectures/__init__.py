"""Architectures as data: one entry per model family, read by one reader into a `ModelSpec`.

`config_reader.read_config` is the door (`kvtop.domain.model_config.model_from_config` calls it); `registry` holds THE
table of entries (`table_*.py`), `description` the types an entry is made of, and the `*_rules` modules the
small rule objects entries pick from (layer kinds, experts, recurrent state). A model_type without an entry is
read generically where its fields allow (`generic`).
"""

"""Every finding rule has a title a person reads (the pane, `diagnose` and `explain` text); the id stays the JSON's."""

from kvtop.domain.diagnose_findings import RULE_TITLES, Finding, Rule, Severity


def test_every_rule_has_a_title_in_words_and_no_two_share_one() -> None:
    assert set(RULE_TITLES) == set(Rule)  # a new rule states its title, or this fails
    titles = list(RULE_TITLES.values())
    assert len(set(titles)) == len(titles)
    assert not [title for title in titles if "_" in title or title != title.strip() or not (title[0].isupper() or title[0].isdigit())]


def test_a_finding_reads_its_title_and_dumps_its_id() -> None:
    finding = Finding(rule=Rule.BF16_KV_WHERE_FP8_SUPPORTED, severity=Severity.INFO, summary="s", fix="--kv-cache-dtype fp8")
    assert finding.title == "16-bit KV where the engine supports FP8 KV"
    dumped = finding.model_dump(mode="json")
    assert dumped["rule"] == "bf16_kv_where_fp8_supported" and "title" not in dumped  # the JSON contract is unchanged

"""Secrets by their shape: what a credential looks like, whatever name it goes by (or none).

`kvtop.domain.redact` masks the value a secret *name* gives (`--api-key X`, `HF_TOKEN=X`). A secret
also travels without a telling name: a positional argument, a process title, a Prometheus label,
a quoted log line, an error message. Issuers give their tokens recognisable forms, and those are
masked wherever they stand (`mask_secret_shapes`):

- a prefix an issuer chose, followed by a random body: Hugging Face `hf_`, OpenAI and Anthropic
  `sk-`, NVIDIA `nvapi-`, GitHub `ghp_`/`github_pat_`, GitLab `glpat-`, Slack `xoxb-`, Google `AIza`,
  AWS key ids `AKIA…`, Stripe, npm, PyPI, Vault, Databricks and others (`_PREFIXED`);
- a JSON Web Token (three base64url parts, the first two starting `eyJ`) and a PEM private key;
- the secret part of a webhook URL (Slack, Discord) and a Telegram bot token;
- a URL's user-info (`user:password@`: `kvtop.domain.secret_userinfo`).

A body must look random (letters of both cases or digits among letters, as generated tokens do),
so words that happen to start alike (`sk-learn-model-card`, `hf_transfer_enabled`) stay readable.

`looks_random` is the test for a value under a *loose* key-like name (`--hf-tok X`, `MY_APIKEY2=X`),
which `kvtop.domain.redact` applies: long, of several character classes or high entropy, and not
a number, a size, a path, a model id, a UUID or a hex digest (revisions, GPU UUIDs stay visible).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from kvtop.domain.secret_userinfo import MASK, mask_user_flag_password, mask_userinfo

_B = r"(?<![A-Za-z0-9])"  # a token starts at a boundary (not inside a longer word; after - or _ it may)
_E = r"(?![A-Za-z0-9_\-])"  # ...and ends at one
_BODY = r"[A-Za-z0-9_\-]"
_AWS_PREFIX = r"(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA|ABIA|ACCA)"


@dataclass(frozen=True)
class Shape:
    """One issuer's token shape: its prefix (a pattern; "" where it has none), the pattern of the body after it, whether
    the body must look random, whether a value glued to a short flag is masked after the prefix whatever its shape
    (`_GLUED`), whether a token cut short is masked after its prefix (`_CUT`: a prefix no word starts with, a random
    body), and what `_TRIGGERS` looks for (its prefix, unless it has none or one the first look finds faster is said:
    Stripe's four prefixes' alternation made it twice as slow over a megabyte)."""

    issuer: str
    prefix: str
    body: str
    random: bool = False
    glued: bool = False
    cut: bool = False
    trigger: str = ""

    def __post_init__(self) -> None:
        # `_GLUED` and `_CUT` join the prefixes of the shapes that say so: an empty one would match before any word
        if (self.glued or self.cut) and not self.prefix:
            raise ValueError(f"{self.issuer}: a glued or cut shape needs a prefix")

    @property
    def looked_for(self) -> str:
        return self.trigger or self.prefix


_PREFIXED: tuple[Shape, ...] = (
    Shape("Hugging Face", r"hf_", r"[A-Za-z0-9]{30,64}", random=True, glued=True, cut=True),
    Shape("Hugging Face (org)", r"api_org_", r"[A-Za-z0-9]{30,64}", random=True, glued=True, cut=True),
    Shape("OpenAI / Anthropic / DeepSeek", r"sk-", rf"(?:proj-|svcacct-|admin-|ant-(?:api|admin|sid)\d\d-)?{_BODY}{{20,200}}", random=True, glued=True, cut=True),
    Shape("NVIDIA API", r"nvapi-", rf"{_BODY}{{20,128}}", glued=True, cut=True),
    Shape("GitHub", r"gh[pousr]_", r"[A-Za-z0-9]{30,255}", glued=True, cut=True),
    Shape("GitHub fine-grained", r"github_pat_", r"[A-Za-z0-9_]{22,255}", glued=True, cut=True),
    Shape("GitLab", r"gl(?:pat|dt|rt|ft|cbt|imt|ptt|agent|oas)-", rf"{_BODY}{{20,128}}", glued=True, cut=True),
    Shape("Slack", r"xox[abposre]-", r"[A-Za-z0-9\-]{10,255}", glued=True, cut=True),
    Shape("Slack app", r"xapp-", r"\d-[A-Za-z0-9\-]{10,255}"),
    Shape("Google API", r"AIza", r"[0-9A-Za-z_\-]{35}", cut=True),
    Shape("Google OAuth", r"ya29\.", r"[0-9A-Za-z_\-]{20,2048}", cut=True),
    Shape("Google OAuth client", r"GOCSPX-", r"[0-9A-Za-z_\-]{20,64}"),
    Shape("AWS key id", _AWS_PREFIX, r"[A-Z2-7]{16}", cut=True),
    Shape("Stripe", r"(?:sk|rk|pk|whsec)_(?:live|test)_", r"[A-Za-z0-9]{16,255}", trigger=r"_live_|_test_"),
    Shape("npm", r"npm_", r"[A-Za-z0-9]{36}", glued=True, cut=True),
    Shape("PyPI", r"pypi-AgE", rf"{_BODY}{{40,512}}"),
    Shape("Vault", r"hv[sbr]\.", r"[A-Za-z0-9_\-]{20,512}", glued=True, cut=True),
    Shape("Databricks", r"dapi", r"[0-9a-f]{32}(?:-\d)?", cut=True),
    Shape("DigitalOcean", r"do[por]_v1_", r"[a-f0-9]{64}"),
    Shape("SendGrid", r"SG\.", rf"{_BODY}{{16,64}}\.{_BODY}{{16,128}}"),
    Shape("Replicate", r"r8_", r"[A-Za-z0-9]{30,64}", random=True, glued=True, cut=True),
    Shape("Groq", r"gsk_", r"[A-Za-z0-9]{40,64}", random=True, glued=True, cut=True),
    Shape("Perplexity", r"pplx-", r"[A-Za-z0-9]{40,64}", random=True, glued=True, cut=True),
    Shape("Together", r"tgp_v1_", rf"{_BODY}{{30,64}}"),
    Shape("Fireworks", r"fw_", r"[A-Za-z0-9]{20,64}", random=True),
    Shape("LangSmith", r"lsv2_", r"(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"),
    Shape("Tavily", r"tvly-", r"[A-Za-z0-9]{20,64}", random=True, glued=True, cut=True),
    Shape("Notion", r"", r"(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,64})", random=True, trigger=r"secret_|ntn_"),
    Shape("Linear", r"lin_api_", r"[A-Za-z0-9]{40}"),
    Shape("Postman", r"PMAK-", r"[a-f0-9]{24}-[a-f0-9]{34}"),
    Shape("Shopify", r"shp(?:at|ss|ca|pa)_", r"[a-fA-F0-9]{32}"),
    Shape("Atlassian", r"ATATT3", rf"{_BODY}{{50,300}}"),
    Shape("Doppler", r"dp\.(?:pt|st|sa|ct|scim|audit)\.", r"[A-Za-z0-9]{30,64}"),
    Shape("Terraform Cloud", r"", rf"[A-Za-z0-9]{{14}}\.atlasv1\.{_BODY}{{60,100}}", trigger=r"atlasv1"),
    Shape("Mailgun", r"key-", r"[0-9a-f]{32}"),
    Shape("Twilio", r"SK", r"[0-9a-f]{32}", trigger=r"SK[0-9a-f]"),
    Shape("age", r"AGE-SECRET-KEY-1", r"[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    Shape("JSON Web Token", r"eyJ", r"[A-Za-z0-9_\-]{8,4096}\.eyJ[A-Za-z0-9_\-]{8,8192}\.[A-Za-z0-9_\-]{8,2048}", cut=True),
    Shape("Telegram bot", r"", r"\d{8,10}:AA[A-Za-z0-9_\-]{33}", trigger=r":AA"),
)  # fmt: skip
_PEM = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----.*?(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----|\Z)", re.S)
# Webhook URLs carry their secret in the path: keep the host, mask the rest.
_WEBHOOK = re.compile(
    r"(?P<keep>https?://(?:hooks\.slack\.com/(?:services|workflows|triggers)|(?:discord(?:app)?\.com|canary\.discord\.com)"
    r"/api/webhooks|outlook\.office\.com/webhook|[a-z0-9\-]+\.webhook\.office\.com/webhookb2)/)(?P<secret>[^\s\"'`<>]+)",
    re.IGNORECASE,
)
_SHAPES = "(?:" + "|".join(f"(?P<g{i}>{shape.prefix}{shape.body})" for i, shape in enumerate(_PREFIXED)) + ")"
_TOKENS = re.compile(_B + _SHAPES + _E)
_RANDOM_BODY = tuple(shape.random for shape in _PREFIXED)
# Cheap first look: a text holding none of these holds no shaped secret (every shape's prefix or trigger, a PEM key;
# a webhook URL has its own, `_WEBHOOK` being read in any case)
_TRIGGERS = re.compile("|".join(shape.looked_for for shape in _PREFIXED) + "|PRIVATE KEY")


def _body_is_random(token: str) -> bool:
    """A generated token's body: letters of both cases, or digits among letters (never a word)."""
    body = re.split(r"[_\-.]", token, maxsplit=1)[-1] if re.search(r"[_\-.]", token) else token
    upper, lower, digit = (any(test(c) for c in body) for test in (str.isupper, str.islower, str.isdigit))
    return (upper and lower) or (digit and (upper or lower) and sum(c.isdigit() for c in body) >= 2)


def _mask_token(match: re.Match[str], keep: str = "") -> str:
    """A `_SHAPES` token masked (after `keep`), unless its issuer's body must look random and does not."""
    index, token = next((int(name[1:]), value) for name, value in match.groupdict().items() if name[0] == "g" and value)
    if _RANDOM_BODY[index] and not _body_is_random(token):
        return match.group()
    return keep + MASK


# A token cut short where the text ends or a `…` marks the cut (the kernel keeps 15 characters of a process's
# name; a message is cut to a line, a quoted value to 40 characters): its issuer's prefix and what is left
# of a random body.
_CUT = re.compile(
    _B + "(?P<prefix>" + "|".join(shape.prefix for shape in _PREFIXED if shape.cut) + r")(?P<body>[A-Za-z0-9_\-]{4,})(?=…|\Z)"
)


def _mask_cut(match: re.Match[str]) -> str:
    """A cut token's random-looking body masked after its prefix; an AWS key id's body is upper case and 2-7 only, so
    its head is masked by that alphabet ('AKIAIOSFOD…', a process name the kernel cut to 15 characters)."""
    body = match.group("body")
    randomish = (any(c.isupper() for c in body) and any(c.islower() for c in body)) or sum(c.isdigit() for c in body) >= 2
    aws = _AWS_HEAD.fullmatch(match.group("prefix") + body) is not None
    return match.group("prefix") + MASK if randomish or aws else match.group()


_AWS_HEAD = re.compile(_AWS_PREFIX + r"[A-Z2-7]{4,15}")


# An issuer's token glued to a short flag (`-hfhf_…`, `-xsk-…`): no word boundary before its prefix, so `_TOKENS`
# and `_CUT` miss it. A short flag's letters run straight into an issuer's prefix only where a value was glued on,
# so the tail is masked after its prefix whatever its length or shape (a key typed short is still one).
_GLUED = re.compile(
    r"(?<![^\s\"'`=(\[{,])(?P<flag>-[A-Za-z]{1,4}?)(?P<prefix>"
    + "|".join(shape.prefix for shape in _PREFIXED if shape.glued)
    + r")(?P<body>[A-Za-z0-9_\-.]+)"
    + _E
)


def _mask_glued(match: re.Match[str]) -> str:
    """`_GLUED`'s tail masked; `sk-` ends English words (`-task-name`, `-disk-cache`), so there only a body that is
    not words is taken for a key."""
    if match.group("prefix") == "sk-" and is_wordy(match.group("body")):
        return match.group()
    return match.group("flag") + match.group("prefix") + MASK


# A whole token of any shape glued to a flag (`-kAIza…`, `-t1hf_…`, `-tokenhf_…`, `-keyJ…`): `_GLUED` knows only
# some prefixes and a flag of letters; this takes every `_SHAPES` token after any flag's letters and digits.
_GLUED_SHAPES = re.compile(r"(?P<flag>--?[A-Za-z][A-Za-z0-9]{0,23}?)" + _SHAPES + _E)
_FLAG_WORD = re.compile(r"(?<![^\s\"'`=(\[{,])--?[A-Za-z][^\s\"'`]*")  # a flag and what is glued to it


def _mask_glued_shapes(word: re.Match[str]) -> str:
    """`_GLUED_SHAPES` in one flag's word, looked for only where an issuer's prefix follows its first letter."""
    text = word.group()
    if not _TRIGGERS.search(text, 2):
        return text
    return _GLUED_SHAPES.sub(lambda match: _mask_token(match, match.group("flag")), text, count=1)


def mask_secret_shapes(text: str) -> str:
    """`text` with every token of a known secret shape replaced by `***` (whatever names it), a URL's
    user-info (`secret_userinfo`), and a token cut short at the end of the text masked after its issuer's prefix."""
    if "@" in text or "://" in text:
        text = mask_userinfo(text)
    text = mask_user_flag_password(text)
    if _TRIGGERS.search(text):
        text = _CUT.sub(_mask_cut, _TOKENS.sub(_mask_token, text))
        text = _FLAG_WORD.sub(_mask_glued_shapes, _GLUED.sub(_mask_glued, text))
        if "PRIVATE KEY" in text:
            text = _PEM.sub(MASK, text)
    if "hook" in text.lower():
        text = _WEBHOOK.sub(lambda m: m.group("keep") + MASK, text)
    return text


def has_secret_shape(text: str) -> bool:
    """Whether `text` holds a token of a known secret shape."""
    return mask_secret_shapes(text) != text


# --- values that are figures, switches, paths or words (benign shapes) ------------------------

_NUMBERS = re.compile(
    r"[+-]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?(?:\s*[,:x]\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)*"
)
_SIZE_VALUE = re.compile(r"\d+(?:\.\d+)?\s*(?:[KMGTP]i?B?|B|[kmgt]i?b)", re.IGNORECASE)
_SWITCHES = frozenset({"true", "false", "yes", "no", "on", "off", "none", "null", "auto", "default", "enabled", "disabled"})
# One segment of a word: how people name things (`fp8`, `e4m3`, `Llama`, `70B`, `v2`, `lru`), never the
# case-mixed run of a generated token (`Zq7vK2pL`).
_WORDY = re.compile(r"[A-Za-z][a-z]*\d*[a-z]{0,3}|[A-Z]+\d*[a-z]{0,1}|\d+[A-Za-z]{0,3}\d*|v\d+(?:\.\d+)*")
_SEGMENTS = re.compile(r"[_\-.:+=,@]")
_PATH_START = re.compile(r"(?:/|\./|\.\./|~/)")
_LONG_HEX = re.compile(r"[0-9a-fA-F]{16,}")


def is_wordy(value: str) -> bool:
    """Words joined by separators (`fp8_e4m3`, `meta-llama`, `Llama-3-70B-Instruct`, `lru`), not a token."""
    parts = [part for part in _SEGMENTS.split(value) if part]
    return (
        bool(parts)
        and len(value) <= 64
        and all(len(part) <= 5 or _WORDY.fullmatch(part) for part in parts)  # `e4m3`: too short for a token
        and not _LONG_HEX.search(value)
    )


def is_path(value: str) -> bool:
    """A file path or a model id (`/models/x`, `./a.json`, `meta-llama/Meta-Llama-3-8B`): where something is."""
    if "://" in value or any(c.isspace() for c in value):
        return False
    if _PATH_START.match(value):
        return True
    parts = value.split("/")
    return len(parts) >= 2 and all(part and is_wordy(part) for part in parts)


def is_figure(value: str) -> bool:
    """A number, a list of numbers, a size, or a switch (`4096`, `0.9`, `1,2,4`, `80GiB`, `true`, `auto`)."""
    return bool(_NUMBERS.fullmatch(value) or _SIZE_VALUE.fullmatch(value)) or value.lower() in _SWITCHES


def is_benign_value(value: str) -> bool:
    """A figure, a switch, a path or a word: a setting an operator reads, never a generated secret."""
    value = value.strip("\"'`")
    return is_figure(value) or is_path(value) or is_wordy(value)


# --- values that look random (for loose key-like names) --------------------------------------

_HEX = re.compile(r"[0-9a-fA-F]+")
_UUID = re.compile(r"(?:GPU-|MIG-)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def looks_random(value: str) -> bool:
    """Whether `value` looks generated (a key, a token, a password): long, not a benign shape (a figure,
    a path, words), not a UUID, and of three character classes or high entropy (hex digests stay)."""
    value = value.strip("\"'`")
    if len(value) < 16 or len(value) > 4096 or any(c.isspace() for c in value) or "://" in value:
        return False
    if is_benign_value(value) or _UUID.fullmatch(value) or _HEX.fullmatch(value):
        return False
    classes = sum(
        any(test(c) for c in value) for test in (str.isupper, str.islower, str.isdigit, lambda c: not c.isalnum())
    )
    return classes >= 3 or _entropy_bits(value) >= 3.5


def _entropy_bits(value: str) -> float:
    """Shannon entropy per character."""
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())

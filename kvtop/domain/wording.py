"""How the domain writes a byte figure, and the article before a figure or a name, inside the sentences it builds
(evidence, notes, causes).

This is the one GiB formatter, for the domain's sentences and the views alike (kvtop/units.py's fmt_gib calls
`gib`): GiB (2**30 bytes), two decimals, a thousands comma, a typographic minus, the unit always stated (`gib`,
`gib_range`, `gib_about`); a size echoed back as an engine's flag value is written in the flag's own unit
(`gib_setting`). A figure an engine or a driver sizes in MiB (a workspace, a page, a staging buffer, a log's KV
buffer) is written by `mib`, the same figure in MiB (2**20 bytes).
"""

from __future__ import annotations

GIB = 1 << 30  # the one GiB, MiB and GB every module reads (kvtop/units.py re-exports them for views)
MIB = 1 << 20
GB = 10**9  # decimal, as a GB figure beside a GiB one is written (kvtop/units.py's fmt_gb)
#: A launch that takes no engine flag, every setting the engine's default: `plan`'s fitting line, `--layouts` and the
#: planner's flags line and `c` say it so (the planner once said "(engine defaults)", a third wording).
DEFAULTS_SAID = "the engine's defaults"
#: Where a view reads a node through Prometheus, its rank ledger is not there: the exporter publishes figures, never the
#: ledger behind them. Every view says its absence so (the node header, the rank ledger, a GPU row's predicted bar, Enter
#: and `p` in the cluster view; session 67 found three wordings: "ledger not exported", "no predicted ledger", "where
#: its ledger is").
LEDGER_ON_NODE = "its ledger stays on the node"


def flags_said(shown: str) -> str:
    """The engine flags as shown (`shlex.join`), or 'none: the engine's defaults' where there are none: `--layouts`'
    flags line, the planner's and its `c` notice say it so."""
    return shown or f"none: {DEFAULTS_SAID}"


def figure(value: float, digits: int = 2) -> str:
    """'1,024.00', '−0.09', '0.00': a number as kvtop writes it, a thousands comma, `digits` decimals, a typographic
    minus (`signed`'s), and a few negative bytes reading 0.00 rather than −0.00 (no sign on a figure that shows none)."""
    text = f"{round(value, digits) + 0.0:,.{digits}f}"
    return "−" + text[1:] if text.startswith("-") else text


def in_unit(num_bytes: int, unit: tuple[str, int] | None) -> str:
    """`num_bytes` in a unit typed, given as its name and bytes ('1 TiB', '1,000 TiB', '1,099.51 GB': whole where it
    divides, two decimals where not), or in bytes ('1,024 B') where none was (a byte count, an engine's own suffix)."""
    if unit is None:
        return byte_count(num_bytes)
    name, scale = unit
    return f"{figure(num_bytes / scale, 0 if num_bytes % scale == 0 else 2)} {name}"


def whole(count: int) -> str:
    """'1,512,448', '−4,096': a whole number exactly (no float on the way), the thousands comma and the minus `figure`
    writes; the one such figure of a byte count and a token count."""
    return f"{count:,}".replace("-", "−")


def number(value: float) -> str:
    """'0.9', '−0.25', '1,512,448': a figure as given, a fraction in the fewest digits that say it (a setting's
    value, a ratio), a whole one as `whole` writes it; the minus `figure` writes."""
    return whole(int(value)) if float(value).is_integer() else f"{value}".replace("-", "−")


def byte_count(num_bytes: int) -> str:
    """'4,096 B', '−4,096 B': an exact byte count (`whole`)."""
    return f"{whole(num_bytes)} B"


def percent(fraction: float, digits: int = 0, *, sign: bool = False) -> str:
    """'42%', '+0.37%', '−1.25%': a fraction (0.42) as a percentage, `digits` decimals, the minus `figure` writes and,
    where `sign` (a change), a '+' before a figure not below zero. The one percent of a KV usage or a deviation every
    view prints; a column pads it as it needs."""
    text = figure(fraction * 100, digits)
    return f"{'+' if sign and not text.startswith('−') else ''}{text}%"


def gib(num_bytes: int | float, digits: int = 2) -> str:
    """'6.00 GiB' ('1,024.00 GiB', '−0.09 GiB'; `digits` decimals only where two hide what a figure says: a pool's
    bounds)."""
    return f"{gib_figure(num_bytes, digits)} GiB"


def gb(num_bytes: int | float, digits: int = 2) -> str:
    """'18.94 GB' (decimal, 10**9; '−0.10 GB' below zero: the figure written as `gib`'s)."""
    return f"{figure(num_bytes / GB, digits)} GB"


def gb_gib(num_bytes: int | float, digits: int = 2) -> str:
    """'18.94 GB (17.64 GiB)': both units where a reader may compare with either; the one such pair the domain's
    sentences and every view write (kvtop/units.py's `fmt_both`)."""
    return f"{gb(num_bytes, digits)} ({gib(num_bytes, digits)})"


def gib_figure(num_bytes: int | float, digits: int = 2) -> str:
    """'6.00': `gib`'s figure without its unit, for a column whose header says GiB."""
    return figure(num_bytes / GIB, digits)


def mib(num_bytes: int | float, digits: int = 0) -> str:
    """'512 MiB', '1,124 MiB', '1,024.00 MiB': a byte figure in MiB (2**20 B), whole MiB unless `digits` (two where
    a llama.cpp log's own '%.2f MiB' is said back), the thousands comma and the minus `figure` writes."""
    return f"{figure(num_bytes / MIB, digits)} MiB"


def gib_range(low: int | float, high: int | float, digits: int = 2) -> str:
    """'1.20–3.40 GiB': a range of byte figures, the unit once after both ends."""
    return f"{figure(low / GIB, digits)}–{figure(high / GIB, digits)} GiB"


def gib_about(num_bytes: int | float, error_bytes: int | float) -> str:
    """'1.23 ± 0.45 GiB': a figure and its error, the unit once; '1.23 GiB' where it carries no error."""
    error = f" ± {figure(error_bytes / GIB)}" if error_bytes else ""
    return f"{figure(num_bytes / GIB)}{error} GiB"


def gib_setting(num_bytes: int | float) -> str:
    """'4', '0.5': a size as an engine's flag takes it in GiB (vLLM's --swap-space, --kv-offloading-size), no unit
    written (the flag's own), no digits the engine would not print back."""
    return f"{num_bytes / GIB:g}"


# letters whose name opens with a vowel sound (ef, aitch, el, em, en, ar, es, ex …): 'an' before them spelled out
VOWEL_LETTERS = frozenset("AEFHILMNORSX")


def a_or_an(text: str) -> str:
    """'a' or 'an' before a figure or a name as it is read aloud. A figure: 'an' before eight, eighty…, eleven,
    eighteen (8, 80.5, 11.63, 18, 11,500: eleven thousand), else 'a' (1.00, 110: one hundred, 1,800: one thousand). A
    name spelled letter by letter, opening with two capitals or a letter before a digit (H100, L40S, RTX4090, MLA,
    GB200, T4, SGLang, h2ovl): by its first letter's name (an H100, an L40, an RTX, a GB200). Any other word by its
    first letter (an olmo2, an intermediate_size, a llama, a MoE, a vision-language)."""
    lead = text.lstrip("−-+")
    if lead[:1].isdigit():
        lead = lead.split(".")[0].split(",")[0]
        return "an" if lead.startswith("8") or lead in ("11", "18") else "a"
    first, second = lead[:1], lead[1:2]
    spelled = first.isalpha() and (second.isdigit() or (first.isupper() and second.isupper()))
    if spelled:
        return "an" if first.upper() in VOWEL_LETTERS else "a"
    return "an" if first and first.lower() in "aeiou" else "a"


def with_article(text: str) -> str:
    """'an H100', 'a GB200', 'an 8-bit', 'an olmo2': a figure or a name with its article (`a_or_an`)."""
    return f"{a_or_an(text)} {text}"


def with_the(label: str) -> str:
    """'the weights', but 'the profiling run's CUDA graphs' and "TensorRT-LLM's profiled activation peak" as they are:
    a label that has its article or a possessive first word takes no second one."""
    first = label.split(" ", 1)[0]
    return label if first == "the" or first.endswith("'s") else f"the {label}"


def a_gib(num_bytes: int | float) -> str:
    """'a 6.00 GiB', 'an 11.63 GiB': a byte figure with its article."""
    return with_article(gib(num_bytes))


def signed(count: int) -> str:
    """'+1,005', '−128,660', '0': a change, its sign always shown (a typographic minus)."""
    return f"{count:+,}".replace("-", "−") if count else "0"


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """'1 process', '2 processes', '1 GPU', '8 GPUs': a count and its noun in agreement (`plural` where the noun
    takes more than an 's'), never '1 process(es)' or '1 GPUs'."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def whole_gpus(count: int, *, unused: bool = False) -> str:
    """'a whole GPU out of service', '2 whole GPUs unused': a loss no engine's tokens price."""
    gpus = "a whole GPU" if count == 1 else f"{count} whole GPUs"
    return f"{gpus} {'unused' if unused else 'out of service'}"


# Ends that differ by no more than this part of the wider are one '±' (the wider): a token or a page of rounding
# between them ('−29,292 / +29,291') says nothing an operator acts on.
SYMMETRIC_WITHIN = 0.01


def spread(below: int, above: int) -> str:
    """An interval's ends about its centre: '± 23,168' where they lie as far (within 1 %: the wider), else
    '−45,056 / +27,520' (the budget's arithmetic is not symmetric: one '±' of the wider side hid the nearer end); a
    side of 0 carries no sign ('0 / +167,840': a zero is neither)."""
    wider = max(below, above)
    if abs(below - above) <= SYMMETRIC_WITHIN * wider:
        return f"± {wider:,}"
    return f"{signed(-below)} / {signed(above)}"

"""How the lab's report writes its numbers: fixed digits, every seed's value, mean ± sd."""

from __future__ import annotations

from collections.abc import Mapping


def format_number(x: float, digits: int) -> str:
    return f"{x:.{digits}f}"


def format_per_seed(entry: Mapping, digits: int) -> str:
    """``v1, v2, ...``, or ``v ×n`` when every seed gives the same value."""
    values = [format_number(v, digits) for v in entry["per_seed"]]
    if len(values) > 1 and len(set(values)) == 1:
        return f"{values[0]} ×{len(values)}"
    return ", ".join(values)


def format_listed(entry: Mapping, digits: int) -> str:
    """Every seed's value, comma-separated (for prose: no ``×n`` shorthand)."""
    return ", ".join(format_number(v, digits) for v in entry["per_seed"])


def format_mean_sd(entry: Mapping, digits: int) -> str:
    if len(entry["per_seed"]) == 1:
        return format_number(entry["mean"], digits)
    return f"{format_number(entry['mean'], digits)} ± {format_number(entry['sd'], digits)}"

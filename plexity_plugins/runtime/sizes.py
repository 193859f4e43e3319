"""Byte sizes as people write them: 50MB, 200KiB, 1000000 (caps, memory ceilings)."""

from __future__ import annotations

import re

_SIZE_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
               "kib": 2**10, "mib": 2**20, "gib": 2**30}


def parse_size(text: str) -> int:
    """A byte count: 50000000, 50MB, 50M, 2GiB ... (k/M/G decimal; KiB/MiB/GiB binary); ValueError
    for anything else."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*", text.lower())
    if not match or match.group(2) not in _SIZE_UNITS or float(match.group(1)) * _SIZE_UNITS[match.group(2)] < 1:
        raise ValueError(f"not a size: {text!r} (e.g. 50MB, 200KiB, 1000000)")
    return int(float(match.group(1)) * _SIZE_UNITS[match.group(2)])


def parse_memory(text: str) -> int:
    """A memory ceiling: a size as `parse_size`, or 0 (no ceiling)."""
    return 0 if text.strip() == "0" else parse_size(text)

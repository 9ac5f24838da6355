"""The logic of log-dedup, free of any host import so that `python -m unittest` can run it.

Build and test logs repeat themselves: progress lines, the same warning for every file, retries.
Runs of lines that differ only in numbers (counters, timings, sizes, addresses) collapse into
their first line and a note of how many followed, so the LLM reads the shape of the log instead
of paying for every repetition.
"""

import re
from dataclasses import dataclass

_NUMBER = re.compile(r"0x[0-9a-fA-F]+|\d+(?:[.,:]\d+)*")


@dataclass(frozen=True)
class Options:
    """What `dedup` collapses."""

    #: Runs shorter than this are kept as they are.
    min_run: int = 3
    #: Lines that differ only in numbers count as repetitions.
    ignore_numbers: bool = True

    @staticmethod
    def from_config(pairs):
        """Options from the manifest's `[config]` pairs (non-strings arrive as JSON text)."""
        values = dict(pairs)
        min_run = values.get("min_run", "3")
        if not min_run.isdigit() or int(min_run) < 2:
            raise ValueError(f"min_run must be a whole number of at least 2, not {min_run}")
        ignore_numbers = values.get("ignore_numbers", "true")
        if ignore_numbers not in ("true", "false"):
            raise ValueError(f"ignore_numbers must be true or false, not {ignore_numbers}")
        return Options(min_run=int(min_run), ignore_numbers=ignore_numbers == "true")


def dedup(text, options=Options()):
    """Returns `text` with repeated runs collapsed, and the number of lines removed."""
    lines = text.split("\n")
    out = []
    removed = 0
    i = 0
    while i < len(lines):
        key = _key(lines[i], options)
        end = i + 1
        while end < len(lines) and _key(lines[end], options) == key:
            end += 1
        run = end - i
        if run >= options.min_run and lines[i].strip():
            out.append(lines[i])
            out.append(f"[… {run - 1} similar lines]")
            removed += run - 2
        else:
            out.extend(lines[i:end])
        i = end
    return "\n".join(out), removed


def _key(line, options):
    return _NUMBER.sub("#", line) if options.ignore_numbers else line

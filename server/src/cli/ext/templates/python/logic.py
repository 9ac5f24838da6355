"""The logic of {{name}}, free of host imports."""


def trim_lines(text):
    """`text` with trailing spaces and tabs removed from each line, and how many lines changed."""
    lines = text.split("\n")
    trimmed = [line.rstrip(" \t") for line in lines]
    changed = sum(1 for before, after in zip(lines, trimmed) if before != after)
    return "\n".join(trimmed), changed

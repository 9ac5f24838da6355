// The logic of {{name}}, free of host imports.

/** `text` with trailing spaces and tabs removed from each line, and how many lines changed. */
export function trimLines(text) {
  let lines = 0;
  const trimmed = text
    .split("\n")
    .map((line) => {
      const out = line.replace(/[ \t]+$/, "");
      lines += out.length !== line.length ? 1 : 0;
      return out;
    })
    .join("\n");
  return { text: trimmed, lines };
}

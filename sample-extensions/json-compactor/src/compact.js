// The logic of json-compactor, free of any host import so that `node --test` can run it.
//
// Tool output that is JSON (an API response, `kubectl get -o json`, a lock file) is mostly
// indentation. Re-serialising it compactly keeps every value and costs the LLM far fewer
// tokens. A value is only rewritten when that is lossless: numbers that JavaScript would round
// (integers past 2^53, decimals with more than 17 significant digits) leave it untouched.

/** What `compactText` may change. */
export const DEFAULT_OPTIONS = Object.freeze({
  /** Drop object members whose value is `null`. */
  dropNulls: false,
  /** Keep at most this many items of an array (0: all), followed by a "… N more items" note. */
  maxArrayItems: 0,
});

/**
 * Compacts the JSON in `text`: the whole text if it is one JSON object or array, otherwise each
 * ```json fenced block. Returns the new text and how many bytes it saved.
 */
export function compactText(text, options = DEFAULT_OPTIONS) {
  const whole = compactJson(text, options);
  if (whole !== null) {
    return { text: whole, saved: byteLength(text) - byteLength(whole) };
  }
  let saved = 0;
  const out = text.replace(/```json[ \t]*\n([\s\S]*?)\n```/g, (block, body) => {
    const compacted = compactJson(body, options);
    if (compacted === null) {
      return block;
    }
    saved += byteLength(body) - byteLength(compacted);
    return "```json\n" + compacted + "\n```";
  });
  return { text: out, saved };
}

/** The compact form of `text` if it is a JSON object or array and compacting saves bytes. */
export function compactJson(text, options = DEFAULT_OPTIONS) {
  const trimmed = text.trim();
  if (!(trimmed.startsWith("{") || trimmed.startsWith("["))) {
    return null;
  }
  if (hasUnsafeNumbers(trimmed)) {
    return null;
  }
  let value;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return null;
  }
  const compacted = JSON.stringify(shape(value, options));
  return byteLength(compacted) < byteLength(text) ? compacted : null;
}

function shape(value, options) {
  if (Array.isArray(value)) {
    const limit = options.maxArrayItems > 0 ? options.maxArrayItems : value.length;
    const kept = value.slice(0, limit).map((item) => shape(item, options));
    if (value.length > limit) {
      kept.push(`… ${value.length - limit} more items`);
    }
    return kept;
  }
  if (value !== null && typeof value === "object") {
    const out = {};
    for (const [key, member] of Object.entries(value)) {
      if (member === null && options.dropNulls) {
        continue;
      }
      out[key] = shape(member, options);
    }
    return out;
  }
  return value;
}

/** Whether a number literal outside strings would not survive `JSON.parse` exactly. */
export function hasUnsafeNumbers(text) {
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") {
        i++;
      } else if (c === '"') {
        inString = false;
      }
      continue;
    }
    if (c === '"') {
      inString = true;
    } else if (c === "-" || (c >= "0" && c <= "9")) {
      let end = i + 1;
      while (end < text.length && /[0-9eE.+-]/.test(text[end])) {
        end++;
      }
      if (!exact(text.slice(i, end))) {
        return true;
      }
      i = end - 1;
    }
  }
  return false;
}

function exact(literal) {
  const digits = literal.replace(/^-/, "").split(/[eE]/)[0];
  if (/^\d+$/.test(digits)) {
    return Number.isSafeInteger(Number(literal)) || /[eE]/.test(literal);
  }
  return digits.replace(".", "").replace(/^0+/, "").length <= 17;
}

/** UTF-8 length of a string (what the host counts), without TextEncoder's allocation. */
export function byteLength(text) {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) {
      bytes += 1;
    } else if (code < 0x800) {
      bytes += 2;
    } else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 4;
      i++;
    } else {
      bytes += 3;
    }
  }
  return bytes;
}

/** Options from the manifest's `[config]` pairs (values are JSON text unless strings). */
export function optionsFromConfig(pairs) {
  const options = { ...DEFAULT_OPTIONS };
  for (const [key, value] of pairs) {
    if (key === "drop_nulls") {
      options.dropNulls = value === "true";
    } else if (key === "max_array_items") {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 0) {
        throw new ConfigError(`max_array_items must be a whole number ≥ 0, not ${value}`);
      }
      options.maxArrayItems = n;
    }
  }
  return options;
}

/** A manifest value the extension cannot use; reported as `ext-error` `invalid-config`. */
export class ConfigError extends Error {}

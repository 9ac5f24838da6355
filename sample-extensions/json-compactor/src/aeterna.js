// Helpers for Aeterna extensions written in JavaScript and built with componentize-js.
//
// componentize-js turns a value thrown from a hook into the hook's `ext-error` when the value is
// `{ code, message }` or carries it as `payload`; any other exception (a plain `Error`) traps the
// callback and its message is lost. `ExtError` and `hook` keep every message.

/** A refusal the host records as this hook's `ext-error`, with its code and message. */
export class ExtError extends Error {
  constructor(code, message) {
    super(message);
    this.name = "ExtError";
    this.payload = { code, message };
  }
}

/**
 * Wraps a hook so that any exception it throws reaches the host as an `ext-error` that keeps its
 * message and stack (code `uncaught`), instead of a trap that loses them.
 */
export function hook(callback) {
  return (...args) => {
    try {
      return callback(...args);
    } catch (error) {
      if (error instanceof ExtError) {
        throw error;
      }
      const text = error instanceof Error ? `${error}\n${error.stack ?? ""}`.trim() : String(error);
      throw new ExtError("uncaught", text);
    }
  };
}

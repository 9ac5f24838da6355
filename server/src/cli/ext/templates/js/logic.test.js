import assert from "node:assert/strict";
import { test } from "node:test";
import { trimLines } from "../src/logic.js";

test("trailing whitespace goes and is counted", () => {
  assert.deepEqual(trimLines("error: x   \nwarning: y\t\nok\n"), {
    text: "error: x\nwarning: y\nok\n",
    lines: 2,
  });
});

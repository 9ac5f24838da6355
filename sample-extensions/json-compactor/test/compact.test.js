// Native tests of the logic: `node --test` (Node 20 or newer).

import assert from "node:assert/strict";
import { test } from "node:test";
import {
  byteLength,
  compactJson,
  compactText,
  hasUnsafeNumbers,
  optionsFromConfig,
} from "../src/compact.js";

const pretty = JSON.stringify({ name: "aeterna", tags: ["a", "b"], owner: null }, null, 2);

test("a whole JSON document is compacted and the saving counted", () => {
  const { text, saved } = compactText(pretty);
  assert.equal(text, '{"name":"aeterna","tags":["a","b"],"owner":null}');
  assert.equal(saved, byteLength(pretty) - byteLength(text));
});

test("fenced json blocks inside text are compacted, the prose is kept", () => {
  const input = "Result:\n```json\n" + pretty + "\n```\nDone.";
  const { text } = compactText(input);
  assert.equal(text, 'Result:\n```json\n{"name":"aeterna","tags":["a","b"],"owner":null}\n```\nDone.');
});

test("text that is not JSON, or already compact, is left alone", () => {
  for (const input of ["plain words", "{ not json", '{"a":1}', "42", ""]) {
    assert.deepEqual(compactText(input), { text: input, saved: 0 });
  }
});

test("numbers JavaScript would round keep the document as it is", () => {
  const big = '{\n  "id": 12345678901234567890\n}';
  assert.equal(hasUnsafeNumbers(big), true);
  assert.equal(compactJson(big), null);
  assert.equal(hasUnsafeNumbers('{"id": "12345678901234567890", "n": -1.5e3}'), false);
  assert.equal(compactJson('{\n  "pi": 3.14159\n}'), '{"pi":3.14159}');
});

test("nulls can be dropped and long arrays cut with a note", () => {
  const options = optionsFromConfig([
    ["drop_nulls", "true"],
    ["max_array_items", "2"],
  ]);
  const input = JSON.stringify({ a: null, list: [1, 2, 3, 4], nested: { b: null, c: 1 } }, null, 1);
  assert.equal(compactJson(input, options), '{"list":[1,2,"… 2 more items"],"nested":{"c":1}}');
});

test("a bad max_array_items is a config error", () => {
  assert.throws(() => optionsFromConfig([["max_array_items", "-1"]]), /max_array_items/);
});

test("byteLength counts UTF-8 bytes", () => {
  assert.equal(byteLength("aé日🎉"), 1 + 2 + 3 + 4);
});

// Reads lines of {"schema": NAME, "doc": …} on stdin and writes a line
// for each: {"output": "…", "textContent": "…", "textBetween": "…"} with
// JSON.stringify(Node.fromJSON(schema, doc).toJSON()), its textContent and
// textBetween(0, size, "\n", "*") by the real prosemirror-model, or
// {"error": "…"} with what it threw. The conformance tests use it for hand-written cases that
// the generated corpora hit only rarely (conformance/fromjson_test.go).

import readline from "node:readline"
import { Node } from "prosemirror-model"
import { loadSchemas } from "./schemas.mjs"

const schemas = loadSchemas()
const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })
for await (const line of lines) {
  if (!line.trim()) continue
  let { schema, doc } = JSON.parse(line)
  let answer
  try {
    let node = Node.fromJSON(schemas[schema], doc)
    answer = {
      output: JSON.stringify(node.toJSON()),
      textContent: node.textContent,
      textBetween: node.textBetween(0, node.content.size, "\n", "*"),
    }
  } catch (e) {
    answer = { error: String(e.message) }
  }
  process.stdout.write(JSON.stringify(answer) + "\n")
}

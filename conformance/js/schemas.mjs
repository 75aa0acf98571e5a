// Loads the conformance schemas from their JSON spec files (the source
// of truth for both the JS generators and the Go tests).

import fs from "node:fs"
import path from "node:path"
import { Schema } from "prosemirror-model"
import { repoRoot, schemaPaths } from "./schema-specs.mjs"

// schemaNames lists the schemas of the step, model, rebase and transform
// corpora in a fixed order: all but suggest, which gen-suggest.mjs has to
// itself.
export const schemaNames = Object.keys(schemaPaths).filter(name => name != "suggest")

// loadSpecText returns the JSON text of a named schema spec.
export function loadSpecText(name) {
  let rel = schemaPaths[name]
  if (!rel) throw new Error(`unknown schema ${name}`)
  return fs.readFileSync(path.join(repoRoot, rel), "utf8")
}

// loadSchema builds a Schema from the named JSON spec file.
export function loadSchema(name) {
  return new Schema(JSON.parse(loadSpecText(name)))
}

// loadSchemas returns {text, basic, tables, stress} (schemaNames).
export function loadSchemas() {
  let result = {}
  for (let name of schemaNames) result[name] = loadSchema(name)
  return result
}

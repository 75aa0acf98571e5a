// Writes the schema spec JSON files (see schema-specs.mjs):
//   schemas/text.json, schemas/basic.json, schemas/suggest.json (embedded by the Go schemas package)
//   conformance/schemas/tables.json, conformance/schemas/stress.json
//
// Usage: node export-schemas.mjs

import fs from "node:fs"
import path from "node:path"
import { Schema } from "prosemirror-model"
import { repoRoot, specFiles } from "./schema-specs.mjs"

for (let [rel, text] of specFiles()) {
  new Schema(JSON.parse(text)) // must construct
  let file = path.join(repoRoot, rel)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
  console.log(`wrote ${rel} (${text.length} bytes)`)
}

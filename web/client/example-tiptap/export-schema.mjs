// Writes the schema of Tiptap's StarterKit (the example's editor, Tiptap
// from this directory's node_modules) for the server and for the Go tests:
//
//   schema.json                                   exportSchema's output: serve --schema tiptap=schema.json
//   ../../../model/testdata/tiptap_starterkit_spec.json   JSON.stringify(schema.spec), as JavaScript writes it
//                                                 (nodes and marks as OrderedMaps: {"content": [name, spec, …]})
//   ../../../model/testdata/tiptap_starterkit_js.json     what prosemirror-model derives from it (order, groups,
//                                                 content automata, mark sets, attributes, fills) and sample
//                                                 documents with Node.check()'s verdict, for model/tiptap_test.go
//
// Usage: node export-schema.mjs [--check]   (--check: exit 1 when a file is not what it would write)

import { getSchema } from "@tiptap/core"
import StarterKit from "@tiptap/starter-kit"
import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { exportSchema } from "../src/tiptap-schema.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const testdata = path.join(here, "..", "..", "..", "model", "testdata")
const check = process.argv.includes("--check")

// The example's extensions as far as the schema goes (the pmauthority
// extension adds no node or mark).
const schema = getSchema([StarterKit])
const versions = {}
for (let name of ["@tiptap/core", "@tiptap/starter-kit", "prosemirror-model"])
  versions[name] = JSON.parse(fs.readFileSync(path.join(here, "node_modules", name, "package.json"), "utf8")).version

const nodeSpecKeys = ["content", "marks", "group", "inline", "atom", "selectable", "draggable", "code", "whitespace",
  "definingAsContext", "definingForContent", "defining", "isolating", "linebreakReplacement"]
const markSpecKeys = ["inclusive", "excludes", "group", "spanning", "code"]

function known(spec, keys) {
  let out = {}
  for (let k of keys) out[k] = spec[k] === undefined ? null : spec[k]
  return out
}

function attrs(type) {
  return Object.keys(type.attrs).map(name => {
    let a = type.attrs[name]
    return { name, hasDefault: a.hasDefault, default: a.hasDefault ? a.default : null, validate: typeof a.validate }
  })
}

function describeNode(type) {
  let fill = null
  if (!type.isText && !type.hasRequiredAttrs()) fill = JSON.stringify(type.createAndFill()?.toJSON() ?? null)
  return {
    name: type.name, groups: type.groups, isBlock: type.isBlock, isInline: type.isInline, isText: type.isText,
    isLeaf: type.isLeaf, isAtom: type.isAtom, isTextblock: type.isTextblock, inlineContent: type.inlineContent,
    whitespace: type.whitespace, markSet: type.markSet && type.markSet.map(m => m.name),
    contentMatch: type.contentMatch.toString(), defaultType: type.contentMatch.defaultType?.name ?? null,
    hasRequiredAttrs: type.hasRequiredAttrs(), attrs: attrs(type), createAndFill: fill, spec: known(type.spec, nodeSpecKeys),
  }
}

function describeMark(type) {
  return {
    name: type.name, rank: type.rank, excluded: type.excluded.map(m => m.name), attrs: attrs(type),
    spec: known(type.spec, markSpecKeys),
  }
}

const text = (t, marks) => marks ? { type: "text", text: t, marks } : { type: "text", text: t }
const p = (...content) => ({ type: "paragraph", content })

// Documents with every node and mark of StarterKit, and some that
// Node.check() refuses.
const docs = [
  { type: "doc", content: [
    { type: "heading", attrs: { level: 2 }, content: [text("Title")] },
    p(text("plain "), text("bold", [{ type: "bold" }]), text(" "), text("both", [{ type: "bold" }, { type: "italic" }]),
      { type: "hardBreak" }, text("code", [{ type: "code" }]), text(" struck", [{ type: "strike" }, { type: "underline" }]),
      text(" link", [{ type: "link", attrs: { href: "https://example.com/" } }])),
    { type: "blockquote", content: [p(text("quoted"))] },
    { type: "bulletList", content: [{ type: "listItem", content: [p(text("one")), { type: "orderedList", attrs: { start: 3 },
      content: [{ type: "listItem", content: [p(text("nested"))] }] }] }] },
    { type: "codeBlock", attrs: { language: "go" }, content: [text("func main() {}\n")] },
    { type: "horizontalRule" },
    p(),
  ] },
  { type: "doc", content: [p(text("x", [{ type: "link", attrs: { href: "a", target: null, rel: null, class: "c", title: "t" } }]))] },
  { type: "doc", content: [{ type: "codeBlock", content: [text("no marks here", [{ type: "bold" }])] }] },
  { type: "doc", content: [{ type: "bulletList", content: [{ type: "listItem", content: [{ type: "bulletList",
    content: [{ type: "listItem", content: [p()] }] }] }] }] },
  { type: "doc", content: [p(text("a", [{ type: "code" }, { type: "bold" }]))] },
  { type: "doc", content: [] },
  { type: "doc", content: [{ type: "heading", content: [{ type: "horizontalRule" }] }] },
]

function describeDoc(json) {
  let doc = schema.nodeFromJSON(json), error = null
  try { doc.check() } catch (e) { error = e.message }
  return { input: JSON.stringify(json), output: JSON.stringify(doc.toJSON()), size: doc.content.size, check: error }
}

const outputs = {
  [path.join(here, "schema.json")]: exportSchema(schema),
  [path.join(testdata, "tiptap_starterkit_spec.json")]: JSON.stringify(schema.spec) + "\n",
  [path.join(testdata, "tiptap_starterkit_js.json")]: JSON.stringify({
    generator: "web/client/example-tiptap/export-schema.mjs", versions,
    topNode: schema.topNodeType.name, linebreakReplacement: schema.linebreakReplacement?.name ?? null,
    nodes: Object.values(schema.nodes).map(describeNode), marks: Object.values(schema.marks).map(describeMark),
    docs: docs.map(describeDoc),
  }, null, 1) + "\n",
}

let stale = 0
for (let [file, text] of Object.entries(outputs)) {
  let rel = path.relative(process.cwd(), file)
  if (check) {
    let old = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : null
    if (old !== text) { console.error(`${rel} is stale: run node web/client/example-tiptap/export-schema.mjs`); stale++ }
  } else {
    fs.writeFileSync(file, text)
    console.log("wrote", rel)
  }
}
if (stale) process.exit(1)
if (check) console.log("Tiptap StarterKit schema files up to date")

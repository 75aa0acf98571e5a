// The schema specs shared by the JS and Go sides of the conformance
// tests, and the JS originals they are exported from.
//
// specFiles() returns every JSON spec file as [path, text]; the files
// are the source of truth (schemas.mjs loads them back), this module is
// how they are made and checked.

import { Schema } from "prosemirror-model"
import { schema as basicSchema, marks as basicMarks } from "prosemirror-schema-basic"
import { addSuggestionMarks } from "@handlewithcare/prosemirror-suggest-changes"
import { addListNodes } from "prosemirror-schema-list"
import { tableNodes } from "prosemirror-tables"
import { fileURLToPath } from "node:url"
import path from "node:path"
import { Ordered, stringify } from "./ordered-json.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))
export const repoRoot = path.resolve(here, "../..")

// Where each named schema's spec lives, relative to the repository root.
export const schemaPaths = {
  text: "schemas/text.json",
  basic: "schemas/basic.json",
  suggest: "schemas/suggest.json",
  tables: "conformance/schemas/tables.json",
  stress: "conformance/schemas/stress.json",
}

// Spec keys holding DOM glue (functions, or rules containing functions);
// they are not part of the JSON spec format.
export const droppedKeys = new Set(["toDOM", "parseDOM", "leafText", "toDebugString"])

// Attributes whose JS spec has a function `validate`, which the JSON
// format cannot carry (only type strings are). The exported spec has no
// validate for them, and verify-schemas.mjs accepts exactly these.
export const knownFunctionValidators = new Set([
  "tables:table_cell.colwidth",
  "tables:table_header.colwidth",
])

// The JS originals, as SchemaSpecs (nodes/marks may be OrderedMaps).
export function originalSpecs() {
  let basicNodes = addListNodes(basicSchema.spec.nodes, "paragraph block*", "block")
  return {
    text: { nodes: { text: {}, doc: { content: "text*" } } },
    basic: { nodes: basicNodes, marks: basicSchema.spec.marks },
    suggest: suggestSpec(basicNodes),
    tables: {
      nodes: basicNodes.append(tableNodes({ tableGroup: "block", cellContent: "block+", cellAttributes: {} })),
      marks: basicSchema.spec.marks,
    },
    stress: stressSpec(),
  }
}

// suggestSpec is basic + lists with the suggestion marks of
// @handlewithcare/prosemirror-suggest-changes, built as its README builds
// one: the marks added by addSuggestionMarks, and the doc allowing them on
// its blocks.
function suggestSpec(basicNodes) {
  let nodes = basicNodes.update("doc", { ...basicNodes.get("doc"), marks: "insertion modification deletion" })
  return { nodes, marks: addSuggestionMarks(basicMarks) }
}

// exportSpec turns a JS SchemaSpec into its JSON form: nodes and marks
// in order, DOM glue and function validators dropped, everything else
// kept. Ordered values (the stress spec) pass through unchanged.
export function exportSpec(name, spec) {
  if (spec instanceof Ordered) return spec
  let out = new Ordered()
  for (let key in spec) {
    if (key == "nodes" || key == "marks") out.set(key, exportTypes(name, spec[key]))
    else out.set(key, plain(spec[key], key))
  }
  return out
}

function entries(map) {
  let result = []
  if (typeof map.forEach == "function" && !Array.isArray(map)) map.forEach((k, v) => result.push([k, v])) // OrderedMap
  else for (let k in map) result.push([k, map[k]])
  return result
}

function exportTypes(schemaName, map) {
  let out = new Ordered()
  for (let [name, spec] of entries(map)) {
    let typeOut = new Ordered()
    for (let key in spec) {
      let value = spec[key]
      if (droppedKeys.has(key) || typeof value == "function") continue
      if (key == "attrs") typeOut.set(key, exportAttrs(schemaName, name, value))
      else typeOut.set(key, plain(value, `${name}.${key}`))
    }
    out.set(name, typeOut)
  }
  return out
}

function exportAttrs(schemaName, typeName, attrs) {
  let out = new Ordered()
  for (let attr in attrs) {
    let spec = attrs[attr], attrOut = new Ordered()
    for (let key in spec) {
      let value = spec[key]
      if (key == "validate" && typeof value == "function") {
        if (!knownFunctionValidators.has(`${schemaName}:${typeName}.${attr}`))
          throw new Error(`function validate on ${schemaName}:${typeName}.${attr} cannot be exported`)
        continue
      }
      if (value === undefined) throw new Error(`undefined ${key} on ${typeName}.${attr}`)
      attrOut.set(key, plain(value, `${typeName}.${attr}.${key}`))
    }
    out.set(attr, attrOut)
  }
  return out
}

// plain checks that a value is JSON (no functions, no undefined).
function plain(value, where) {
  if (typeof value == "function" || value === undefined) throw new Error(`non-JSON value at ${where}`)
  if (typeof value == "number" && !isFinite(value)) throw new Error(`non-finite number at ${where}`)
  if (Array.isArray(value)) return value.map((v, i) => plain(v, `${where}[${i}]`))
  if (value && typeof value == "object") {
    let out = new Ordered()
    for (let k in value) out.set(k, plain(value[k], `${where}.${k}`))
    return out
  }
  return value
}

// specFiles renders every spec file: [relative path, text].
export function specFiles() {
  let specs = originalSpecs()
  return Object.keys(schemaPaths).map(name => {
    let text = name == "text"
      ? stringify(exportSpec(name, specs.text)) + "\n"
      : stringify(exportSpec(name, specs[name]), 2) + "\n"
    return [schemaPaths[name], text]
  })
}

// Shorthand for ordered objects in the stress spec.
const o = Ordered.of

// stressSpec is a schema designed to hit the corners of prosemirror-model:
// every content expression operator, groups, required attributes in
// optional positions, validate strings, defaults of every JSON type
// (including objects whose keys JS reorders), integer-like attribute
// names written out of JS order, mark exclusion by self, none, all and
// group, node marks on block children, a linebreak replacement, inline
// nodes with content, and app-specific keys that must be kept.
export function stressSpec() {
  return o(
    "topNode", "root",
    "nodes", o(
      "root", o(
        "content", "title? block+ notes?",
        "attrs", o(
          "version", o("default", 1, "validate", "number"),
          "meta", o(
            "default", o("b", 1, "a", [1, 2, o("z", null, "1", true)], "0", "zero", "nested", o("deep", o("deeper", []))),
            "validate", "object")),
        "x-app", o("persist", true, "tags", ["a", "b"])),
      "title", o("content", "(text | emoji)*", "marks", "em strong", "defining", true),
      "paragraph", o(
        "content", "inline*",
        "group", "block",
        "attrs", o("align", o("default", "left", "validate", "string"))),
      "heading", o(
        "content", "inline*",
        "group", "block",
        "defining", true,
        "marks", "_",
        "attrs", o(
          "level", o("default", 1, "validate", "number"),
          "id", o("default", null, "validate", "string|null"))),
      "code_block", o(
        "content", "text*",
        "marks", "",
        "group", "block",
        "code", true,
        "defining", true,
        "attrs", o(
          "language", o("default", ""),
          "lines", o("default", [], "validate", "object"))),
      "verse", o("content", "(text | hard_break)*", "group", "block", "whitespace", "pre", "marks", "annotation"),
      "blockquote", o(
        "content", "block+",
        "group", "block",
        "defining", true,
        "marks", "annotation",
        "attrs", o("cite", o("default", null))),
      "section", o(
        "content", "heading paragraph{1,3} (blockquote | figure)*",
        "group", "block",
        "isolating", true,
        "attrs", o(
          "b", o("default", "bee"),
          "2", o("default", 2, "validate", "number"),
          "a", o("default", null),
          "10", o("default", [10, o("b", 1, "1", 2)]),
          "01", o("default", "leading zero", "validate", "string"),
          "4294967295", o("default", false),
          "4294967294", o("default", true))),
      "figure", o("content", "figure_img caption?", "group", "block figures", "isolating", true, "draggable", true),
      "figure_img", o(
        "atom", true,
        "attrs", o(
          "src", o("default", "", "validate", "string"),
          "size", o("default", o("w", 100, "h", 50), "validate", "object"))),
      "caption", o("content", "inline*", "marks", "em annotation"),
      "aside", o(
        "content", "paragraph{2,} | heading+",
        "group", "block",
        "isolating", true,
        "attrs", o(
          "kind", o("validate", "string"),
          "flag", o("default", false, "validate", "boolean"))),
      "ordered_list", o(
        "content", "list_item+",
        "group", "block list",
        "attrs", o(
          "order", o("default", 1, "validate", "number"),
          "tight", o("default", false, "validate", "boolean"))),
      "bullet_list", o("content", "list_item+", "group", "block list"),
      "list_item", o("content", "paragraph (list | paragraph)*", "defining", true),
      "grid", o("content", "grid_row{1,3}", "group", "block", "isolating", true),
      "grid_row", o("content", "grid_cell{2}"),
      "grid_cell", o(
        "content", "( paragraph|code_block )?",
        "isolating", true,
        "attrs", o(
          "span", o("default", 1, "validate", "number"),
          "bg", o("default", null, "validate", "string|null"))),
      "horizontal_rule", o("group", "block", "selectable", false, "attrs", o("style", o("default", null))),
      "embed", o(
        "group", "block",
        "atom", true,
        "draggable", true,
        "attrs", o(
          "url", o("validate", "string"),
          "provider", o(),
          "data", o("default", o("w", 640, "h", null), "validate", "object"))),
      // A default that fails its own validator: fromJSON accepts the node
      // when the attribute is absent, check() then rejects it.
      "legacy", o("group", "block", "attrs", o("v", o("default", "x", "validate", "number"))),
      "notes", o("content", "note+"),
      "note", o("content", "paragraph+", "attrs", o("n", o("default", 0, "validate", "number"))),
      "text", o("group", "inline"),
      "image", o(
        "inline", true,
        "group", "inline",
        "draggable", true,
        "attrs", o(
          "src", o("validate", "string"),
          "alt", o("default", null, "validate", "string|null"),
          "width", o("default", null, "validate", "number|null"))),
      "emoji", o(
        "inline", true,
        "group", "inline",
        "atom", true,
        "attrs", o("name", o("default", "smile", "validate", "string")),
        "x-app", "emoji-picker"),
      "hard_break", o("inline", true, "group", "inline", "selectable", false, "linebreakReplacement", true),
      "mention", o(
        "inline", true,
        "group", "inline",
        "atom", true,
        "content", "text*",
        "marks", "",
        "attrs", o("id", o("default", null, "validate", "string|number|null")))),
    "marks", o(
      "link", o(
        "attrs", o(
          "href", o("validate", "string"),
          "title", o("default", null, "validate", "string|null")),
        "inclusive", false),
      "em", o(),
      "strong", o("group", "fmt"),
      "code", o("code", true, "excludes", "_"),
      "underline", o("group", "fmt", "spanning", false, "x-app", 1),
      "strike", o("group", "fmt", "excludes", "strike underline"),
      "highlight", o(
        "attrs", o("color", o("default", "yellow", "validate", "string")),
        "group", "annotation",
        "excludes", "fmt"),
      "comment", o(
        "attrs", o("id", o("validate", "number")),
        "group", "annotation",
        "excludes", "",
        "inclusive", false,
        "spanning", false),
      "sup", o(
        "excludes", "sub",
        "attrs", o(
          "2", o("default", 2),
          "z", o("default", "z"),
          "1", o("default", 1),
          "a", o("default", "a", "validate", "string"))),
      "sub", o("excludes", "sup"),
      // Required attribute without a validator: a mark JSON without attrs
      // gets name = null and is accepted.
      "anchor", o("attrs", o("name", o()), "inclusive", false)))
}

// originalSchemas builds the JS originals as Schemas.
export function originalSchemas() {
  let specs = originalSpecs(), result = {}
  for (let name in specs)
    result[name] = new Schema(specs[name] instanceof Ordered ? JSON.parse(stringify(specs[name])) : specs[name])
  return result
}

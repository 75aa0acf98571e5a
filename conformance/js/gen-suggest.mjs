// Generates differential test cases for reverting and applying the
// suggestions of @handlewithcare/prosemirror-suggest-changes: random
// documents of the suggest schema (gen-steps.mjs's random documents, then
// random edits made in suggest mode by the package's own transaction
// transform, then suggestion marks placed at random), each with what the
// package's revertSuggestions and applySuggestions commands make (steps
// and document, or what they throw), and for some ids what reverting and
// applying that one suggestion makes by the reference of this file. The
// output format is described in FORMAT-suggest.md.
//
// Usage: node gen-suggest.mjs [--seed N] [--count N] [--out FILE]
//
// The same seed and count give the same file byte for byte; case `id`
// depends only on the seed and `id`.

import fs from "node:fs"
import { fileURLToPath } from "node:url"
import { Node, Schema } from "prosemirror-model"
import { EditorState } from "prosemirror-state"
import { Transform, findWrapping, liftTarget } from "prosemirror-transform"
import {
  applySuggestion, applySuggestions, revertSuggestion, revertSuggestions, transformToSuggestionTransaction,
} from "@handlewithcare/prosemirror-suggest-changes"
import { loadSchema, loadSpecText } from "./schemas.mjs"
import { headerLine, runGenerator } from "./gen-cli.mjs"
import { Rand, SchemaInfo, genDoc, genInsert, errMessage, randText } from "./gen-steps.mjs"

export const FORMAT_VERSION = 1

// caseSalt makes the documents of a seed other than those the other
// generators draw for it.
const caseSalt = 0x5c6e57

const SUGGESTION_MARKS = ["insertion", "deletion", "modification"]
const IDS = [1, 2, 3, 4, "a", "b", "1"]

// ---------------------------------------------------------------------------
// The package's one crash, and the fix the Go port makes

// Reverting an insertion that ends the document makes the package read
// the character after the document's end (textBetween(size, size + 1)),
// which throws a TypeError. With clampTextBetween set, textBetween stops
// at the end of the content instead: the character is "", as the
// package's own guard (`deletionTo <= size ? … : ""`) means it to be.
// Nothing else in these commands calls textBetween past the end, so the
// clamp changes only results that would otherwise throw.
let clampTextBetween = false
const textBetween = Node.prototype.textBetween
Node.prototype.textBetween = function (from, to, blockSeparator, leafText) {
  if (clampTextBetween && to > this.content.size) to = this.content.size
  return textBetween.call(this, from, to, blockSeparator, leafText)
}

// runCommand runs a command on doc: {doc, steps} of the transaction it
// dispatched, {doc, steps: []} when it dispatched none, or {error}.
function runCommand(command, doc, clamp) {
  clampTextBetween = clamp
  try {
    let out = null
    command(EditorState.create({ doc }), tr => { out = tr })
    return out ? { doc: out.doc.toJSON(), steps: out.steps.map(s => s.toJSON()) } : { doc: doc.toJSON(), steps: [] }
  } catch (e) {
    return { error: errMessage(e) }
  } finally {
    clampTextBetween = false
  }
}

// ---------------------------------------------------------------------------
// The reference for one id

// The package's revertSuggestion(id) and applySuggestion(id) revert or
// apply the insertions and deletions of id alone, then the modifications
// of every id (revertSuggestion only when the first part made a step).
// The reference keeps the first part, run by the package itself on the
// document in `hidden`, a copy of the schema where the modification mark
// is called hiddenModification (same place, same spec) and the mark
// called modification is one no document has (the doc allows the
// hidden one on its blocks instead): the package's
// modification pass then finds nothing. It then removes, and with revert
// undoes, the modification marks of id alone, each undone as the
// package's revertModifications undoes a modification.

let hidden = null
function hiddenSchema() {
  if (hidden) return hidden
  let spec = JSON.parse(loadSpecText("suggest")), marks = {}
  for (let name in spec.marks) {
    if (name == "modification") marks.hiddenModification = spec.marks[name]
    else marks[name] = spec.marks[name]
  }
  marks.modification = { attrs: { id: {} } }
  spec.marks = marks
  spec.nodes.doc.marks = "insertion hiddenModification deletion"
  return (hidden = new Schema(spec))
}

// renameMarks returns doc's JSON with the marks called from called to.
function renameMarks(json, from, to) {
  let out = { ...json }
  if (json.marks) out.marks = json.marks.map(m => m.type == from ? { ...m, type: to } : m)
  if (json.content) out.content = json.content.map(c => renameMarks(c, from, to))
  return out
}

function referenceByID(schema, doc, id, revert) {
  clampTextBetween = true
  try {
    let inHidden = Node.fromJSON(hiddenSchema(), renameMarks(doc.toJSON(), "modification", "hiddenModification"))
    let first = inHidden
    let command = revert ? revertSuggestion(id) : applySuggestion(id)
    command(EditorState.create({ doc: inHidden }), tr => { first = tr.doc })
    let tr = new Transform(Node.fromJSON(schema, renameMarks(first.toJSON(), "hiddenModification", "modification")))
    let modification = schema.marks.modification
    tr.doc.descendants((node, pos) => {
      let mods = node.marks.filter(m => m.type == modification && m.attrs.id === id)
      for (let m of mods) tr.removeNodeMark(pos, m)
      if (revert) for (let m of mods) undoModification(schema, tr, pos, m)
    })
    return { doc: tr.doc.toJSON() }
  } catch (e) {
    return { error: errMessage(e) }
  } finally {
    clampTextBetween = false
  }
}

// undoModification is the body of the package's revertModifications loop
// for one modification mark (its node mark quirk included: a previous
// mark is added to the node at position 0).
function undoModification(schema, tr, pos, mod) {
  if (mod.attrs.type === "attr" && typeof mod.attrs.attrName === "string") {
    tr.setNodeAttribute(pos, mod.attrs.attrName, mod.attrs.previousValue)
  } else if (mod.attrs.type === "mark") {
    if (mod.attrs.previousValue) tr.addNodeMark(0, schema.markFromJSON(mod.attrs.previousValue))
    else tr.removeNodeMark(pos, schema.markFromJSON(mod.attrs.previousValue))
  } else if (mod.attrs.type === "nodeType") {
    tr.setNodeMarkup(pos, schema.nodes[mod.attrs.previousValue], null)
  } else {
    throw new Error("Unknown modification type")
  }
}

// packageFlawless tells whether the package's by-id command is free of
// its two flaws on doc: every modification mark of doc has id, and for
// revert, the insertions and deletions of id make a step (or there is no
// modification at all).
function packageFlawless(doc, id, revert, firstPassSteps) {
  let mods = 0, others = 0
  doc.descendants(node => {
    for (let m of node.marks) if (m.type.name == "modification") { mods++; if (m.attrs.id !== id) others++ }
  })
  return others == 0 && (!revert || mods == 0 || firstPassSteps > 0)
}

// ---------------------------------------------------------------------------
// Documents

// genSuggestDoc makes a document: a random one, its suggestion marks
// mostly dropped (gen-steps.mjs draws their attributes at random), then
// edited in suggest mode and marked at random.
function genSuggestDoc(r, S, edits) {
  let schema = S.schema
  let doc = genDoc(r, S)
  if (r.chance(0.8)) doc = Node.fromJSON(schema, dropSuggestionMarks(doc.toJSON()))
  let state = EditorState.create({ doc })
  let stringIDs = r.chance(0.2), next = 0
  let generateId = stringIDs ? () => "s" + (++next) : undefined
  for (let n = r.range(0, 6); n > 0; n--) {
    let tr = state.tr
    try {
      if (!edit(r, S, tr) || !tr.steps.length) continue
      let suggested = transformToSuggestionTransaction(tr, state, generateId)
      // The package's default ids go NaN (JSON null) once a string id is
      // in the document: keep only documents that survive their JSON.
      Node.fromJSON(schema, JSON.parse(JSON.stringify(suggested.doc.toJSON()))).check()
      state = state.apply(suggested)
      edits.suggested++
    } catch (e) { /* an edit the package cannot suggest: skip it */ }
  }
  doc = state.doc
  for (let n = r.weighted([[3, 0], [3, 1], [2, 3], [1, 6]]); n > 0; n--) {
    try {
      let tr = new Transform(doc)
      markAtRandom(r, S, tr)
      tr.doc.check()
      doc = tr.doc
    } catch (e) { /* skip */ }
  }
  return doc
}

function dropSuggestionMarks(json) {
  let out = { ...json }
  if (json.marks) {
    out.marks = json.marks.filter(m => !SUGGESTION_MARKS.includes(m.type))
    if (!out.marks.length) delete out.marks
  }
  if (json.content) out.content = json.content.map(dropSuggestionMarks)
  return out
}

// textPositions lists the positions inside textblocks; blockPositions
// the positions before nodes matching pred.
function textPositions(doc) {
  let list = []
  doc.descendants((node, pos) => {
    if (node.isTextblock && node.type.spec.code !== true) for (let i = 1; i <= node.content.size + 1; i++) list.push(pos + i)
    return !node.isTextblock
  })
  return list
}
function blockPositions(doc, pred) {
  let list = []
  doc.descendants((node, pos) => { if (pred(node)) list.push(pos) })
  return list
}
function pickRange(r, doc) {
  let list = textPositions(doc)
  if (!list.length) return null
  let a = r.pick(list), b = r.chance(0.7) ? Math.min(doc.content.size, a + r.range(1, 6)) : r.pick(list)
  return a <= b ? [a, b] : [b, a]
}

// edit makes one user edit on tr (not yet suggested); false when there
// is none to make.
function edit(r, S, tr) {
  let schema = S.schema, doc = tr.doc
  let kind = r.weighted([[5, "type"], [4, "delete"], [3, "replace"], [2, "split"], [2, "join"], [2, "attr"],
                         [2, "blockType"], [1, "mark"], [1, "unmark"], [1, "wrap"], [1, "lift"], [1, "insertNode"]])
  switch (kind) {
    case "type": {
      let list = textPositions(doc)
      if (!list.length) return false
      tr.insertText(randText(r, 2), r.pick(list))
      return true
    }
    case "delete": case "replace": {
      let rg = pickRange(r, doc)
      if (!rg) return false
      if (kind == "delete") tr.delete(rg[0], rg[1])
      else tr.insertText(randText(r, 2), rg[0], rg[1])
      return true
    }
    case "split": {
      let list = textPositions(doc)
      if (!list.length) return false
      tr.split(r.pick(list), r.chance(0.2) ? 2 : 1)
      return true
    }
    case "join": {
      let list = blockPositions(doc, n => n.isBlock).filter(p => p > 0)
      if (!list.length) return false
      let p = r.pick(list)
      tr.join(p)
      return true
    }
    case "attr": {
      let list = blockPositions(doc, n => n.type.name == "heading" || n.type.name == "ordered_list")
      if (!list.length) return false
      let pos = r.pick(list), node = doc.nodeAt(pos)
      tr.setNodeAttribute(pos, node.type.name == "heading" ? "level" : "order", r.range(1, 6))
      return true
    }
    case "blockType": {
      let rg = pickRange(r, doc)
      if (!rg) return false
      let type = r.pick([schema.nodes.heading, schema.nodes.paragraph, schema.nodes.code_block])
      tr.setBlockType(rg[0], rg[1], type, type.name == "heading" ? { level: r.range(1, 3) } : null)
      return true
    }
    case "mark": case "unmark": {
      let rg = pickRange(r, doc)
      if (!rg) return false
      let type = r.pick([schema.marks.em, schema.marks.strong, schema.marks.code])
      if (kind == "mark") tr.addMark(rg[0], rg[1], type.create())
      else tr.removeMark(rg[0], rg[1], type)
      return true
    }
    case "wrap": case "lift": {
      let rg = pickRange(r, doc)
      if (!rg) return false
      let range = doc.resolve(rg[0]).blockRange(doc.resolve(rg[1]))
      if (!range) return false
      if (kind == "lift") {
        let target = liftTarget(range)
        if (target == null) return false
        tr.lift(range, target)
      } else {
        let wrapping = findWrapping(range, r.pick([schema.nodes.bullet_list, schema.nodes.ordered_list, schema.nodes.blockquote]))
        if (!wrapping) return false
        tr.wrap(range, wrapping)
      }
      return true
    }
    case "insertNode": {
      let list = blockPositions(doc, n => n.isBlock).concat([doc.content.size])
      let nodes = genInsert(r, S)
      tr.insert(r.pick(list), nodes)
      return true
    }
  }
  return false
}

// markAtRandom places one suggestion mark by hand: on a text range, on a
// top-level block, or a modification on a block, with ids that may
// collide with the edits' ones.
function markAtRandom(r, S, tr) {
  let schema = S.schema, doc = tr.doc, id = r.pick(IDS)
  let kind = r.weighted([[4, "text"], [2, "block"], [3, "modification"], [1, "zwsp"]])
  let topLevel = []
  doc.forEach((node, offset) => topLevel.push(offset))
  switch (kind) {
    case "text": {
      let rg = pickRange(r, doc)
      if (rg) tr.addMark(rg[0], rg[1], schema.marks[r.pick(["insertion", "deletion"])].create({ id }))
      return
    }
    case "zwsp": {
      let list = textPositions(doc)
      if (list.length) tr.insert(r.pick(list), schema.text("\u200B", [schema.marks[r.pick(["insertion", "deletion"])].create({ id })]))
      return
    }
    case "block": {
      let pos = r.pick(topLevel), node = doc.nodeAt(pos)
      let type = schema.marks[r.pick(["insertion", "deletion"])]
      tr.setNodeMarkup(pos, null, null, type.create({ id }).addToSet(node.marks))
      if (r.chance(0.6) && node.inlineContent && node.content.size)
        tr.addMark(pos + 1, pos + 1 + node.content.size, type.create({ id }))
      return
    }
    case "modification": {
      let pos = r.pick(topLevel), node = doc.nodeAt(pos)
      let attrs = r.weighted([
        [5, () => {
          let attrName = node.type.name == "heading" ? "level" : node.type.name == "ordered_list" ? "order" : r.pick(["level", "order", "src"])
          let previousValue = r.chance(0.85) ? r.range(1, 3) : r.pick([null, "x"])
          return { type: "attr", attrName, previousValue, newValue: node.attrs[attrName] ?? null }
        }],
        [2, () => ({ type: "nodeType", previousValue: r.pick(["paragraph", "heading", "code_block", "blockquote", "nope", null]), newValue: node.type.name })],
        [1, () => ({ type: "mark", previousValue: r.pick([null, { type: "strong" }, { type: "link", attrs: { href: "x" } }, "strong"]), newValue: { type: "em" } })],
        [1, () => ({ type: r.pick(["attr", "other"]), attrName: null })],
      ])()
      tr.setNodeMarkup(pos, null, null, schema.marks.modification.create({ id, ...attrs }).addToSet(node.marks))
      return
    }
  }
}

// suggestionIDs lists the ids of doc's suggestion marks, in order of
// first appearance.
function suggestionIDs(doc) {
  let ids = []
  doc.descendants(node => {
    for (let m of node.marks) if (SUGGESTION_MARKS.includes(m.type.name) && !ids.some(x => x === m.attrs.id)) ids.push(m.attrs.id)
  })
  return ids
}

// ---------------------------------------------------------------------------

export function generate({ seed, count }, write) {
  let schema = loadSchema("suggest"), S = new SchemaInfo("suggest", schema)
  write(headerLine({
    format: "pmauthority-suggest-conformance", version: FORMAT_VERSION, seed, count, schemas: ["suggest"],
    packages: ["@handlewithcare/prosemirror-suggest-changes", "prosemirror-model", "prosemirror-transform", "prosemirror-state"],
  }))
  let stats = new Map(), bump = k => stats.set(k, (stats.get(k) || 0) + 1)
  for (let id = 0; id < count; id++) {
    let r = new Rand(seed ^ caseSalt, id)
    let edits = { suggested: 0 }
    let doc = genSuggestDoc(r, S, edits)
    bump(edits.suggested ? "with suggested edits" : "without suggested edits")
    let c = { id, doc: doc.toJSON() }
    for (let [name, command] of [["revert", revertSuggestions], ["apply", applySuggestions]]) {
      let raw = runCommand(command, doc, false), fixed = runCommand(command, doc, true)
      c[name] = fixed
      if (raw.error !== undefined && fixed.error === undefined) { c[name + "Throws"] = raw.error; bump(name + " throws in JS") }
      bump(name + (fixed.error === undefined ? " ok" : " error"))
    }
    let ids = suggestionIDs(doc)
    if (ids.length && r.chance(0.8)) ids = [ids[r.int(ids.length)]].concat(r.chance(0.3) ? [ids[r.int(ids.length)]] : [])
    if (r.chance(0.1)) ids.push(r.pick(IDS))
    c.byId = []
    for (let sid of ids.filter((x, i, a) => a.indexOf(x) == i)) {
      let one = { id: sid }
      for (let revert of [true, false]) {
        let ref = referenceByID(schema, doc, sid, revert)
        one[revert ? "revert" : "apply"] = ref
        let pkg = runCommand(revert ? revertSuggestion(sid) : applySuggestion(sid), doc, true)
        let firstPass = runCommand(revert ? revertSuggestion(sid) : applySuggestion(sid), Node.fromJSON(hiddenSchema(),
          renameMarks(c.doc, "modification", "hiddenModification")), true)
        if (firstPass.error === undefined && packageFlawless(doc, sid, revert, firstPass.steps.length)) {
          if (JSON.stringify(pkg) != JSON.stringify(pkg.error === undefined ? { doc: ref.doc, steps: pkg.steps } : ref))
            throw new Error(`case ${id}: the reference for id ${JSON.stringify(sid)} differs from the package where it has no flaw`)
          bump("by id: reference = package")
        } else {
          bump("by id: package flawed or failing")
        }
      }
      c.byId.push(one)
    }
    write(JSON.stringify(c) + "\n")
  }
  return stats
}

if (process.argv[1] && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1])) runGenerator("gen-suggest", generate)

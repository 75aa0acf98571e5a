// Generates export conformance cases: random documents of the basic
// schema (prosemirror-schema-basic + prosemirror-schema-list) and, one case
// in three, of prosemirror-markdown's own schema (whose lists have a tight
// attribute and code blocks params), with what the JavaScript libraries
// export for each:
//
//   text      doc.textBetween(0, doc.content.size, "\n\n", leafText) with
//             leafText = hard_break → "\n", other leaves → ""
//   markdown  prosemirror-markdown's defaultMarkdownSerializer.serialize(doc)
//             (or markdownError, the message it throws)
//   html      DOMSerializer.fromSchema(schema).serializeFragment(doc.content)
//             in a jsdom document, the top nodes' outerHTML concatenated
//             (the schema is the original JS one, with its toDOM functions;
//             conformance/schemas/markdown.json writes prosemirror-markdown's
//             as templates)
//
// Line 1 is a header {format, version, seed, count, schemas, versions};
// every other line is {id, schema, doc, text, markdown | markdownError, html}.
// The documents mix nested marks, links with odd characters (and autolinks),
// code with backticks, images, hard breaks, headings, lists, blockquotes,
// code blocks, characters Markdown escapes, whitespace at mark edges and
// non-ASCII text. They never hold a javascript:, vbscript: or data: URL,
// which the Go HTML export leaves out on purpose (export/html.go).
//
// Usage: node gen-export.mjs [--seed N] [--count N] [--out FILE]
//
// The same seed and count give the same file byte for byte. Without
// --seed a random seed is chosen; it is printed on stderr either way.

import fs from "node:fs"
import { fileURLToPath } from "node:url"
import { Node, Schema, DOMSerializer } from "prosemirror-model"
import { defaultMarkdownSerializer, schema as markdownSchema } from "prosemirror-markdown"
import { JSDOM } from "jsdom"
import { originalSpecs } from "./schema-specs.mjs"
import { Rng, parseGenArgs } from "./gen-cli.mjs"

export const FORMAT_VERSION = 1

// ---- random content --------------------------------------------------------

const words = ["a", "word", "foo", "bar_baz", "snake_case_name", "x", "42", "3.14", "é", "naïve",
  "日本語", "😀", "👍🏽", "e\u0301", "שלום", "\u00a0", "\u3000", "\u2028", "\u200b", "\ufeff",
  "http://example.com", "https://ex.am/p_q*r", "mailto:a@b.c", "foo:bar", "www.x.org"]
const specials = ["*", "**", "_", "__", "`", "``", "```", "````", "~", "~~", "#", "##", "###", "#######",
  "+", "+ ", "-", "- ", "--", "---", ".", "1.", "1. ", "10.", "!", "![", "[", "]", "[x]", "<", ">",
  "&", "&amp;", "&#42;", "\\", "\\*", "\"", "'", "(", ")", "|", "=", "<b>", "<script>alert(1)</script>",
  "javascript:alert(1)", "a_b", "_a", "a_", "1)", "> ", "\t", "\n", "\n\n", "\r", " "]

function randomText(rng, maxPieces = 5) {
  let out = ""
  let n = rng.range(1, maxPieces)
  for (let i = 0; i < n; i++) {
    if (rng.chance(0.3)) out += rng.pick([" ", "  ", "\t", "\n", " \n "])
    out += rng.chance(0.45) ? rng.pick(specials) : rng.pick(words)
    if (rng.chance(0.5)) out += " "
  }
  if (rng.chance(0.2)) out = rng.pick([" ", "  ", "\n", "\u00a0"]) + out
  return out
}

const hrefs = ["http://example.com", "https://example.com/a_b*c", "https://ex.am/p?q=1&r=2#f",
  "/relative/path", "#anchor", "mailto:x@y.z", "ftp://files", "foo:bar", "a b", "(paren)", "x)y(z",
  "quote\"d", "back\\slash", "<angle>", "é/日本", "", "?", "http://x.y/ space", "https://example.com/`tick`"]
const titles = [null, null, null, "title", "a \"quoted\" title", "it's", "<b>&", "", "t(x)", "é😀"]

function randomLink(rng) {
  let href = rng.pick(hrefs)
  if (rng.chance(0.3)) href += rng.pick(["_", "*", "[", "]", "(", ")", "<", ">", "&", "\"", " ", "😀"])
  return { type: "link", attrs: { href, title: rng.pick(titles) } }
}

const markOrder = ["link", "em", "strong", "code"]

// evolve changes a mark set a little, so that neighbouring pieces share
// some marks (the interesting case for nesting).
function evolve(rng, marks) {
  let set = new Map(marks.map(m => [m.type, m]))
  let steps = rng.range(0, 2)
  for (let i = 0; i < steps; i++) {
    let t = rng.pick(markOrder)
    if (set.has(t)) set.delete(t)
    else set.set(t, t == "link" ? randomLink(rng) : { type: t })
  }
  if (set.has("link") && rng.chance(0.15)) set.set("link", randomLink(rng))
  return markOrder.filter(t => set.has(t)).map(t => set.get(t))
}

function randomInline(rng, noBreaks = false) {
  let content = [], marks = []
  let n = rng.range(0, 7)
  for (let i = 0; i < n; i++) {
    marks = evolve(rng, marks)
    let r = rng.next(), node
    if (r < 0.72) {
      let text = randomText(rng)
      if (rng.chance(0.2)) text = rng.pick([" ", "  ", " x ", "x ", " x"]).replace("x", text.trim() || "x")
      node = { type: "text", text }
      // An autolink: the text is the href.
      if (rng.chance(0.08)) {
        let href = rng.pick(["http://example.com", "https://a.b/c_d", "mailto:x@y.z", "foo:bar"])
        node.text = href
        marks = markOrder.filter(t => t != "link" && rng.chance(0.2)).map(t => ({ type: t }))
        marks.unshift({ type: "link", attrs: { href, title: null } })
      }
    } else if (r < 0.86) {
      if (noBreaks) continue
      node = { type: "hard_break" }
    } else {
      let attrs = { src: rng.pick(["img.png", "a b.png", "p(1).png", "https://x.y/i.jpg?a=1&b=2", "\"q\".gif", "é.svg", ""]) }
      if (rng.chance(0.6)) attrs.alt = rng.chance(0.8) ? randomText(rng, 2) : null
      if (rng.chance(0.4)) attrs.title = rng.pick(titles)
      node = { type: "image", attrs }
    }
    let useMarks = node.type == "text" ? marks : marks.filter(() => rng.chance(0.6))
    if (node.type == "text" && useMarks.some(m => m.type == "code") && rng.chance(0.5))
      node.text = rng.pick(["`", "``", "a`b", "` x `", "```", "x``y`", " ` "]) + node.text
    if (useMarks.length) node.marks = useMarks
    content.push(node)
  }
  return content
}

function randomCode(rng) {
  let lines = [], n = rng.range(0, 4)
  for (let i = 0; i < n; i++)
    lines.push(rng.pick(["", "code", "  indented", "```", "````js", "``", "a ` b", "*not em*", "<tag>&", "\t\ttab", "😀"]) +
      (rng.chance(0.3) ? randomText(rng, 2) : ""))
  return lines.join("\n")
}

// md: the document is of prosemirror-markdown's schema (headings hold no
// hard breaks, a list item may start with any block, lists may be tight,
// code blocks have params).
function randomBlock(rng, depth, md) {
  let r = rng.next()
  if (depth > 2) r = r * 0.55
  if (r < 0.34) return withContent({ type: "paragraph" }, randomInline(rng))
  if (r < 0.44) {
    let level = rng.chance(0.9) ? rng.range(1, 6) : rng.pick([0, 7])
    return withContent({ type: "heading", attrs: { level } }, randomInline(rng, md))
  }
  if (r < 0.52) {
    let text = randomCode(rng)
    let node = withContent({ type: "code_block" }, text ? [{ type: "text", text }] : [])
    if (md && rng.chance(0.5)) node.attrs = { params: rng.pick(["", "js", "a b", "~~~", "x`y", "é"]) }
    return node
  }
  if (r < 0.55) return { type: "horizontal_rule" }
  if (r < 0.7) return { type: "blockquote", content: randomBlocks(rng, depth + 1, 1, 3, md) }
  let ordered = rng.chance(0.5)
  let items = []
  let n = rng.range(1, 4)
  for (let i = 0; i < n; i++) {
    let item = md && rng.chance(0.3) ? [] : [withContent({ type: "paragraph" }, randomInline(rng))]
    if (!item.length || rng.chance(0.35)) item.push(...randomBlocks(rng, depth + 1, 1, 2, md))
    items.push({ type: "list_item", content: item })
  }
  let node = { type: ordered ? "ordered_list" : "bullet_list", content: items }
  if (ordered && rng.chance(0.6)) node.attrs = { order: rng.pick([1, 0, 2, 3, 9, 10, 99, 100, -1, 2.5]) }
  if (md && rng.chance(0.6)) node.attrs = { ...node.attrs, tight: rng.chance(0.5) }
  return node
}

function withContent(node, content) {
  if (content.length) node.content = content
  return node
}

export function randomBlocks(rng, depth, min, max, md) {
  let out = [], n = rng.range(min, max)
  for (let i = 0; i < n; i++) out.push(randomBlock(rng, depth, md))
  return out
}

// ---- the JS answers ----------------------------------------------------------

function leafText(node) { return node.type.name == "hard_break" ? "\n" : "" }

function versionOf(pkg) {
  let file = new URL(`./node_modules/${pkg}/package.json`, import.meta.url)
  return JSON.parse(fs.readFileSync(file, "utf8")).version
}

export function generate({ seed, count }, write) {
  let schemas = { basic: new Schema(originalSpecs().basic), markdown: markdownSchema }
  let document = new JSDOM("").window.document
  write(JSON.stringify({
    format: "pmauthority-export-conformance",
    version: FORMAT_VERSION,
    seed,
    count,
    schemas: Object.keys(schemas),
    versions: Object.fromEntries(["prosemirror-model", "prosemirror-markdown", "prosemirror-schema-basic",
      "prosemirror-schema-list", "jsdom"].map(p => [p, versionOf(p)])),
  }) + "\n")
  for (let id = 0; id < count; id++) {
    let rng = new Rng((seed ^ Math.imul(id + 1, 0x9e3779b1)) >>> 0)
    let schemaName = id % 3 == 2 ? "markdown" : "basic", schema = schemas[schemaName]
    let docJSON = { type: "doc", content: randomBlocks(rng, 0, 1, 6, schemaName == "markdown") }
    let doc = Node.fromJSON(schema, docJSON)
    let record = { id, schema: schemaName, doc: doc.toJSON() }
    record.text = doc.textBetween(0, doc.content.size, "\n\n", leafText)
    try {
      record.markdown = defaultMarkdownSerializer.serialize(doc)
    } catch (e) {
      record.markdownError = String(e.message)
    }
    let frag = DOMSerializer.fromSchema(schema).serializeFragment(doc.content, { document })
    record.html = [...frag.childNodes].map(n => n.outerHTML).join("")
    write(JSON.stringify(record) + "\n")
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1])) {
  let opts = parseGenArgs("gen-export", process.argv.slice(2))
  console.error(`gen-export: seed=${opts.seed} count=${opts.count}`)
  let fd = opts.out ? fs.openSync(opts.out, "w") : 1, buf = []
  let size = 0
  let flush = () => { if (buf.length) { fs.writeSync(fd, buf.join("")); buf = []; size = 0 } }
  generate(opts, line => { buf.push(line); size += line.length; if (size > 1 << 20) flush() })
  flush()
  if (opts.out) fs.closeSync(fd)
}

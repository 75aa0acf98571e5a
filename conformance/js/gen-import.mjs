// Generates import conformance cases: Markdown and the document that
// prosemirror-markdown's MarkdownParser makes of it with a conformance
// schema, configured as its defaultMarkdownParser is:
//
//   new MarkdownParser(schema, markdownit("commonmark", {html: false}),
//                      defaultMarkdownParser.tokens)
//
// Two kinds of Markdown, alternating: (a) a random document of
// gen-export.mjs serialized with defaultMarkdownSerializer, and (b)
// Markdown put together from every CommonMark construct (headings of both
// kinds, emphasis and its flanking edge cases, code spans, indented and
// fenced code, blockquotes with lazy lines, lists of every kind, breaks,
// links of every kind with odd and dangerous URLs, images, HTML, entities,
// escapes, tabs, trailing spaces, CRLF, deep nesting …).
//
// Line 1 is a header {format, version, seed, count, schemas, versions};
// every other line is {id, schema, kind, markdown, doc} or, when the
// parser throws, {id, schema, kind, markdown, error} (its message).
//
// Usage: node gen-import.mjs [--seed N] [--count N] [--out FILE]
//
// The same seed and count give the same file byte for byte. Without
// --seed a random seed is chosen; it is printed on stderr either way.

import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { Node, Schema } from "prosemirror-model"
import { MarkdownParser, defaultMarkdownParser, defaultMarkdownSerializer, schema as pmMarkdownSchema } from "prosemirror-markdown"
import MarkdownIt from "markdown-it"
import { loadSchema } from "./schemas.mjs"
import { repoRoot } from "./schema-specs.mjs"
import { randomBlocks } from "./gen-export.mjs"
import { Rng, parseGenArgs } from "./gen-cli.mjs"

export const FORMAT_VERSION = 1

// ---- generated Markdown ------------------------------------------------------

const words = ["a", "foo", "bar", "baz qux", "x", "42", "é", "naïve", "日本語", "😀", "Straße", "ǅ", "\u00a0", "\u3000",
  "\u2028", "\u200b", "\ufeff", "snake_case", "a*b", "a_b_c", "2*3*4", "foo-bar", "x.y", "<b>", "</i>", "<!-- c -->",
  "<br/>", "<a href=\"x\">", "&amp;", "&lt;", "&copy;", "&nbsp;", "&#42;", "&#x2A;", "&#0;", "&#1234567;", "&#x110000;",
  "&#xD800;", "&#128512;", "&bogus;", "&AMP;", "&ampx;", "&", "\\*", "\\_", "\\\\", "\\`", "\\#", "\\[", "\\a", "\\ ",
  "\\&amp;", "\\<", "!", "#", "[", "]", "(", ")", "|", "~", "^", "@", "+", "=", "$", "%", "{", "}", "\t", "  ", " "]

const urls = ["http://example.com", "https://example.com/a_b*c", "https://ex.am/p?q=1&r=2#f", "/rel/path", "#anchor",
  "mailto:x@y.z", "ftp://files/x", "foo:bar", "javascript:alert(1)", "JAVASCRIPT:alert(1)", "java\tscript:x",
  "javascript&colon;alert(1)", "vbscript:msgbox", "file:///etc/passwd", "data:text/html;base64,PHNjcmlwdD4=",
  "data:image/png;base64,iVBORw0KGgo=", "data:image/svg+xml;base64,PHN2Zz4=", "DATA:image/gif;base64,R0lG",
  "http://müller.de/straße", "https://日本.jp/パス", "http://xn--mller-kva.de/", "http://ex.com/%20a%zz%2F",
  "http://ex.com/a b", "<http://ex.com/a b>", "<>", "", "http://ex.com/(a)b", "http://ex.com/a(b", "a\\)b",
  "http://user:pass@host.com:8080/p", "http://[::1]:80/x", "//proto.rel/x", "http://a.b/&amp;c", "http://a.b/&#x41;",
  "http://a.b/\\*x", "http://ÉXAMPLE.com", "HTTP://EX.com", "http://a.b/ü?ü=ü#ü", "http://a..b/", "https://a.b/%E2%82%AC",
  "https://a.b/%e2%82", "<a\\>b>", "http://a.b/`c`", "x<y", "http://a_b.c/", "http://-a.b/", "http://a.b:99999/",
  "https://example.com/" + "a".repeat(70), "http://" + "b".repeat(70) + ".com/", "mailto:A@b.C", "tel:+1-2",
  "http://a.b/\u00a0", "http://☃.net/", "http://xn--n3h.net/", "http://xn--bad-.net/"]

const titles = ["", " \"t\"", " 'single'", " (paren)", " \"a \\\" quote\"", " \"&amp; &copy;\"", " \"multi\nline\"", " \"é😀\"",
  " \"unclosed", " 'it''s'", " (a(b)"]

function pick(rng, a) { return rng.pick(a) }

function inlineMd(rng, depth = 0) {
  let n = rng.range(1, 6), out = ""
  for (let i = 0; i < n; i++) out += inlinePiece(rng, depth)
  return out
}

function inlinePiece(rng, depth) {
  let r = rng.next()
  if (depth > 2) r *= 0.35
  if (r < 0.35) {
    let w = pick(rng, words)
    return rng.chance(0.5) ? w + " " : w
  }
  if (r < 0.45) {
    let d = pick(rng, ["*", "_", "**", "__", "***", "___", "*", "_"])
    let inner = inlineMd(rng, depth + 1)
    let pre = pick(rng, ["", "", " ", "a", "(", "\"", "_", "*"]), post = pick(rng, ["", "", " ", "b", ")", ".", "_", "*"])
    let close = rng.chance(0.85) ? d : pick(rng, ["*", "_", "**", ""])
    if (rng.chance(0.15)) inner = " " + inner
    return pre + d + inner + close + post
  }
  if (r < 0.52) {
    let ticks = pick(rng, ["`", "``", "```", "`"])
    let body = pick(rng, ["code", " a ", "  ", " ", "a`b", "``", " `x` ", "*x*", "a\nb", "a  \n  b", "&amp;", "\\*", "<b>", "\t"])
    let close = rng.chance(0.85) ? ticks : pick(rng, ["`", "``", ""])
    return ticks + body + close
  }
  if (r < 0.64) {
    let text = rng.chance(0.15) ? "" : inlineMd(rng, depth + 2)
    let url = pick(rng, urls), title = rng.chance(0.3) ? pick(rng, titles) : ""
    let form = rng.next()
    if (form < 0.55) return `[${text}](${url}${title})`
    if (form < 0.7) return `[${text}][${pick(rng, ["ref", "Ref", "REF", "other", "ünï", "ẞ", "missing", " ref "])}]`
    if (form < 0.8) return `[${pick(rng, ["ref", "other", "ünï", "missing"])}]`
    if (form < 0.9) return `[${pick(rng, ["ref", "other"])}][]`
    return `[${text}](${pick(rng, ["", " ", "<>", "  <" + url + ">  "])}${title})`
  }
  if (r < 0.72) {
    let alt = pick(rng, ["", "alt", "*em* alt", "`c` alt", "a&amp;b", "&amp;b", "\\*x", "a\\*x", "![in](i.png)", "[l](u)",
      "a\nb", "a  \nb", "**b**", "<http://a.b>", "x *y*", "  sp", "a_b_", inlineMd(rng, depth + 2)])
    let url = pick(rng, urls), title = rng.chance(0.3) ? pick(rng, titles) : ""
    return rng.chance(0.8) ? `![${alt}](${url}${title})` : `![${alt}][ref]`
  }
  if (r < 0.8) {
    let u = pick(rng, ["http://a.b", "https://ex.com/p?q=a&b", "mailto:x@y.z", "x@y.z", "a.b@c-d.e", "foo:bar",
      "javascript:alert(1)", "javascript:x*y*", "data:image/png;base64,AA", "data:text/plain,x", "http://a.b/%41%e2%82%ac%2f",
      "http://müller.de", "http://xn--mller-kva.de/%C3%BC", "HTTP://X.Y", "a b", "http://a<b", "x@-y.z", "ab:",
      "file:///x", "vbscript:x", "irc://x_y", "http://a.b/`x`", "m@x", "a+b@c.d"])
    return "<" + u + ">"
  }
  if (r < 0.86) return pick(rng, ["  \n", "\\\n", "\n", " \n", "\t\n", "   \n  ", "\n\t", "\\\\\n", " \\\n"])
  if (r < 0.92) return pick(rng, ["<span>", "<b>bold</b>", "<a href=\"javascript:x\">", "<!-- -->", "<?php ?>", "<x y='z'>",
    "</div>", "<![CDATA[x]]>", "<!DOCTYPE html>", "<img src=x onerror=alert(1)>"])
  return pick(rng, ["&copy;", "&#35;", "&#X22;", "&quot;", "&nosuch;", "&amp", "\\!", "\\-", "\\>", "\\\\*", "*", "_",
    "**", "__", "a*", "*a", "_a", "a_", "**a*", "*a**", "__a_", "_a__", "*(*a*)*", "_(_a_)_", "a**b**c", "a__b__c",
    "*a *b* c*", "**a **b** c**", "***a***", "*a**b*", "*\u00a0a*", "*a\u00a0*", "_é_", "é_a_", "[", "]", "[]", "![",
    "[a]", "[a] (b)", "[a](", "[a](b", "[x]: not a def", "\t", "~~s~~", "# not heading"])
}

function fenceBlock(rng) {
  let ch = pick(rng, ["`", "~"]), n = rng.range(3, 5), fence = ch.repeat(n)
  let info = pick(rng, ["", "js", " js ", "a b c", "x`y", "~~~", "\\*js", "&amp;", "é", "  ", "{.class}"])
  let lines = []
  let k = rng.range(0, 4)
  for (let i = 0; i < k; i++) lines.push(pick(rng, ["code", "  indented", "", "\ttab", "```", "~~~", "*x*", "<b>", "&amp;", "   "]))
  let close = rng.chance(0.85) ? ch.repeat(n + rng.range(0, 1)) : ""
  let indent = pick(rng, ["", "", " ", "  ", "   "])
  return indent + fence + info + "\n" + lines.map(l => indent + l).join("\n") + (lines.length ? "\n" : "") + (close ? indent + close + pick(rng, ["", " ", "  "]) : "")
}

function prefixLines(text, first, rest) {
  return text.split("\n").map((l, i) => (i == 0 ? first : rest) + l).join("\n")
}

function blockMd(rng, depth) {
  let r = rng.next()
  if (depth > 3) r *= 0.5
  if (r < 0.28) {
    let lines = [], n = rng.range(1, 3)
    for (let i = 0; i < n; i++) lines.push(pick(rng, ["", "", "  ", "   ", "\t"]) + inlineMd(rng))
    return lines.join("\n")
  }
  if (r < 0.36) {
    let level = rng.range(1, 7)
    return pick(rng, ["", " ", "   "]) + "#".repeat(level) + pick(rng, [" ", "  ", "\t", ""]) + inlineMd(rng) +
      pick(rng, ["", " #", " ##", "#", " \\#", "  "])
  }
  if (r < 0.41) return inlineMd(rng) + "\n" + pick(rng, ["===", "---", "=", "-", "  ===  ", "= =", "--- -"])
  if (r < 0.46) return pick(rng, ["***", "---", "___", " * * *", "- - -", "_____", "**", "--", "*-*"])
  if (r < 0.52) {
    let lines = [], n = rng.range(1, 3)
    for (let i = 0; i < n; i++) lines.push(pick(rng, ["    ", "\t", "     ", "  \t", "    \t"]) + pick(rng, ["code", "a  b", "*x*", "", "&amp;", "\tx"]))
    return lines.join("\n")
  }
  if (r < 0.6) return fenceBlock(rng)
  if (r < 0.72) {
    let inner = blocksMd(rng, depth + 1, 1, 3)
    let marker = pick(rng, ["> ", ">", ">  ", " > ", ">\t"])
    if (rng.chance(0.3)) {
      // lazy continuation
      let lines = inner.split("\n")
      return lines.map((l, i) => (i > 0 && rng.chance(0.4) ? "" : marker) + l).join("\n")
    }
    return prefixLines(inner, marker, marker.trimEnd() == ">" ? marker : marker)
  }
  if (r < 0.74) {
    // deep nesting: around markdown-it's maxNesting of 20
    let d = rng.range(8, 24), kind = rng.next()
    if (kind < 0.4) return ">".repeat(d) + " " + inlineMd(rng) + (rng.chance(0.5) ? "\n" + inlineMd(rng) : "") + (rng.chance(0.5) ? "\n\nafter" : "")
    if (kind < 0.7) return Array.from({ length: d }, () => pick(rng, ["- ", "* ", "1. ", "> "])).join("") + inlineMd(rng) + (rng.chance(0.5) ? "\n\nnext para\n- item" : "")
    let out = []
    for (let i = 0; i < d; i++) out.push("  ".repeat(i) + "- " + pick(rng, ["a", "b", "c"]))
    if (rng.chance(0.5)) out.push("", "tail")
    return out.join("\n")
  }
  // lists
  let ordered = rng.chance(0.45)
  let start = rng.pick([1, 1, 0, 2, 9, 10, 123456789, 1234567890, 7])
  let delim = pick(rng, [".", ")"]), bullet = pick(rng, ["-", "*", "+"])
  let items = [], n = rng.range(1, 4), loose = rng.chance(0.3)
  for (let i = 0; i < n; i++) {
    let marker = ordered ? (i == 0 ? String(start) : String(start + i)) + delim : bullet
    let sp = pick(rng, [" ", " ", "  ", "   ", "\t", "     "])
    let body
    let kind = rng.next()
    if (kind < 0.55) body = inlineMd(rng)
    else if (kind < 0.65) body = ""
    else if (kind < 0.75) body = "```\ncode\n```"
    else if (kind < 0.8) body = "    indented code"
    else body = blocksMd(rng, depth + 1, 1, 2)
    let pad = " ".repeat(marker.length + (sp == "\t" ? 1 : sp.length))
    if (sp.length >= 5 || sp == "\t") pad = " ".repeat(marker.length + 1)
    items.push(prefixLines(body, marker + sp, pad))
  }
  return items.join(loose ? "\n\n" : "\n")
}

function blocksMd(rng, depth, min, max) {
  let n = rng.range(min, max), out = []
  for (let i = 0; i < n; i++) out.push(blockMd(rng, depth))
  return out.join(pick(rng, ["\n\n", "\n", "\n\n\n", "\n  \n"]))
}

const definitions = ["[ref]: http://example.com/ref", "[Ref]: /dup \"dup title\"", "[other]: <http://o.th/er> 'other'",
  "[ünï]: http://ü.ni/", "[ss]: /ss", "[ref]: javascript:alert(1)", "[other]: data:text/html,x", "[bad]: <a b>",
  "  [ref]: /indented\n  \"title on next line\"", "[ref]:\n/next-line", "[x]: /x \"t\" trailing", "[ẞ]: /sharp-s",
  "[REF]: /upper", "[multi\nline]: /m"]

function generatedMarkdown(rng) {
  let md = blocksMd(rng, 0, 1, 5)
  if (rng.chance(0.5)) {
    let defs = [], n = rng.range(1, 3)
    for (let i = 0; i < n; i++) defs.push(pick(rng, definitions))
    md = rng.chance(0.5) ? defs.join("\n") + "\n\n" + md : md + "\n\n" + defs.join("\n")
  }
  let r = rng.next()
  if (r < 0.1) md = md.replace(/\n/g, "\r\n")
  else if (r < 0.13) md = md.replace(/\n/g, "\r")
  if (rng.chance(0.1)) md += pick(rng, ["\n", "\n\n", "  ", "\t", " \n "])
  if (rng.chance(0.05)) md = pick(rng, ["\t", " ", "\u00a0", "\ufeff"]) + md
  return md
}

// ---- the JS answers ----------------------------------------------------------

function versionOf(pkg) {
  let file = new URL(`./node_modules/${pkg}/package.json`, import.meta.url)
  return JSON.parse(fs.readFileSync(file, "utf8")).version
}

// The schemas of the cases, with how often each is used.
const schemaWeights = { basic: 35, markdown: 40, tables: 10, stress: 10, text: 5 }

function loadImportSchemas() {
  let out = {}
  for (let name of Object.keys(schemaWeights)) {
    out[name] = name == "markdown"
      ? new Schema(JSON.parse(fs.readFileSync(path.join(repoRoot, "conformance/schemas/markdown.json"), "utf8")))
      : loadSchema(name)
  }
  return out
}

export function generate({ seed, count }, write) {
  let schemas = loadImportSchemas()
  let tokenizer = MarkdownIt("commonmark", { html: false })
  let parsers = {}
  write(JSON.stringify({
    format: "pmauthority-import-conformance",
    version: FORMAT_VERSION,
    seed,
    count,
    schemas: Object.keys(schemas),
    versions: Object.fromEntries(["prosemirror-model", "prosemirror-markdown", "markdown-it"].map(p => [p, versionOf(p)])),
  }) + "\n")
  for (let id = 0; id < count; id++) {
    let rng = new Rng((seed ^ Math.imul(id + 1, 0x9e3779b1)) >>> 0)
    let schemaName = rng.weighted(schemaWeights)
    let kind = id % 2 == 0 ? "serialized" : "generated"
    let markdown
    if (kind == "serialized") {
      let md = rng.chance(0.5)
      let docJSON = { type: "doc", content: randomBlocks(rng, 0, 1, 6, md) }
      let doc = Node.fromJSON(md ? pmMarkdownSchema : schemas.basic, docJSON)
      try {
        markdown = defaultMarkdownSerializer.serialize(doc)
      } catch (e) {
        kind = "generated"
      }
    }
    if (kind == "generated") markdown = generatedMarkdown(rng)
    let record = { id, schema: schemaName, kind, markdown }
    try {
      let parser = parsers[schemaName] ||= new MarkdownParser(schemas[schemaName], tokenizer, defaultMarkdownParser.tokens)
      record.doc = parser.parse(markdown).toJSON()
    } catch (e) {
      record.error = String(e.message)
    }
    write(JSON.stringify(record) + "\n")
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1])) {
  let opts = parseGenArgs("gen-import", process.argv.slice(2))
  console.error(`gen-import: seed=${opts.seed} count=${opts.count}`)
  let fd = opts.out ? fs.openSync(opts.out, "w") : 1, buf = []
  let size = 0
  let flush = () => { if (buf.length) { fs.writeSync(fd, buf.join("")); buf = []; size = 0 } }
  generate(opts, line => { buf.push(line); size += line.length; if (size > 1 << 20) flush() })
  flush()
  if (opts.out) fs.closeSync(fd)
}

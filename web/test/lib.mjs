// Helpers of the browser tests (browser-editing.mjs): arguments, pages
// that record their errors, the editor's state as the page sees it, and
// the server's document.

import fs from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))

export const timeout = 20000

// parseArgs reads --url, --out, --chromium, --headed and --only (a
// comma-separated list of scenario names).
export function parseArgs(argv, usage) {
  let args = { url: process.env.PMA_URL || "", out: path.join(here, "out"), chromium: "/usr/bin/chromium", headed: false, only: "", app: "" }
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i]
    if (a == "--headed") args.headed = true
    else if (["--url", "--out", "--chromium", "--only", "--app"].includes(a) && i + 1 < argv.length) args[a.slice(2)] = argv[++i]
    else throw new Error(`unknown argument ${a} (${usage})`)
  }
  if (!args.url) throw new Error(usage)
  args.url = args.url.replace(/\/+$/, "")
  args.out = path.resolve(args.out)
  fs.mkdirSync(args.out, { recursive: true })
  return args
}

export function log(...parts) {
  console.log(`[browser ${new Date().toISOString().slice(11, 23)}]`, ...parts)
}

export function check(cond, message) {
  if (!cond) throw new Error("check failed: " + message)
}

// newID returns a fresh document id.
export function newID(prefix) {
  return prefix + "-" + Date.now().toString(36) + "-" + Math.floor(Math.random() * 1e6).toString(36)
}

// openPage opens a page in context that records page errors, console
// errors and answers of 400 or more in page.errors.
export async function openPage(context, label) {
  let page = await context.newPage()
  page.setDefaultTimeout(timeout)
  page.errors = []
  page.label = label
  page.on("pageerror", e => page.errors.push(`${label}: ${e.message}`))
  page.on("console", m => { if (m.type() == "error") page.errors.push(`${label} console: ${m.text()}`) })
  page.on("response", r => { if (r.status() >= 400) page.errors.push(`${label}: ${r.status()} for ${r.url()}`) })
  return page
}

// newUser is a browser context whose tabs start with name (the last name
// used, in localStorage), and its first page.
export async function newUser(browser, name) {
  let context = await browser.newContext({ viewport: { width: 1280, height: 760 } })
  await context.addInitScript(name => {
    if (!localStorage.getItem("pmauthority.name")) localStorage.setItem("pmauthority.name", name)
  }, name)
  let page = await openPage(context, name)
  return { context, page }
}

// openDoc opens the editor of id in page and waits until it is synced.
export async function openDoc(page, url, id) {
  await page.goto(`${url}/edit/${encodeURIComponent(id)}`)
  await page.locator(".ProseMirror").waitFor()
  await waitSynced(page)
}

export async function waitSynced(...pages) {
  for (let page of pages) await page.waitForFunction(() => window.pma?.client?.synced && window.pma.view)
}

// editorText returns the text of the page's editor, paragraphs joined
// by newlines.
export function editorText(page) {
  return page.evaluate(() => {
    let doc = window.pma.view.state.doc
    return doc.textBetween(0, doc.content.size, "\n")
  })
}

export async function serverDoc(url, id) {
  let res = await fetch(`${url}/docs/${encodeURIComponent(id)}`)
  check(res.ok, `GET /docs/${id} answered ${res.status}`)
  return res.json()
}

// serverText is the text of the server's document, paragraphs joined
// by newlines.
export async function serverText(url, id) {
  let doc = (await serverDoc(url, id)).doc
  return (doc.content || []).map(p => (p.content || []).map(t => t.text || "").join("")).join("\n")
}

// converge waits until the pages are synced and hold the same document,
// and returns its text.
export async function converge(...pages) {
  let deadline = Date.now() + timeout
  for (;;) {
    await waitSynced(...pages)
    let docs = await Promise.all(pages.map(p => p.evaluate(() =>
      window.pma.client.synced && JSON.stringify(window.pma.view.state.doc.toJSON()))))
    if (docs.every(d => d && d == docs[0])) return editorText(pages[0])
    if (Date.now() > deadline) throw new Error("editors did not converge:\n" + docs.join("\n"))
    await pages[0].waitForTimeout(100)
  }
}

// Browser test of the demo editor with tokens (docs/auth.md) against a
// running pmauthority with auth: a page opened with a read token in its
// fragment is visibly read-only (a badge, not editable) and sends no
// steps; a page with an edit token edits, and the server has its text.
// Both pages drop the token from the address bar.
//
// Usage: node test/browser-auth.mjs --url http://127.0.0.1:8080
//        --read TOKEN --edit TOKEN --admin TOKEN [--out DIR] [--chromium PATH]

import { chromium } from "playwright-core"
import fs from "node:fs"
import path from "node:path"

let args = { out: "test/out/auth", chromium: "/usr/bin/chromium" }
for (let i = 2; i + 1 < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1]
for (let k of ["url", "read", "edit", "admin"]) if (!args[k]) throw new Error("missing --" + k)

function check(cond, message) {
  if (!cond) throw new Error("check failed: " + message)
}

async function serverText() {
  let res = await fetch(args.url + "/docs/d", { headers: { Authorization: "Bearer " + args.admin } })
  check(res.ok, "GET /docs/d: " + res.status)
  let { doc } = await res.json()
  return JSON.stringify(doc)
}

async function openEditor(browser, token) {
  let context = await browser.newContext({ viewport: { width: 900, height: 500 } })
  let page = await context.newPage()
  page.setDefaultTimeout(20000)
  let errors = []
  page.on("pageerror", e => errors.push(e.message))
  await page.goto(args.url + "/edit/d#token=" + encodeURIComponent(token))
  await page.waitForFunction(() => window.pma?.client?.welcomed)
  check(!page.url().includes("token"), "the token is still in the address bar: " + page.url())
  return { context, page, errors }
}

fs.mkdirSync(args.out, { recursive: true })
let browser = await chromium.launch({ executablePath: args.chromium, args: ["--no-sandbox"] })
try {
  let before = await serverText()

  let reader = await openEditor(browser, args.read)
  check(await reader.page.textContent("#role") == "read-only", "no read-only badge")
  check(await reader.page.getAttribute(".ProseMirror", "contenteditable") == "false", "the read-only editor is editable")
  await reader.page.click(".ProseMirror")
  await reader.page.keyboard.type("nope")
  // The menu's commands change nothing either.
  await reader.page.click("[title^='Insert horizontal rule'], [title^='Wrap in bullet list']")
  let local = await reader.page.evaluate(() => JSON.stringify(window.pma.view.state.doc.toJSON()))
  check(!local.includes("bullet_list") && !local.includes("nope"), "the read-only editor changed: " + local)
  await reader.page.screenshot({ path: path.join(args.out, "read-only.png") })

  let editor = await openEditor(browser, args.edit)
  check(await editor.page.$("#role") == null, "a badge on the edit page")
  await editor.page.click(".ProseMirror")
  await editor.page.keyboard.type("edited")
  await editor.page.waitForFunction(() => window.pma.client.synced)
  await editor.page.screenshot({ path: path.join(args.out, "edit.png") })
  let after = await serverText()
  check(after != before && after.includes("edited") && !after.includes("nope") && !after.includes("bullet_list") && !after.includes("horizontal_rule"), "the server has " + after)
  // The reader receives the edit.
  await reader.page.waitForFunction(() => window.pma.view.state.doc.textContent.includes("edited"))
  check(!(await reader.page.evaluate(() => window.pma.view.state.doc.textContent)).includes("nope"), "the reader's typing got in")
  for (let p of [reader, editor]) check(p.errors.length == 0, "page errors: " + p.errors.join("; "))
  console.log("browser-auth: ok")
} finally {
  await browser.close()
}

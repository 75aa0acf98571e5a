// Browser test of the demo editor with tokens (docs/auth.md) against a
// running pmauthority with auth: a page opened with a read token in its
// fragment is visibly read-only (a badge, not editable) and sends no
// steps; a page with an edit token edits, and the server has its text.
// Each page shows its token's name, read-only, and the other sees it;
// the editors show the user count the list page does.
// The editor's comment shows on the read-only page without a delete
// button, and the read-only page cannot start one (comments need the
// comment role). Both pages drop the token from the address bar.
// Tokens in band (CollabClient.setToken): the server takes a token of the
// connection's principal and refuses another's; a page whose short-lived
// token is replaced in band outlives it, its token function is asked
// again before the new token's exp, and at that exp the server closes
// the connection (4401), which the status shows as "token expired".
//
// Usage: node test/browser-auth.mjs --url http://127.0.0.1:8080
//        --read TOKEN --edit TOKEN --admin TOKEN --secret HS256-SECRET
//        [--out DIR] [--chromium PATH]

import { chromium } from "playwright-core"
import crypto from "node:crypto"
import fs from "node:fs"
import path from "node:path"

let args = { out: "test/out/auth", chromium: "/usr/bin/chromium" }
for (let i = 2; i + 1 < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1]
for (let k of ["url", "read", "edit", "admin", "secret"]) if (!args[k]) throw new Error("missing --" + k)

function check(cond, message) {
  if (!cond) throw new Error("check failed: " + message)
}

async function serverText() {
  let res = await fetch(args.url + "/docs/d", { headers: { Authorization: "Bearer " + args.admin } })
  check(res.ok, "GET /docs/d: " + res.status)
  let { doc } = await res.json()
  return JSON.stringify(doc)
}

// mint returns an HS256 token of sub with the role edit on the document
// d, expiring in ttl seconds (as docs/auth.md mints one in node).
function mint(sub, ttl) {
  let part = obj => Buffer.from(JSON.stringify(obj)).toString("base64url")
  let now = Math.floor(Date.now() / 1000)
  let data = part({ alg: "HS256", typ: "JWT" }) + "." + part({ sub, docs: { d: "edit" }, iat: now, exp: now + ttl })
  return { token: data + "." + crypto.createHmac("sha256", args.secret).update(data).digest("base64url"), exp: (now + ttl) * 1000 }
}

// selectText selects the first occurrence of text in the page's editor.
async function selectText(page, text) {
  await page.evaluate(text => {
    let { view } = window.pma, found = null
    view.state.doc.descendants((node, pos) => {
      if (found == null && node.isText && node.text.includes(text)) found = pos + node.text.indexOf(text)
    })
    let { TextSelection } = window.pma.prosemirror
    view.dispatch(view.state.tr.setSelection(TextSelection.create(view.state.doc, found, found + text.length)))
    view.focus()
  }, text)
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
  // The menu's commands are disabled, and change nothing either.
  let wrap = reader.page.locator(".ProseMirror-menubar [title^='Wrap in bullet list']")
  check(await wrap.evaluate(el => el.classList.contains("ProseMirror-menu-disabled")), "the read-only menu's list button is enabled")
  await wrap.click({ force: true })
  let local = await reader.page.evaluate(() => JSON.stringify(window.pma.view.state.doc.toJSON()))
  check(!local.includes("bullet_list") && !local.includes("nope"), "the read-only editor changed: " + local)
  await reader.page.screenshot({ path: path.join(args.out, "read-only.png") })

  let editor = await openEditor(browser, args.edit)
  check(await editor.page.$("#role") == null, "a badge on the edit page")

  // Identity from the token: each page shows its token's name (not to be
  // changed there), and the other sees it by that name.
  for (let [page, name] of [[reader.page, "Rita Reader"], [editor.page, "Ed Editor"]]) {
    check(await page.inputValue("#name") == name, `the name field says ${await page.inputValue("#name")}, want ${name}`)
    check(await page.locator("#name").evaluate(el => el.readOnly), `the name field of ${name} can be edited`)
  }
  await reader.page.locator("#peers .peer", { hasText: "Ed Editor" }).waitFor()
  await editor.page.locator("#peers .peer", { hasText: "Rita Reader" }).waitFor()
  // One user count, the server's, on the editors and the list page (a
  // user is a sub: rita, ed, and ada who read the document above).
  let list = await (await browser.newContext()).newPage()
  await list.goto(args.url + "/#token=" + encodeURIComponent(args.admin))
  let count = await list.locator("#docs li", { has: list.locator("a", { hasText: /^d$/ }) }).locator(".count").textContent()
  let users = parseInt(count)
  check(count == `${users} editing now` && users >= 2, "the list page says " + JSON.stringify(count))
  for (let page of [reader.page, editor.page]) {
    await page.locator("#users", { hasText: new RegExp(`^${users} users$`) }).waitFor()
  }
  await list.context().close()
  await editor.page.click(".ProseMirror")
  await editor.page.keyboard.type("edited")
  await editor.page.waitForFunction(() => window.pma.client.synced)
  await editor.page.screenshot({ path: path.join(args.out, "edit.png") })
  let after = await serverText()
  check(after != before && after.includes("edited") && !after.includes("nope") && !after.includes("bullet_list") && !after.includes("horizontal_rule"), "the server has " + after)
  // The reader receives the edit.
  await reader.page.waitForFunction(() => window.pma.view.state.doc.textContent.includes("edited"))
  check(!(await reader.page.evaluate(() => window.pma.view.state.doc.textContent)).includes("nope"), "the reader's typing got in")

  // The editor comments its word; the reader sees it, and may neither
  // delete it nor write one.
  await selectText(editor.page, "edited")
  await editor.page.keyboard.press("Control+Alt+m")
  await editor.page.locator(".composer").waitFor()
  await editor.page.keyboard.type("a note")
  await editor.page.keyboard.press("Enter")
  await editor.page.waitForFunction(() => window.pma.client.synced && document.querySelector(".comments-list .comment"))
  check(await editor.page.locator(".comments-list .comment .comment-delete").count() == 1, "no delete button on the edit page")
  let card = reader.page.locator(".comments-list .comment")
  await card.waitFor()
  check((await card.locator(".comment-body").textContent()) == "a note", "the reader's comment card")
  check(await card.locator(".comment-delete").count() == 0, "a delete button on the read-only page")
  await selectText(reader.page, "edited")
  check(await reader.page.locator(".ProseMirror-menuitem [title^='Comment the selection']").evaluate(el => el.classList.contains("ProseMirror-menu-disabled")),
    "the comment button is enabled on the read-only page")
  await reader.page.keyboard.press("Control+Alt+m")
  check(await reader.page.locator(".composer").isHidden(), "the read-only page opened the composer")
  await reader.page.screenshot({ path: path.join(args.out, "read-only-comment.png") })

  // In band: a token of the connection's principal is taken, another's
  // refused (and the connection goes on).
  let setToken = (page, token) => page.evaluate(t => window.pma.client.setToken(t), token)
  check(await setToken(editor.page, mint("ed", 7200).token) === true, "the server refused a fresh token of the same principal")
  check(await setToken(editor.page, args.read) === false, "the server took another principal's token")
  check(await setToken(editor.page, args.edit) === true, "the server refused the page's token back")
  check(await editor.page.evaluate(() => window.pma.client.welcomed), "the editor's connection is gone")

  // A short-lived token replaced in band: the connection outlives it.
  let short = mint("sam", 4), longer = mint("sam", 9)
  let sam = await openEditor(browser, short.token)
  check(await sam.page.evaluate(token => {
    let client = window.pma.client, onStatus = client.onStatus
    window.calls = 0
    window.statuses = []
    client.onStatus = s => { window.statuses.push(s); onStatus(s) }
    return client.setToken(() => { window.calls++; return token })
  }, longer.token) === true, "the server refused sam's longer token")
  await new Promise(resolve => setTimeout(resolve, Math.max(0, short.exp + 1000 - Date.now())))
  check(await sam.page.evaluate(() => window.pma.client.welcomed && window.statuses.length == 0),
    "the connection did not outlive the replaced token: " + JSON.stringify(await sam.page.evaluate(() => window.statuses)))
  // Asked again before the longer token's exp; at that exp the server
  // closes the connection, and the status says why.
  await sam.page.waitForFunction(() => window.calls >= 2, null, { timeout: 15000 })
  await sam.page.waitForFunction(() => window.statuses.some(s => s.status == "offline" && s.detail == "token expired"), null, { timeout: 20000 })
  await sam.context.close()

  for (let p of [reader, editor, sam]) check(p.errors.length == 0, "page errors: " + p.errors.join("; "))
  console.log("browser-auth: ok")
} finally {
  await browser.close()
}

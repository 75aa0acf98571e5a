// Browser test of the editor page for people who may not edit, against a
// running pmauthority with auth (tokens minted here with the HS256
// secret):
//   - a read token: the badge, the hint "You can read this document",
//     every menu item disabled (a click on one changes nothing), typing
//     does nothing; the history panel downloads, offers no checkpoint;
//   - a comment token: "You can read and comment", every menu item but
//     the comment button disabled, typing does nothing, but a word
//     selected with the mouse is commented with Ctrl-Alt-M, and the
//     editor's page shows the comment;
//   - a token for another document (403) and a malformed one (401): the
//     page says why, and the client does not retry (one WebSocket in
//     five seconds).
//
// Usage: node test/browser-roles.mjs --url http://127.0.0.1:8080 --secret HS256-SECRET
//        [--out DIR] [--chromium PATH]

import { chromium } from "playwright-core"
import crypto from "node:crypto"
import fs from "node:fs"
import path from "node:path"
import { log, check, newID, openPage, waitSynced, converge } from "./lib.mjs"

let args = { out: "test/out/roles", chromium: "/usr/bin/chromium" }
for (let i = 2; i + 1 < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1]
for (let k of ["url", "secret"]) if (!args[k]) throw new Error("missing --" + k)
args.url = args.url.replace(/\/+$/, "")

function mint(sub, docs) {
  let part = obj => Buffer.from(JSON.stringify(obj)).toString("base64url")
  let now = Math.floor(Date.now() / 1000)
  let data = part({ alg: "HS256", typ: "JWT" }) + "." + part({ sub, docs, iat: now, exp: now + 3600 })
  return data + "." + crypto.createHmac("sha256", args.secret).update(data).digest("base64url")
}

let id = newID("roles")

// open opens the editor of doc with token; synced waits for the welcome.
async function open(browser, label, token, doc = id, synced = true) {
  let context = await browser.newContext({ viewport: { width: 1100, height: 600 }, acceptDownloads: true })
  let page = await openPage(context, label)
  page.sockets = 0
  page.on("websocket", () => page.sockets++)
  await page.goto(`${args.url}/edit/${encodeURIComponent(doc)}#token=${encodeURIComponent(token)}`)
  if (synced) {
    await page.locator(".ProseMirror").waitFor()
    await waitSynced(page)
  }
  return page
}

const docJSON = page => page.evaluate(() => JSON.stringify(window.pma.view.state.doc.toJSON()))

// menuState returns the menu's icons that show (those with a select are
// hidden where they do not apply): {title, disabled}.
function menuState(page) {
  return page.$$eval(".ProseMirror-menubar .ProseMirror-menuitem > .ProseMirror-icon", els => els.filter(el => el.checkVisibility()).map(el => ({
    title: el.title, disabled: el.classList.contains("ProseMirror-menu-disabled"),
  })))
}

// tryChanges types, clicks every menu icon and an item of the Insert
// dropdown in page, and checks that its document stayed as it was.
async function tryChanges(page) {
  let before = await docJSON(page)
  await page.click(".ProseMirror")
  await page.keyboard.type("nope")
  await page.keyboard.press("Enter")
  for (let icon of await page.$$(".ProseMirror-menubar .ProseMirror-menuitem > .ProseMirror-icon:not([title^='Comment'])")) {
    if (await icon.isVisible()) await icon.click({ force: true })
  }
  await page.click(".ProseMirror-menubar .ProseMirror-menu-dropdown >> text=Insert")
  let rule = page.locator(".ProseMirror-menu-dropdown-menu [title^='Insert horizontal rule']")
  check(await rule.evaluate(el => el.classList.contains("ProseMirror-menu-disabled")), page.label + ": the Insert dropdown's item is enabled")
  await rule.click({ force: true })
  check(await docJSON(page) == before, page.label + ": the document changed: " + await docJSON(page))
  check(await page.getAttribute(".ProseMirror", "contenteditable") == "false", page.label + ": the editor is editable")
}

async function main() {
  fs.mkdirSync(args.out, { recursive: true })
  let browser = await chromium.launch({ executablePath: args.chromium, args: ["--no-sandbox"] })
  try {
    let editor = await open(browser, "editor", mint("ed", { [id]: "edit" }))
    await editor.locator(".ProseMirror").click()
    await editor.keyboard.type("Words to read and to comment.")
    await converge(editor)

    // The reader.
    let readToken = mint("rita", { [id]: "read" })
    let reader = await open(browser, "reader", readToken)
    check(await reader.textContent("#role") == "read-only", "the reader's badge")
    check((await reader.textContent("#hint")).startsWith("You can read this document"), "the reader's hint: " + await reader.textContent("#hint"))
    let menu = await menuState(reader)
    check(menu.length > 5 && menu.every(m => m.disabled), "the reader's menu: " + JSON.stringify(menu))
    await tryChanges(reader)
    // The reader's history: the entries and the downloads, no checkpoint
    // form (restoring and checkpoints need edit).
    await reader.click("#history-toggle")
    await reader.locator(".history-list > li.history-entry").first().waitFor()
    check(await reader.locator(".history-checkpoint-form").isHidden(), "the reader's panel offers a checkpoint")
    let [file] = await Promise.all([reader.waitForEvent("download"), reader.click(".history-download button[data-format=markdown]")])
    let markdown = fs.readFileSync(await file.path(), "utf8")
    let exported = await (await fetch(`${args.url}/docs/${encodeURIComponent(id)}/export?format=markdown`, { headers: { Authorization: "Bearer " + readToken } })).text()
    check(markdown == exported && markdown.includes("Words to read"), `the reader's download ${JSON.stringify(markdown)}, the export ${JSON.stringify(exported)}`)
    await reader.screenshot({ path: path.join(args.out, "read.png") })

    // The commenter: can comment, cannot type.
    let commenter = await open(browser, "commenter", mint("cole", { [id.slice(0, 6) + "*"]: "comment" }))
    check(await commenter.textContent("#role") == "comment only", "the commenter's badge")
    check((await commenter.textContent("#hint")).startsWith("You can read and comment"), "the commenter's hint: " + await commenter.textContent("#hint"))
    await tryChanges(commenter)
    await commenter.locator(".ProseMirror p", { hasText: "Words" }).dblclick({ position: { x: 20, y: 8 } })
    await commenter.waitForFunction(() => !window.pma.view.state.selection.empty)
    menu = await menuState(commenter)
    check(menu.filter(m => !m.disabled).map(m => m.title).join() == "Comment the selection (Ctrl-Alt-M)", "the commenter's menu: " + JSON.stringify(menu))
    await commenter.keyboard.press("Control+Alt+m")
    await commenter.locator(".composer textarea").waitFor()
    await commenter.keyboard.type("a remark")
    await commenter.keyboard.press("Enter")
    let card = editor.locator(".comments-list .comment", { hasText: "a remark" })
    await card.waitFor()
    check((await card.locator(".comment-quote").textContent()).includes("Words"), "the comment's quote: " + await card.locator(".comment-quote").textContent())
    check(await docJSON(commenter) == await docJSON(editor), "the commenter's document differs from the editor's")
    await commenter.screenshot({ path: path.join(args.out, "comment.png") })

    // Refused tokens: the page says why and does not retry.
    let refused = [
      [await open(browser, "elsewhere", mint("ed", { "another-doc": "edit" }), id, false), "403", "Your token does not allow this document"],
      [await open(browser, "malformed", "not-a-token", id, false), "401", "The server did not accept your token"],
    ]
    for (let [page, status, why] of refused) {
      let notice = page.locator("#notice[data-kind=auth]")
      await notice.waitFor()
      let text = await notice.textContent()
      check(text.startsWith(why) && text.includes(`(${status}: `), `${page.label}: the notice says ${JSON.stringify(text)}`)
      check((await page.textContent("#status-text")).startsWith("Offline: authentication failed"), `${page.label}: the status says ${await page.textContent("#status-text")}`)
      log(`${page.label}: ${text}`)
    }
    await refused[0][0].waitForTimeout(5000)
    for (let [page] of refused) {
      check(page.sockets == 1, `${page.label}: ${page.sockets} WebSocket connections, want 1 (no retries)`)
      check(await page.locator("#notice").isVisible(), `${page.label}: the notice went away`)
      check(!(await page.textContent("#status-text")).includes("retrying"), `${page.label}: the status says it retries`)
    }
    await refused[0][0].screenshot({ path: path.join(args.out, "refused.png") })

    for (let p of [editor, reader, commenter, ...refused.map(r => r[0])]) check(p.errors.length == 0, "page errors:\n" + p.errors.join("\n"))
    log("browser-roles: ok")
  } finally {
    await browser.close()
  }
}

setTimeout(() => { console.error("browser-roles: over 60 s"); process.exit(1) }, 60000).unref()
main().catch(e => { console.error(e); process.exit(1) })

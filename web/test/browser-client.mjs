// Browser test of pmauthority-client's events against a running
// pmauthority with JWT auth (an HS256 secret), on the page of
// client/test/browser (served at /client-test/):
//
//   - onAuthenticationFailed: a token the server refuses (401: signed with
//     another secret; 403: valid, without a role on the document) is
//     reported once, the status says so, and the client opens no other
//     connection (no retry storm, none on "online" either) until setToken
//     gives a new token, which connects and syncs;
//   - onSynced after the first snapshot and again when a local change is
//     confirmed; hasUnsyncedChanges and onUnsyncedChanges while it is not;
//   - the beforeunload warning: closing the tab with an unsaved change
//     (the server unreachable) asks first, and does not once it is saved;
//   - persist: a change made while the server is unreachable is kept in
//     IndexedDB, and the page reloaded takes it up and sends it; once
//     saved it is not taken up again.
//
// Usage: node test/browser-client.mjs --url http://127.0.0.1:8080 --secret S
//        [--out DIR] [--chromium PATH]

import { chromium } from "playwright-core"
import crypto from "node:crypto"
import fs from "node:fs"
import path from "node:path"

let args = { out: "test/out/client", chromium: "/usr/bin/chromium" }
for (let i = 2; i + 1 < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1]
for (let k of ["url", "secret"]) if (!args[k]) throw new Error("missing --" + k)

function check(cond, message) {
  if (!cond) throw new Error("check failed: " + message)
}

// mint returns an HS256 token of sub with the roles docs, signed with
// secret, expiring in an hour.
function mint(sub, docs, secret = args.secret) {
  let part = obj => Buffer.from(JSON.stringify(obj)).toString("base64url")
  let now = Math.floor(Date.now() / 1000)
  let data = part({ alg: "HS256", typ: "JWT" }) + "." + part({ sub, docs, iat: now, exp: now + 3600 })
  return data + "." + crypto.createHmac("sha256", secret).update(data).digest("base64url")
}

const doc = "client-" + Date.now().toString(36)
const good = mint("tess", { [doc]: "edit" })

async function open(browser, token, query = "") {
  let context = await browser.newContext({ viewport: { width: 900, height: 500 } })
  let page = await context.newPage()
  page.setDefaultTimeout(20000)
  page.errors = []
  page.on("pageerror", e => page.errors.push(e.message))
  await page.goto(`${args.url}/client-test/index.html?doc=${encodeURIComponent(doc)}${query}#token=${encodeURIComponent(token)}`)
  return { context, page }
}

async function serverDoc() {
  let res = await fetch(`${args.url}/docs/${encodeURIComponent(doc)}`, { headers: { Authorization: "Bearer " + good } })
  check(res.ok, "GET the document: " + res.status)
  return JSON.stringify((await res.json()).doc)
}

const events = page => page.evaluate(() => ({ ...window.events, sockets: window.sockets.length }))

fs.mkdirSync(args.out, { recursive: true })
let browser = await chromium.launch({ executablePath: args.chromium, args: ["--no-sandbox"] })
try {
  // onAuthenticationFailed, for a 401 and a 403.
  for (let [status, token] of [[401, mint("tess", { [doc]: "edit" }, "another secret of 32 bytes or more!!")], [403, mint("tess", { other: "edit" })]]) {
    let { context, page } = await open(browser, token)
    await page.waitForFunction(() => window.events.authFailed.length > 0)
    let e = await events(page)
    check(e.authFailed.length == 1 && e.authFailed[0].status == status, `onAuthenticationFailed for ${status}: ` + JSON.stringify(e.authFailed))
    let last = e.statuses.at(-1)
    check(last.status == "offline" && last.detail.startsWith("authentication failed") && last.retryIn == 0, "the status: " + JSON.stringify(last))
    check(await page.textContent("#status") == last.status + ": " + last.detail, "the page's status")
    // The client would have retried within 0.25–0.5 s, and again within
    // 1 s more; it waits for a new token instead, also when the browser
    // says it is online again.
    await page.evaluate(() => window.dispatchEvent(new Event("online")))
    await page.waitForTimeout(1500)
    e = await events(page)
    check(e.sockets == 1 && e.authFailed.length == 1, `retried after ${status}: ${e.sockets} connections, ${e.authFailed.length} failures`)
    check(e.synced == 0, "onSynced without a connection")
    // A new token connects, and the document syncs.
    check(await page.evaluate(t => window.client.setToken(t), good) === false, "setToken's promise")
    await page.waitForFunction(() => window.events.synced == 1 && window.client.welcomed)
    check((await events(page)).sockets == 2, "setToken did not connect once")
    check(page.errors.length == 0, "page errors: " + page.errors.join("; "))
    await context.close()
  }
  console.log("browser-client: onAuthenticationFailed ok")

  // onSynced, hasUnsyncedChanges, onUnsyncedChanges.
  let { context, page } = await open(browser, good)
  await page.waitForFunction(() => window.events.synced == 1)
  check(await page.evaluate(() => window.client.synced && !window.client.hasUnsyncedChanges), "synced at the start")
  // The change is unconfirmed until the server's answer, which cannot come
  // within the evaluation that makes it.
  let now = await page.evaluate(() => {
    let c = window.client
    c.dispatch(c.state.tr.insertText("typed", 1))
    return { has: c.hasUnsyncedChanges, synced: c.synced, unsynced: [...window.events.unsynced], count: window.events.synced }
  })
  check(now.has && !now.synced && now.unsynced.at(-1) == 1 && now.count == 1, "right after a change: " + JSON.stringify(now))
  await page.waitForFunction(() => window.events.synced == 2)
  let e = await events(page)
  check(!(await page.evaluate(() => window.client.hasUnsyncedChanges)) && e.unsynced.at(-1) == 0, "after the confirmation: " + JSON.stringify(e))
  let res = await fetch(`${args.url}/docs/${encodeURIComponent(doc)}`, { headers: { Authorization: "Bearer " + good } })
  check(res.ok && JSON.stringify((await res.json()).doc).includes("typed"), "the server has the change")
  console.log("browser-client: onSynced, hasUnsyncedChanges ok")

  // beforeunload: the server unreachable, typing (a user gesture, which
  // Chromium wants before it asks) leaves an unsaved change.
  await page.evaluate(() => { window.blockSockets = true; window.client.reconnectNow() })
  await page.waitForFunction(() => !window.client.welcomed)
  await page.click(".ProseMirror")
  await page.keyboard.type("!")
  check(await page.evaluate(() => window.client.hasUnsyncedChanges), "no unsaved change offline")
  let dialogs = []
  page.on("dialog", d => { dialogs.push(d.type()); d.dismiss() })
  await page.close({ runBeforeUnload: true })
  await page.waitForFunction(() => true) // the page is still there
  for (let i = 0; i < 100 && dialogs.length == 0; i++) await new Promise(r => setTimeout(r, 50))
  check(dialogs.length == 1 && dialogs[0] == "beforeunload", "closing with an unsaved change did not ask: " + JSON.stringify(dialogs))
  check(!page.isClosed(), "the page closed although the dialog was dismissed")
  await page.screenshot({ path: path.join(args.out, "unsaved.png") })
  // Saved: closing asks nothing.
  await page.evaluate(() => { window.blockSockets = false; window.client.reconnectNow() })
  await page.waitForFunction(() => window.client.synced && !window.client.hasUnsyncedChanges)
  let closed = new Promise(resolve => page.once("close", resolve))
  await page.close({ runBeforeUnload: true })
  await closed
  check(dialogs.length == 1, "closing a saved page asked: " + JSON.stringify(dialogs))
  check(page.errors.length == 0, "page errors: " + page.errors.join("; "))
  await context.close()
  console.log("browser-client: beforeunload ok")

  // persist: kept in IndexedDB while the server is unreachable, taken up
  // and sent after a reload.
  ;({ context, page } = await open(browser, good, "&persist=" + encodeURIComponent(doc) + "&warn=0"))
  await page.waitForFunction(() => window.client.synced)
  await page.evaluate(() => { window.blockSockets = true; window.client.reconnectNow() })
  await page.waitForFunction(() => !window.client.welcomed)
  await page.evaluate(() => {
    let c = window.client
    c.dispatch(c.state.tr.insertText("kept offline ", 1))
    window.createComment("a note kept offline", { from: 1, to: 5 })(c.state, tr => c.dispatch(tr))
  })
  await page.waitForFunction(() => window.client.saved)
  await page.evaluate(() => window.client.saving)
  check(!(await serverDoc()).includes("kept offline"), "the server has the offline change")
  await page.reload()
  await page.waitForFunction(() => window.client?.synced && !window.client.saved)
  e = await events(page)
  check(e.notices.includes("Restored 1 unsaved change from this browser"), "notices: " + JSON.stringify(e.notices))
  let text = await page.evaluate(() => window.client.state.doc.textContent)
  check(text.split("kept offline").length == 2, "the page's text: " + text)
  check((await serverDoc()).split("kept offline").length == 2, "the server lacks the restored change, or has it twice: " + await serverDoc())
  res = await fetch(`${args.url}/docs/${encodeURIComponent(doc)}`, { headers: { Authorization: "Bearer " + good } })
  let comments = (await res.json()).comments
  check(comments.length == 1 && comments[0].text == "a note kept offline" && comments[0].from == 1 && comments[0].to == 5, "the server's comments: " + JSON.stringify(comments))
  // Saved: a reload takes nothing up.
  await page.reload()
  await page.waitForFunction(() => window.client?.synced)
  e = await events(page)
  check(e.notices.length == 0, "notices after a reload of a saved page: " + JSON.stringify(e.notices))
  check((await serverDoc()).split("kept offline").length == 2, "the change is there twice: " + await serverDoc())
  check(page.errors.length == 0, "page errors: " + page.errors.join("; "))
  await context.close()
  console.log("browser-client: persist ok")
  console.log("browser-client: ok")
} finally {
  await browser.close()
}

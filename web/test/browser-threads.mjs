// A comment thread across two pages, in headless Chromium, against a
// pmauthority with JWT auth (browser_test.go, TestBrowserThreads):
//
//   1. Alice (comment role) comments a word; Bob (comment role) sees the
//      thread with her name (the token's sub) and a time, and replies.
//   2. Alice sees the reply, and resolves the thread; Bob sees it
//      resolved and reopens it; Alice sees it open again.
//   3. Bob has no edit or delete button on Alice's comment but edits his
//      reply; Alice sees the new text, marked edited, and no edit button
//      on it.
//   4. The server's comment has the thread: authors and times as fields,
//      the reply, not resolved.
//
// Usage: node test/browser-threads.mjs --url URL --alice TOKEN --bob TOKEN --admin TOKEN
//        [--out DIR] [--chromium /usr/bin/chromium]

import { chromium } from "playwright-core"
import fs from "node:fs"
import path from "node:path"

let args = { out: "test/out/threads", chromium: "/usr/bin/chromium" }
for (let i = 2; i + 1 < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1]
for (let k of ["url", "alice", "bob", "admin"]) if (!args[k]) throw new Error("missing --" + k)

function log(...parts) {
  console.log(`[browser ${new Date().toISOString().slice(11, 23)}]`, ...parts)
}

function check(cond, message) {
  if (!cond) throw new Error("check failed: " + message)
}

async function serverComments() {
  let res = await fetch(args.url + "/docs/d", { headers: { Authorization: "Bearer " + args.admin } })
  check(res.ok, "GET /docs/d: " + res.status)
  return (await res.json()).comments
}

async function openEditor(browser, token, label) {
  let context = await browser.newContext({ viewport: { width: 1100, height: 700 } })
  let page = await context.newPage()
  page.setDefaultTimeout(20000)
  page.errors = []
  page.on("pageerror", e => page.errors.push(`${label}: ${e.message}`))
  page.on("console", m => { if (m.type() == "error") page.errors.push(`${label} console: ${m.text()}`) })
  await page.goto(args.url + "/edit/d#token=" + encodeURIComponent(token))
  await page.waitForFunction(() => window.pma?.client?.synced && window.pma.view)
  return { context, page }
}

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

// thread returns the page's card of the thread on the comment text.
function thread(page, text) {
  return page.locator(".comments-list .comment", { hasText: text })
}

fs.mkdirSync(args.out, { recursive: true })
let browser = await chromium.launch({ executablePath: args.chromium, args: ["--no-sandbox"] })
try {
  let alice = await openEditor(browser, args.alice, "alice"), bob = await openEditor(browser, args.bob, "bob")
  let a = alice.page, b = bob.page

  // 1. Alice comments; Bob sees the thread and replies.
  await selectText(a, "shared")
  // (The editor is read-only for a comment role: the menu's button.)
  await a.locator(".ProseMirror-menuitem [title^='Comment the selection']").click()
  await a.locator(".composer textarea").fill("Is this the word?")
  await a.keyboard.press("Enter")
  let cardB = thread(b, "Is this the word?")
  await cardB.waitFor()
  check(await cardB.locator(".comment-head .comment-author").first().textContent() == "alice", "Bob sees Alice's name")
  check(await cardB.locator(".comment-head time").count() == 1, "Bob sees the comment's time")
  check(await cardB.locator(".comment-edit").count() == 0 && await cardB.locator(".comment-delete").count() == 0, "Bob may edit or delete Alice's comment")
  await cardB.locator("textarea.thread-input").fill("Yes, that one")
  await cardB.locator("textarea.thread-input").press("Enter")
  log("thread made, replied")

  // 2. Alice sees the reply and resolves; Bob reopens.
  let cardA = thread(a, "Is this the word?")
  let replyA = cardA.locator(".replies .reply", { hasText: "Yes, that one" })
  await replyA.waitFor()
  check(await replyA.locator(".comment-author").textContent() == "bob", "Alice sees Bob's name on the reply")
  await replyA.locator("time").waitFor()
  check(await replyA.locator(".reply-edit").count() == 0, "Alice may edit Bob's reply")
  await cardA.locator(".comment-resolve").click()
  await b.locator(".comments-list .comment.resolved", { hasText: "Is this the word?" }).waitFor()
  await b.locator(".ProseMirror .pma-comment-resolved").waitFor()
  await b.screenshot({ path: path.join(args.out, "resolved.png") })
  check((await serverComments())[0].resolved === true, "the server has the thread resolved")
  await thread(b, "Is this the word?").locator(".comment-reopen").click()
  await a.locator(".comments-list .comment:not(.resolved)", { hasText: "Is this the word?" }).locator(".comment-resolve").waitFor()
  log("resolved by Alice, reopened by Bob")

  // 3. Bob edits his reply; Alice sees it edited.
  let replyB = thread(b, "Is this the word?").locator(".replies .reply")
  await replyB.locator(".reply-edit").click()
  let editor = replyB.locator("textarea.thread-input")
  await editor.fill("Yes, exactly that one")
  await editor.press("Enter")
  await cardA.locator(".replies .reply", { hasText: "Yes, exactly that one" }).locator(".comment-edited").waitFor()
  await a.screenshot({ path: path.join(args.out, "thread.png") })
  log("reply edited")

  // 4. The server's thread.
  let [c] = await serverComments()
  check(c && c.author == "alice" && /^\d{4}-\d\d-\d\dT/.test(c.time) && !c.resolved && c.text == "Is this the word?", "the server's comment " + JSON.stringify(c))
  check(c.replies?.length == 1 && c.replies[0].author == "bob" && c.replies[0].text == "Yes, exactly that one" && c.replies[0].edited, "the server's reply " + JSON.stringify(c.replies))
  let errors = a.errors.concat(b.errors)
  check(errors.length == 0, "page errors:\n" + errors.join("\n"))
  log("PASS")
} finally {
  await browser.close()
}

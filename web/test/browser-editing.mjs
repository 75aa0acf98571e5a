// Browser tests of the editor page against a running pmauthority, one
// scenario after the other (--only a,b picks some):
//
//   cursors   Bob's caret sits at the end of a line and Carol's selection
//             ends at the end of another; Alice clicks, presses Home, End
//             and the arrow keys next to them (and, as some browsers do
//             on a click or End, finds the DOM selection inside Bob's
//             caret), typing a token after each. Every token arrives in
//             her editor and on the server, and her caret is never inside
//             a decoration.
//   tabs      two tabs of one browser are two people: each its own name
//             and colour (sessionStorage), the last name used being the
//             default of a new tab; each lists the other.
//   offline   a page that loses the network keeps what is typed and says
//             "N changes not saved yet"; back online it reconnects at once
//             (no back-off wait), the server gets everything and the count
//             goes back to 0.
//   list      a name with spaces, accents, an emoji and / is kept as typed.
//   comments  the comments panel: Alice comments a selection with the
//             inline input; both see it in the panel with its author, time
//             and the text it covers; clicking it selects the range; the
//             highlight covers the text without hiding it; Bob deletes it.
// Screenshots go to --out.
//
// Usage: node test/browser-editing.mjs --url http://127.0.0.1:8080 [--out DIR]
//        [--only cursors,tabs,offline,comments] [--chromium /usr/bin/chromium] [--headed]

import { chromium } from "playwright-core"
import path from "node:path"
import { parseArgs, log, check, newID, newUser, openPage, openDoc, waitSynced, converge, editorText, serverDoc, serverText } from "./lib.mjs"

const args = parseArgs(process.argv.slice(2),
  "usage: node test/browser-editing.mjs --url http://HOST:PORT [--out DIR] [--only NAMES] [--chromium PATH] [--headed]")

// selectionInWidget tells whether the page's DOM selection is inside a
// decoration widget (where typing goes nowhere).
function selectionInWidget(page) {
  return page.evaluate(() => {
    let sel = getSelection()
    let inside = n => !!n && !!(n.nodeType == 1 ? n : n.parentNode)?.closest?.(".ProseMirror-widget")
    return inside(sel.anchorNode) || inside(sel.focusNode)
  })
}

async function cursors(browser) {
  let id = newID("cursors")
  let alice = await newUser(browser, "Alice"), bob = await newUser(browser, "Bob"), carol = await newUser(browser, "Carol")
  let a = alice.page, b = bob.page, c = carol.page
  await openDoc(a, args.url, id)
  await a.locator(".ProseMirror").click()
  await a.keyboard.type("First line here")
  await a.keyboard.press("Enter")
  await a.keyboard.type("Second line of text")
  await a.keyboard.press("Enter")
  await a.keyboard.type("Third")
  await openDoc(b, args.url, id)
  await openDoc(c, args.url, id)
  await converge(a, b, c)
  let para = n => a.locator(".ProseMirror > p").nth(n)

  // Bob's caret at the end of the first line, Carol's selection over the
  // end of the second ("text").
  let placeRemotes = async () => {
    await b.locator(".ProseMirror > p").nth(0).click()
    await b.keyboard.press("End")
    await c.locator(".ProseMirror > p").nth(1).click()
    await c.keyboard.press("End")
    for (let i = 0; i < 4; i++) await c.keyboard.press("Shift+ArrowLeft")
    await a.waitForFunction(() => {
      let w = [...document.querySelectorAll(".ProseMirror > p:first-child > .pma-cursor")].find(w => (w.dataset.name || w.textContent).includes("Bob"))
      let sel = document.querySelector(".ProseMirror > p:nth-child(2) > .pma-remote-selection")
      return w && !(w.nextSibling && w.nextSibling.nodeType == 3) && sel && !(sel.nextSibling && sel.nextSibling.nodeType == 3)
    })
  }
  let bobCaret = () => a.evaluate(() => {
    let w = [...document.querySelectorAll(".pma-cursor")].find(w => (w.dataset.name || w.textContent).includes("Bob"))
    let r = w.getBoundingClientRect()
    return { x: r.x, y: r.y, width: r.width, height: r.height }
  })
  let lineEnd = async n => {
    let box = await para(n).boundingBox()
    return [box.x + box.width - 3, box.y + box.height / 2]
  }
  let actions = [
    ["click right of line 1, End", "end:0", async () => { await a.mouse.click(...await lineEnd(0)); await a.keyboard.press("End") }],
    ["click on Bob's caret", "end:0", async () => { let k = await bobCaret(); await a.mouse.click(k.x + 1, k.y + k.height / 2) }],
    ["click just right of Bob's caret", "end:0", async () => { let k = await bobCaret(); await a.mouse.click(k.x + k.width + 1, k.y + k.height / 2) }],
    ["click on Bob's name label", "", async () => { let k = await bobCaret(); await a.mouse.click(k.x + 6, k.y - 6) }],
    ["line 1: Home, End", "end:0", async () => { await para(0).click(); await a.keyboard.press("Home"); await a.keyboard.press("End") }],
    ["line 2 end, ArrowUp, End", "end:0", async () => { await a.mouse.click(...await lineEnd(1)); await a.keyboard.press("ArrowUp"); await a.keyboard.press("End") }],
    ["line 1 end, ArrowRight, ArrowLeft", "end:0", async () => { await a.mouse.click(...await lineEnd(0)); await a.keyboard.press("End"); await a.keyboard.press("ArrowRight"); await a.keyboard.press("ArrowLeft") }],
    ["line 1 end, ArrowRight", "start:1", async () => { await a.mouse.click(...await lineEnd(0)); await a.keyboard.press("End"); await a.keyboard.press("ArrowRight") }],
    ["line 1 end, Shift+ArrowRight, ArrowRight", "start:1", async () => { await a.mouse.click(...await lineEnd(0)); await a.keyboard.press("End"); await a.keyboard.press("Shift+ArrowRight"); await a.keyboard.press("ArrowRight") }],
    ["line 1: Home, Shift+End to Bob's caret, ArrowLeft", "start:0", async () => { await para(0).click(); await a.keyboard.press("Home"); await a.keyboard.press("Shift+End"); await a.keyboard.press("ArrowLeft") }],
    ["line 2 start, ArrowLeft", "end:0", async () => { await para(1).click(); await a.keyboard.press("Home"); await a.keyboard.press("ArrowLeft") }],
    ["ArrowLeft x3, ArrowRight x3 at line 1 end", "end:0", async () => {
      await a.mouse.click(...await lineEnd(0)); await a.keyboard.press("End")
      for (let i = 0; i < 3; i++) await a.keyboard.press("ArrowLeft")
      for (let i = 0; i < 3; i++) await a.keyboard.press("ArrowRight")
    }],
    ["click right of line 2 (Carol's selection), End", "end:1", async () => { await a.mouse.click(...await lineEnd(1)); await a.keyboard.press("End") }],
    ["click inside Carol's selection", "", async () => { let s = await a.locator(".pma-remote-selection").first().boundingBox(); await a.mouse.click(s.x + s.width / 2, s.y + s.height / 2) }],
    ["line 2: Shift+End over Carol's selection, ArrowRight", "end:1", async () => { await para(1).click(); await a.keyboard.press("Home"); await a.keyboard.press("Shift+End"); await a.keyboard.press("ArrowRight") }],
    ["line 3 start, ArrowUp, End", "end:1", async () => { await para(2).click(); await a.keyboard.press("Home"); await a.keyboard.press("ArrowUp"); await a.keyboard.press("End") }],
    ["Ctrl+Home, ArrowDown, End", "end:1", async () => { await a.keyboard.press("ControlOrMeta+Home"); await a.keyboard.press("ArrowDown"); await a.keyboard.press("End") }],
    // What a click or End does in some browsers: the DOM selection ends up
    // inside the remote caret's element.
    ["DOM selection inside Bob's caret", "end:0", async () => {
      await a.evaluate(() => {
        let w = [...document.querySelectorAll(".pma-cursor")].find(w => (w.dataset.name || w.textContent).includes("Bob"))
        let n = w
        while (n.lastChild) n = n.lastChild
        getSelection().collapse(n, n.nodeType == 3 ? n.length : 0)
      })
    }],
  ]
  let tokens = [], lost = []
  // where: "end:N" or "start:N", the token must be at the end or start of
  // paragraph N; "" where it depends on the layout.
  for (let [i, [label, where, act]] of actions.entries()) {
    await placeRemotes()
    await act()
    let token = `Q${i}z`
    let before = await editorText(a)
    await a.keyboard.type(token, { delay: 10 })
    await a.waitForFunction(n => window.pma.view.state.doc.textContent.length >= n, before.replace(/\n/g, "").length + token.length, { timeout: 10000 }).catch(() => {})
    let after = await editorText(a)
    let arrived = after.split(token).length - 1
    if (arrived != 1 || after.length != before.length + token.length) lost.push(`${label}: typed ${token}, editor has ${JSON.stringify(after)}`)
    if (await selectionInWidget(a)) lost.push(`${label}: the caret is inside a decoration`)
    if (where) {
      let [edge, n] = where.split(":"), p = after.split("\n")[Number(n)] || ""
      if (!(edge == "end" ? p.endsWith(token) : p.startsWith(token))) lost.push(`${label}: ${token} not at the ${edge} of paragraph ${n}: ${JSON.stringify(p)}`)
    }
    tokens.push(token)
    log("cursors:", label, arrived == 1 ? "arrived" : "LOST")
  }
  await a.screenshot({ path: path.join(args.out, "cursors.png") })
  check(lost.length == 0, "typing went missing next to remote cursors:\n" + lost.join("\n"))
  let text = await converge(a, b, c)
  let server = await serverText(args.url, id)
  check(server == text, `server text ${JSON.stringify(server)} != editors' ${JSON.stringify(text)}`)
  // Tokens may land inside earlier ones (a click in the middle of a
  // selection): taken out newest first, each is whole, and what is left is
  // the text from before.
  let rest = server
  for (let t of tokens.slice().reverse()) {
    check(rest.split(t).length == 2, `token ${t} once on the server: ${JSON.stringify(server)}`)
    rest = rest.replace(t, "")
  }
  check(rest == "First line here\nSecond line of text\nThird", `the server's text without the tokens: ${JSON.stringify(rest)}`)
  await finish([a, b, c], [alice, bob, carol])
}

// peersOf returns the names and colours a page lists as the others.
function peersOf(page) {
  return page.evaluate(() => [...document.querySelectorAll("#peers .peer")].map(li =>
    ({ name: li.textContent, color: getComputedStyle(li.querySelector(".swatch")).backgroundColor })))
}

// ownIdentity is the name and colour a page shows for its user.
function ownIdentity(page) {
  return page.evaluate(() => ({ name: document.getElementById("name").value, color: document.getElementById("color").value }))
}

function rgb(hex) {
  let n = parseInt(hex.slice(1), 16)
  return `rgb(${n >> 16}, ${(n >> 8) & 255}, ${n & 255})`
}

async function rename(page, name) {
  await page.locator("#name").fill(name)
  await page.waitForFunction(name => window.pma.client.name == name && window.pma.client.synced, name)
}

async function tabs(browser) {
  let id = newID("tabs")
  let dana = await newUser(browser, "Dana")
  let one = dana.page
  await openDoc(one, args.url, id)
  check((await ownIdentity(one)).name == "Dana", "the first tab takes the stored name")
  await rename(one, "Dana One")
  // A second tab of the same browser starts with the last name used, and
  // is a person of its own.
  let two = await openPage(dana.context, "Dana tab 2")
  await openDoc(two, args.url, id)
  check((await ownIdentity(two)).name == "Dana One", "a new tab defaults to the last name used")
  await rename(two, "Dana Two")
  let three = await openPage(dana.context, "Dana tab 3")
  await openDoc(three, args.url, id)
  check((await ownIdentity(three)).name == "Dana Two", "a new tab defaults to the last name used")
  for (let [page, others] of [[one, ["Dana Two", "Dana Two"]], [two, ["Dana One", "Dana Two"]], [three, ["Dana One", "Dana Two"]]]) {
    await page.waitForFunction(n => document.querySelectorAll("#peers .peer").length == n, others.length)
    await page.waitForFunction(others => JSON.stringify([...document.querySelectorAll("#peers .peer")].map(li => li.textContent).sort()) == JSON.stringify(others), others)
  }
  // Three tabs, three colours, and each page shows the others' as they
  // show their own (once the tabs have settled their colours).
  let tabsOf = [one, two, three], own, deadline = Date.now() + 20000
  for (;;) {
    own = await Promise.all(tabsOf.map(ownIdentity))
    let seen = await Promise.all(tabsOf.map(p => p.evaluate(() =>
      [...document.querySelectorAll("#peers .peer .swatch")].map(s => getComputedStyle(s).backgroundColor).sort())))
    let agree = seen.every((list, i) => JSON.stringify(list) == JSON.stringify(own.filter((_, j) => j != i).map(o => rgb(o.color)).sort()))
    if (agree && new Set(own.map(o => o.color)).size == 3) break
    check(Date.now() < deadline, `three different colours, shown alike: own ${JSON.stringify(own)}, seen ${JSON.stringify(seen)}`)
    await one.waitForTimeout(100)
  }
  await one.screenshot({ path: path.join(args.out, "tabs.png") })
  // A reload keeps the tab's own name (sessionStorage), not the last used.
  await one.reload()
  await one.locator(".ProseMirror").waitFor()
  await waitSynced(one)
  let again = await ownIdentity(one)
  check(again.name == "Dana One" && again.color == own[0].color, `after a reload tab 1 is still ${JSON.stringify(own[0])}: ${JSON.stringify(again)}`)
  await finish([one, two, three], [dana])
}

// offline: Bob's WebSockets pass through a route the test cuts (Chromium's
// offline emulation fires the events but leaves open sockets working).
async function offline(browser) {
  let id = newID("offline")
  let alice = await newUser(browser, "Alice"), bob = await newUser(browser, "Bob")
  let a = alice.page, b = bob.page
  let down = false, routes = []
  await b.routeWebSocket(/\/ws$/, ws => {
    if (down) return ws.close({ code: 4001, reason: "test: network down" })
    ws.connectToServer()
    routes.push(ws)
  })
  await openDoc(a, args.url, id)
  await a.locator(".ProseMirror").click()
  await a.keyboard.type("Before")
  await openDoc(b, args.url, id)
  await converge(a, b)

  down = true
  await bob.context.setOffline(true)
  for (let ws of routes.splice(0)) await ws.close({ code: 4001, reason: "test: network down" })
  await b.locator("#status[data-status=offline]").waitFor()
  await b.locator(".ProseMirror").click()
  await b.keyboard.press("ControlOrMeta+End")
  await b.keyboard.type(" typed offline", { delay: 10 })
  await b.keyboard.press("Enter")
  await b.keyboard.type("more", { delay: 10 })
  let unsaved = b.locator("#unsaved")
  await unsaved.waitFor()
  let shown = await unsaved.textContent()
  let count = await b.evaluate(() => window.pma.client.unsaved)
  check(count > 0 && shown == `${count} changes not saved yet`, `the page says ${JSON.stringify(shown)} with ${count} unsaved`)
  check((await editorText(b)) == "Before typed offline\nmore", "Bob's editor keeps what he typed")
  await b.screenshot({ path: path.join(args.out, "offline.png") })
  check(!(await serverText(args.url, id)).includes("offline"), "the server does not have it yet")

  // The pending retry is stretched out of reach: only the online event
  // can bring Bob back now.
  await b.evaluate(() => {
    let c = window.pma.client
    clearTimeout(c.retryTimer)
    c.retryTimer = setTimeout(() => c.connect(), 1e9)
  })
  down = false
  await bob.context.setOffline(false)
  await b.locator("#status[data-status=online]").waitFor()
  let text = await converge(a, b)
  check(text == "Before typed offline\nmore", `after reconnecting both have ${JSON.stringify(text)}`)
  check((await serverText(args.url, id)) == text, "the server has everything")
  await unsaved.waitFor({ state: "hidden" })
  check((await b.evaluate(() => window.pma.client.unsaved)) == 0 && (await unsaved.getAttribute("data-count")) == "0", "the unsaved count is back to 0")
  await finish([a, b], [alice, bob])
}

// menuBoxes returns the positions of the editor's menu items.
function menuBoxes(page) {
  return page.evaluate(() => JSON.stringify([...document.querySelectorAll(".ProseMirror-menubar .ProseMirror-menuitem")].map(el => {
    let r = el.getBoundingClientRect()
    return [Math.round(r.x), Math.round(r.y), Math.round(r.width)]
  })))
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

// uncovered tells whether the middle of the first element matching
// selector is what the page shows there (no tooltip or label on top).
function uncovered(page, selector) {
  return page.evaluate(selector => {
    let el = document.querySelector(selector), r = el.getBoundingClientRect()
    let top = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2)
    return el == top || el.contains(top)
  }, selector)
}

async function comments(browser) {
  let id = newID("comments")
  let alice = await newUser(browser, "Alice"), bob = await newUser(browser, "Bob")
  let a = alice.page, b = bob.page
  await openDoc(a, args.url, id)
  await a.locator(".ProseMirror").click()
  await a.keyboard.type("The quick brown fox jumps over the lazy dog.")
  await a.keyboard.press("Enter")
  await a.keyboard.type("Another paragraph here.")
  await openDoc(b, args.url, id)
  await converge(a, b)
  await b.locator(".comments-empty").waitFor()

  // The comment button is always in the bar, so nothing moves when a
  // selection enables it.
  let button = a.locator(".ProseMirror-menuitem [title^='Comment the selection']")
  let empty = await menuBoxes(a)
  check(await button.evaluate(el => el.classList.contains("ProseMirror-menu-disabled")), "the comment button is disabled without a selection")
  await selectText(a, "brown fox")
  await a.waitForFunction(() => !document.querySelector(".ProseMirror-menuitem [title^='Comment the selection']").classList.contains("ProseMirror-menu-disabled"))
  check((await menuBoxes(a)) == empty, "the menu items stay where they were")

  // Alice comments "brown fox" with the inline input.
  await button.click()
  let composer = a.locator(".composer")
  await composer.waitFor()
  check((await composer.locator(".composer-quote").textContent()) == "brown fox", "the composer quotes the selection")
  check((await a.locator(".pma-comment-draft").allTextContents()).join("") == "brown fox", "the range being commented is highlighted")
  await a.keyboard.type("Is it red?")
  await a.screenshot({ path: path.join(args.out, "comment-compose.png") })
  await a.keyboard.press("Enter")
  await composer.waitFor({ state: "hidden" })
  await converge(a, b)
  let server = (await serverDoc(args.url, id)).comments
  check(server.length == 1 && /^Is it red\?\n\u2014 Alice, \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(server[0].text), `server comments ${JSON.stringify(server)}`)
  for (let page of [a, b]) {
    let card = page.locator(".comments-list .comment")
    await card.first().waitFor()
    check((await card.count()) == 1, `${page.label} lists one comment`)
    check((await card.locator(".comment-author").textContent()) == "Alice", `${page.label}: the author`)
    check((await card.locator("time").textContent()) == "just now", `${page.label}: the time`)
    check((await card.locator(".comment-quote").textContent()) == "brown fox", `${page.label}: the quoted range`)
    check((await card.locator(".comment-body").textContent()) == "Is it red?", `${page.label}: the text`)
    check((await page.locator(".ProseMirror .pma-comment").allTextContents()).join("") == "brown fox", `${page.label}: the highlight`)
  }

  // Bob clicks the comment: its range is selected, the card active, and
  // nothing covers the highlighted text.
  await b.locator(".comments-list .comment").click()
  await b.waitForFunction(() => window.pma.view.state.doc.textBetween(window.pma.view.state.selection.from, window.pma.view.state.selection.to) == "brown fox")
  await b.locator(".comments-list .comment.active").waitFor()
  await b.keyboard.press("ArrowLeft") // a caret inside the comment
  await b.keyboard.press("ArrowRight")
  await b.keyboard.press("ArrowRight")
  check(await uncovered(b, ".ProseMirror .pma-comment"), "the highlighted text is not covered")
  await b.locator(".comments-list .comment.active").waitFor()

  // Bob starts a comment on "lazy dog" and cancels with Escape; then
  // writes one and sends it with the button.
  await selectText(b, "lazy dog")
  await b.keyboard.press("Control+Alt+m")
  await b.locator(".composer").waitFor()
  await b.keyboard.type("never mind")
  await b.keyboard.press("Escape")
  await b.locator(".composer").waitFor({ state: "hidden" })
  check((await b.locator(".pma-comment-draft").count()) == 0, "cancelling drops the draft highlight")
  await selectText(b, "lazy dog")
  await b.keyboard.press("Control+Alt+m")
  await b.keyboard.type("Which dog?")
  await b.locator(".composer button[type=submit]").click()
  await converge(a, b)
  let cards = a.locator(".comments-list .comment")
  await a.waitForFunction(() => document.querySelectorAll(".comments-list .comment").length == 2)
  check(JSON.stringify(await cards.locator(".comment-body").allTextContents()) == JSON.stringify(["Is it red?", "Which dog?"]), "Alice lists both, in document order")
  check(JSON.stringify(await cards.locator(".comment-author").allTextContents()) == JSON.stringify(["Alice", "Bob"]), "with their authors")
  check((await serverDoc(args.url, id)).comments.length == 2, "the server has both")
  await a.locator(".ProseMirror").click()
  await a.screenshot({ path: path.join(args.out, "comments.png") })

  // Bob deletes Alice's comment.
  await b.locator(".comments-list .comment", { hasText: "Is it red?" }).locator(".comment-delete").click()
  await a.waitForFunction(() => document.querySelectorAll(".comments-list .comment").length == 1)
  await converge(a, b)
  server = (await serverDoc(args.url, id)).comments
  check(server.length == 1 && server[0].text.startsWith("Which dog?"), `server comments after the delete ${JSON.stringify(server)}`)
  check((await a.locator(".ProseMirror .pma-comment").allTextContents()).join("") == "lazy dog", "only Bob's highlight is left")
  await finish([a, b], [alice, bob])
}

// list: a name with spaces, accents, an emoji and a slash is created
// and listed exactly as typed (the hint says that the spaces around it
// go), and opens that document.
async function list(browser) {
  let user = await newUser(browser, "Eve")
  let page = user.page
  await page.goto(args.url + "/")
  let name = newID("My notes / café 😀")
  await page.locator("#docid").fill("  " + name + " ")
  await page.locator("#create-hint", { hasText: `Opens as “${name}”` }).waitFor()
  await page.screenshot({ path: path.join(args.out, "list-hint.png") })
  await page.locator("#create button[type=submit]").click()
  await page.waitForURL(`**/edit/${encodeURIComponent(name)}`)
  await page.locator(".ProseMirror").waitFor()
  await waitSynced(page)
  check((await serverDoc(args.url, name)).version >= 0, "the server has the document under its name")
  await page.goto(args.url + "/")
  await page.locator("#docs a", { hasText: name }).waitFor()
  check((await page.locator("#docs a", { hasText: name }).getAttribute("href")) == "edit/" + encodeURIComponent(name), "the list links the name, percent-encoded")
  await finish([page], [user])
}

// finish checks the pages had no errors and closes the contexts.
async function finish(pages, users) {
  let errors = pages.flatMap(p => p.errors)
  for (let u of users) await u.context.close()
  check(errors.length == 0, "page errors:\n" + errors.join("\n"))
}

const scenarios = { cursors, tabs, offline, comments, list }

async function main() {
  let names = args.only ? args.only.split(",") : Object.keys(scenarios)
  for (let n of names) check(n in scenarios, `unknown scenario ${n}`)
  let browser = await chromium.launch({ executablePath: args.chromium, headless: !args.headed, args: ["--no-sandbox"] })
  try {
    for (let n of names) {
      log("scenario", n)
      await scenarios[n](browser)
      log("scenario", n, "PASS")
    }
    log("PASS; screenshots in", args.out)
  } finally {
    await browser.close()
  }
}

main().catch(e => {
  console.error(e.stack || String(e))
  process.exit(1)
})

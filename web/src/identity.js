// The user's name and colour, shown to the other editors. Each tab is
// its own person: the identity lives in sessionStorage (one per tab).
// The last name used in any tab (localStorage) is the default for a new
// tab; a new tab's colour is chosen so that it differs from the people
// already on the document (pickColor).

const adjectives = ["Amber", "Brisk", "Calm", "Dapper", "Eager", "Fuzzy", "Gentle", "Happy", "Jolly", "Keen", "Lucky", "Mellow", "Nimble", "Quiet", "Swift", "Witty"]
const animals = ["Badger", "Crane", "Dolphin", "Fox", "Gecko", "Heron", "Ibis", "Koala", "Lynx", "Otter", "Panda", "Quail", "Raven", "Seal", "Tiger", "Wombat"]

// palette is the colours given to people, ten that are told apart
// easily; pickColor hands them out in this order.
export const palette = ["#d0342c", "#1a73e8", "#3c8d2f", "#e8710a", "#8e24aa", "#0f8f8a", "#c69200", "#b0277a", "#5d4037", "#546e7a"]

const nameKey = "pmauthority.name", colorKey = "pmauthority.color", chosenKey = "pmauthority.colorChosen"

function pick(list) {
  return list[Math.floor(Math.random() * list.length)]
}

function load(storage, key) {
  try { return storage().getItem(key) } catch { return null }
}

function store(storage, key, value) {
  try { storage().setItem(key, value) } catch { /* storage disabled: keep it for this page only */ }
}

const tab = () => sessionStorage, shared = () => localStorage

// isColor tells whether color is #rrggbb, the form the protocol takes.
export function isColor(color) {
  return typeof color == "string" && /^#[0-9a-fA-F]{6}$/.test(color)
}

// loadIdentity returns this tab's {name, color, chosen}: chosen tells
// whether the user picked the colour (then it is kept as it is). A new
// tab takes the last name used (or makes one up) and a colour from the
// palette, to be adjusted with pickColor once the others are known.
export function loadIdentity() {
  let name = (load(tab, nameKey) || load(shared, nameKey) || "").trim().slice(0, 64)
  if (!name) name = pick(adjectives) + " " + pick(animals)
  let color = load(tab, colorKey)
  let chosen = isColor(color) && load(tab, chosenKey) == "1"
  if (!isColor(color)) color = pick(palette)
  saveIdentity(name, color, chosen)
  return { name, color, chosen }
}

// saveIdentity stores this tab's identity, and the name as the default
// of new tabs.
export function saveIdentity(name, color, chosen) {
  store(tab, nameKey, name)
  store(tab, colorKey, color)
  store(tab, chosenKey, chosen ? "1" : "0")
  store(shared, nameKey, name)
}

// pickColor returns the colour a client should show given the others on
// the document ([{clientID, color}]): its own when no one else has it,
// or when every other holder has a smaller client id (the smallest
// keeps a colour); else the first palette colour nobody uses (the first
// ten people all differ), or, with the palette used up, its own.
export function pickColor(clientID, color, others) {
  let taken = new Set(others.map(o => String(o.color).toLowerCase()))
  let clash = others.some(o => String(o.color).toLowerCase() == color.toLowerCase() && idLess(o.clientID, clientID))
  if (!clash) return color
  return palette.find(c => !taken.has(c)) || color
}

function idLess(a, b) {
  return typeof a == "number" && typeof b == "number" ? a < b : String(a) < String(b)
}

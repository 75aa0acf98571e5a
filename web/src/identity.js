// The user's name and colour, shown to the other editors: random at
// first, then kept in localStorage.

const adjectives = ["Amber", "Brisk", "Calm", "Dapper", "Eager", "Fuzzy", "Gentle", "Happy", "Jolly", "Keen", "Lucky", "Mellow", "Nimble", "Quiet", "Swift", "Witty"]
const animals = ["Badger", "Crane", "Dolphin", "Fox", "Gecko", "Heron", "Ibis", "Koala", "Lynx", "Otter", "Panda", "Quail", "Raven", "Seal", "Tiger", "Wombat"]
const palette = ["#d0342c", "#e8710a", "#c69200", "#3c8d2f", "#0f8f8a", "#1a73e8", "#5e35b1", "#b0277a", "#6d4c41", "#546e7a"]

const nameKey = "pmauthority.name", colorKey = "pmauthority.color"

function pick(list) {
  return list[Math.floor(Math.random() * list.length)]
}

function load(key) {
  try { return localStorage.getItem(key) } catch { return null }
}

function store(key, value) {
  try { localStorage.setItem(key, value) } catch { /* storage disabled: keep it for this page only */ }
}

// isColor tells whether color is #rrggbb, the form the protocol takes.
export function isColor(color) {
  return typeof color == "string" && /^#[0-9a-fA-F]{6}$/.test(color)
}

// loadIdentity returns the stored {name, color}, making up (and
// storing) what is missing.
export function loadIdentity() {
  let name = (load(nameKey) || "").trim().slice(0, 64)
  let color = load(colorKey)
  if (!name) name = pick(adjectives) + " " + pick(animals)
  if (!isColor(color)) color = pick(palette)
  saveIdentity(name, color)
  return { name, color }
}

// saveIdentity stores the name and colour.
export function saveIdentity(name, color) {
  store(nameKey, name)
  store(colorKey, color)
}

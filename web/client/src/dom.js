// h creates an element with attributes and children (strings, nodes or
// arrays of them; null and false are skipped).
export function h(tag, attrs, ...children) {
  let el = document.createElement(tag)
  for (let name in attrs) {
    let value = attrs[name]
    if (value != null && value !== false) el.setAttribute(name, value === true ? "" : String(value))
  }
  append(el, children)
  return el
}

function append(el, children) {
  for (let child of children) {
    if (child == null || child === false) continue
    if (Array.isArray(child)) append(el, child)
    else el.appendChild(typeof child == "string" ? document.createTextNode(child) : child)
  }
}

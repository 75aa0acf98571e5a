package server

import (
	"bytes"
	"errors"
	"math"
	"strconv"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/jsonscan"
	"github.com/pmauthority/pmauthority/model"
)

// This file holds the encoding and decoding of the WebSocket messages of
// docs/protocol.md; steps messages are decoded as POST /docs/{id}/events
// bodies (decodeSubmission).

// Keys of client messages, and the index of each in wsMessage.raw.
var wsKeys = jsonscan.NewKeys("type", "id", "version", "commentVersion", "clientID", "name", "color", "anchor", "head", "token", "data")

const (
	wsKeyType = iota
	wsKeyID
	wsKeyVersion
	wsKeyCommentVersion
	wsKeyClientID
	wsKeyName
	wsKeyColor
	wsKeyAnchor
	wsKeyHead
	wsKeyToken
	wsKeyData
	wsKeyCount
)

// wsMessage is a client message, its known top-level values still in JSON
// (nil when absent; of duplicate keys the last wins, as with JSON.parse).
type wsMessage struct {
	typ string
	raw [wsKeyCount][]byte
}

// decode reads data's top level. On failure it returns the message of the
// error answer.
func (m *wsMessage) decode(data []byte, maxDepth int) string {
	var d jsonscan.Decoder
	d.Reset(data)
	d.SetMaxDepth(maxDepth)
	k, err := d.Peek()
	if err != nil {
		return syntaxMessage(&d, err)
	}
	if k != jsonscan.Object {
		return "a message must be a JSON object with a \"type\" (found " + k.String() + ")"
	}
	if err := d.BeginObject(); err != nil {
		return syntaxMessage(&d, err)
	}
	for {
		i, _, more, err := d.NextKeyIndex(wsKeys)
		if err != nil {
			return syntaxMessage(&d, err)
		}
		if !more {
			break
		}
		if _, err := d.Peek(); err != nil {
			return syntaxMessage(&d, err)
		}
		start := d.Pos()
		if err := d.Skip(); err != nil {
			return syntaxMessage(&d, err)
		}
		if i >= 0 {
			m.raw[i] = bytes.TrimLeft(data[start:d.Pos()], " \t\r\n")
		}
	}
	if err := d.End(); err != nil {
		return syntaxMessage(&d, err)
	}
	raw := m.raw[wsKeyType]
	switch {
	case raw == nil:
		return `missing "type"`
	case string(raw) == `"hello"`:
		m.typ = "hello"
	case string(raw) == `"steps"`:
		m.typ = "steps"
	case string(raw) == `"presence"`:
		m.typ = "presence"
	case string(raw) == `"ping"`:
		m.typ = "ping"
	case string(raw) == `"token"`:
		m.typ = "token"
	default:
		if len(raw) > 64 {
			raw = append(raw[:64:64], "…"...)
		}
		return "unknown message type " + string(raw) + ": want hello, steps, presence, ping or token"
	}
	return ""
}

// id returns the message's "id" (a JSON number, copied), nil when it has
// none, or the problem with it.
func (m *wsMessage) id() ([]byte, string) {
	raw := m.raw[wsKeyID]
	if raw == nil || string(raw) == "null" {
		return nil, ""
	}
	if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') || len(raw) > 32 {
		return nil, `"id" must be a number`
	}
	return bytes.Clone(raw), ""
}

// integer reads the value of key as an integer from 0 to limit; null
// reports ok false without a problem. Digits beyond limit read as limit
// when clamp is set (versions: ahead of any document), else as a problem.
func (m *wsMessage) integer(key int, name string, limit int64, clamp bool) (n int64, ok bool, problem string) {
	raw := m.raw[key]
	if raw == nil {
		return 0, false, `missing "` + name + `"`
	}
	if string(raw) == "null" {
		return 0, false, ""
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) || raw[0] == '"' || raw[0] == '[' || raw[0] == '{' {
		return 0, false, `"` + name + `" must be a non-negative integer (found ` + abbreviate(raw) + ")"
	}
	if f != math.Trunc(f) || f < 0 || !clamp && f > float64(limit) {
		return 0, false, `"` + name + `" must be an integer from 0 to ` + strconv.FormatInt(limit, 10) + " (found " + abbreviate(raw) + ")"
	}
	if f >= float64(limit) {
		return limit, true, ""
	}
	return int64(f), true, ""
}

// token returns the "token" of a hello or a token message ("" when
// absent or null), or the problem with it.
func (m *wsMessage) token() (string, string) {
	raw := m.raw[wsKeyToken]
	if raw == nil || string(raw) == "null" {
		return "", ""
	}
	if raw[0] != '"' {
		return "", `"token" must be a string`
	}
	d := jsonscan.NewDecoder(raw)
	s, err := d.ReadString()
	if err != nil {
		return "", `"token" must be a string`
	}
	return s, ""
}

// abbreviate returns raw JSON for a message, cut to 64 bytes.
func abbreviate(raw []byte) string {
	if len(raw) > 64 {
		return string(raw[:64]) + "…"
	}
	return string(raw)
}

// maxNameLength is the longest name in a hello, in UTF-16 units.
const maxNameLength = 64

// clientIDOf checks a hello's client id with collab.ParseClientID: a JSON
// integer from 0 to 2^53 or a string of at most 256 bytes, as
// prosemirror-collab makes them. It returns a copy.
func clientIDOf(raw []byte) ([]byte, string) {
	if raw == nil {
		return nil, `missing "clientID"`
	}
	id, err := collab.ParseClientID(raw)
	switch {
	case err == nil:
		return bytes.Clone(id), ""
	case raw[0] == '"':
		return nil, `"clientID" must be a number or a string of at most 256 bytes`
	}
	return nil, `"clientID" must be an integer from 0 to 2^53 or a string (found ` + abbreviate(raw) + ")"
}

// appendName appends a hello's name as a JSON string (null when absent).
func appendName(buf, raw []byte) ([]byte, string) {
	if raw == nil || string(raw) == "null" {
		return append(buf, "null"...), ""
	}
	if raw[0] != '"' {
		return buf, `"name" must be a string`
	}
	d := jsonscan.NewDecoder(raw)
	s, err := d.ReadStringBytes()
	if err != nil {
		return buf, `"name" must be a string`
	}
	if model.UTF16Len(string(s)) > maxNameLength {
		return buf, `"name" is longer than 64 characters`
	}
	return model.AppendJSONString(buf, string(s)), ""
}

// principalName returns the presence name of an authenticated
// principal, as a JSON string: its display name (the token's "name"
// claim), else its id, cut to maxNameLength UTF-16 units (between
// characters).
func principalName(p Principal) []byte {
	name := p.Name
	if name == "" {
		name = p.ID
	}
	units := 0
	for i, r := range name {
		n := 1
		if r > 0xFFFF {
			n = 2
		}
		if units+n > maxNameLength {
			name = name[:i]
			break
		}
		units += n
	}
	return model.AppendJSONString(nil, name)
}

// appendColor appends a hello's color, "#rrggbb" (null when absent).
func appendColor(buf, raw []byte) ([]byte, string) {
	if raw == nil || string(raw) == "null" {
		return append(buf, "null"...), ""
	}
	ok := len(raw) == 9 && raw[0] == '"' && raw[1] == '#' && raw[8] == '"'
	for i := 2; ok && i < 8; i++ {
		b := raw[i]
		ok = '0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F'
	}
	if !ok {
		return buf, `"color" must be "#rrggbb" (found ` + abbreviate(raw) + ")"
	}
	return append(buf, raw...), ""
}

// appendPresenceData appends ,"data":… to the start of a presence entry
// for a hello's data: nothing when it is absent or null, else a JSON
// object of at most max bytes (Limits.MaxPresenceData), copied as sent.
func appendPresenceData(buf, raw []byte, max int) ([]byte, string) {
	if raw == nil || string(raw) == "null" {
		return buf, ""
	}
	if raw[0] != '{' {
		return buf, `"data" must be an object (found ` + abbreviate(raw) + ")"
	}
	if len(raw) > max {
		return buf, `"data" is ` + strconv.Itoa(len(raw)) + " bytes of JSON, more than " + strconv.Itoa(max) + " (--max-presence-data)"
	}
	buf = append(buf, `,"data":`...)
	return append(buf, raw...), ""
}

// appendIdent appends the start of a connection's presence entries:
// {"clientID":…,"name":…,"color":… (without the closing brace), from the
// hello's values (clientID checked, name and color raw JSON or nil).
func appendIdent(buf, clientID, name, color []byte) ([]byte, string) {
	buf = append(buf, `{"clientID":`...)
	buf = append(buf, clientID...)
	buf = append(buf, `,"name":`...)
	buf, problem := appendName(buf, name)
	if problem != "" {
		return nil, problem
	}
	buf = append(buf, `,"color":`...)
	return appendColor(buf, color)
}

// appendWelcome appends {"type":"welcome",…} with the fields of events,
// an Events' JSON, and the presence entries of conns and peers.
func appendWelcome(buf, events []byte, conns []*wsConn, peers []*peerEntry) []byte {
	buf = append(buf, `{"type":"welcome",`...)
	buf = append(buf, events[1:len(events)-1]...)
	buf = append(buf, `,"presence":`...)
	return append(appendClients(buf, conns, peers, nil), '}')
}

// appendSnapshot appends {"type":"snapshot",…} with the fields of state,
// a State's JSON, and the presence entries of conns and peers.
func appendSnapshot(buf, state []byte, conns []*wsConn, peers []*peerEntry) []byte {
	buf = append(buf, `{"type":"snapshot",`...)
	buf = append(buf, state[1:len(state)-1]...)
	buf = append(buf, `,"presence":`...)
	return append(appendClients(buf, conns, peers, nil), '}')
}

// appendStepsPush appends {"type":"steps",…} with the fields of events,
// an Events' JSON.
func appendStepsPush(buf, events []byte) []byte {
	buf = append(buf, `{"type":"steps",`...)
	return append(buf, events[1:]...)
}

// appendAck appends {"type":"ack","id":…,"version":…,"commentVersion":…}.
func appendAck(buf, id []byte, res collab.Result) []byte {
	buf = append(buf, `{"type":"ack","id":`...)
	buf = appendRawOrNull(buf, id)
	buf = append(buf, `,"version":`...)
	buf = strconv.AppendInt(buf, res.Version, 10)
	buf = append(buf, `,"commentVersion":`...)
	buf = strconv.AppendInt(buf, res.CommentVersion, 10)
	return append(buf, '}')
}

// appendConflict appends {"type":"conflict","id":…,"version":…}.
func appendConflict(buf, id []byte, version int64) []byte {
	buf = append(buf, `{"type":"conflict","id":`...)
	buf = appendRawOrNull(buf, id)
	buf = append(buf, `,"version":`...)
	buf = strconv.AppendInt(buf, version, 10)
	return append(buf, '}')
}

// appendPong appends {"type":"pong"} with "id" when id is not nil.
func appendPong(buf, id []byte) []byte {
	buf = append(buf, `{"type":"pong"`...)
	if id != nil {
		buf = append(buf, `,"id":`...)
		buf = append(buf, id...)
	}
	return append(buf, '}')
}

// appendWSError appends {"type":"error","id":…,"status":…,"message":…,"step":…}
// ("id" when id is not nil, "step" when step >= 0).
func appendWSError(buf, id []byte, status, step int, msg string) []byte {
	buf = append(buf, `{"type":"error",`...)
	if id != nil {
		buf = append(buf, `"id":`...)
		buf = append(buf, id...)
		buf = append(buf, ',')
	}
	buf = append(buf, `"status":`...)
	buf = strconv.AppendInt(buf, int64(status), 10)
	buf = append(buf, `,"message":`...)
	buf = model.AppendJSONString(buf, msg)
	if step >= 0 {
		buf = append(buf, `,"step":`...)
		buf = strconv.AppendInt(buf, int64(step), 10)
	}
	return append(buf, '}')
}

// appendPresence appends the presence message at version of the entries
// of changed but skip, of peers, and of the client ids that left.
func appendPresence(buf []byte, version int64, changed []*wsConn, peers []*peerEntry, left [][]byte, skip *wsConn) []byte {
	buf = append(buf, `{"type":"presence","version":`...)
	buf = strconv.AppendInt(buf, version, 10)
	buf = append(buf, `,"clients":`...)
	buf = appendClients(buf, changed, peers, skip)
	buf = append(buf, `,"left":[`...)
	for i, id := range left {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, id...)
	}
	return append(buf, "]}"...)
}

// appendClients appends the presence entries of conns but skip, and of
// peers (clients of other nodes), as a JSON array:
// [{"clientID":…,"name":…,"color":…,"anchor":…,"head":…}, …]. It reads
// the connections' selections, guarded by their hub's mu.
func appendClients(buf []byte, conns []*wsConn, peers []*peerEntry, skip *wsConn) []byte {
	buf = append(buf, '[')
	first := true
	for _, c := range conns {
		if c == skip {
			continue
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = append(buf, c.ident...)
		buf = appendSelection(buf, c.anchor, c.head)
	}
	buf = appendPeerEntries(buf, peers, first)
	return append(buf, ']')
}

// appendTokenAccepted appends {"type":"token","id":…} (the answer to a
// token message).
func appendTokenAccepted(buf, id []byte) []byte {
	buf = append(buf, `{"type":"token","id":`...)
	buf = appendRawOrNull(buf, id)
	return append(buf, '}')
}

// appendRawOrNull appends the JSON text raw, or null when it is nil.
func appendRawOrNull(buf, raw []byte) []byte {
	if raw == nil {
		return append(buf, "null"...)
	}
	return append(buf, raw...)
}

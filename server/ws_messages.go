package server

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/internal/jsonscan"
	"github.com/pmauthority/pmauthority/model"
)

// This file holds the decoding and encoding of the WebSocket messages of
// docs/protocol.md; the message table is in ws.go.

// Keys of client messages, and the index of each in wsMessage.raw.
var wsKeys = jsonscan.NewKeys("type", "id", "version", "commentVersion", "clientID", "name", "color", "anchor", "head", "token", "data", "steps", "comment", "ref", "mode", "threadVersion")

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
	wsKeySteps
	wsKeyComment
	wsKeyRef
	wsKeyMode
	wsKeyThreadVersion
	wsKeyCount
)

// wsMessage is a client message, its known top-level values still in JSON
// (nil when absent; of duplicate keys the last wins, as with JSON.parse),
// and what its type's decoder made of them.
type wsMessage struct {
	typ int // the index of its type in the names scan was given
	raw [wsKeyCount][]byte
	// sub holds the fields of a submission (version, steps, clientID,
	// comment), read as the message is scanned: a steps message's steps
	// are scanned once, and its other types ignore them.
	sub submissionFields
	sc  *collabScratch // of sub's steps and comment events

	id []byte // the message's "id", copied; nil when it has none

	// Decoded by the type's decoder.
	submission     collab.Submission // steps, commit
	commitMode     bool              // hello: "mode" is "commit"
	version        int64             // hello, presence
	commentVersion int64             // hello
	threadVersion  int64             // hello (0 when absent)
	snapshot       bool              // hello: "version" is null
	clientID       []byte            // hello
	info           []byte            // hello: the start of its presence info
	data           []byte            // hello: ,"data":… to follow info, or nil
	anchor, head   int               // presence; -1 when hidden
	token          string            // hello, token
}

// scan reads data's top level, the values of a submission's keys with sc
// (submissionFields.read), and finds the message's type among names
// (m.typ). Its errors are malformed's.
func (m *wsMessage) scan(sc *collabScratch, data []byte, maxDepth, maxSteps int, names []string) error {
	d := &sc.d
	d.Reset(data)
	d.SetMaxDepth(maxDepth)
	k, err := d.Peek()
	if err != nil {
		return malformed(syntaxMessage(d, err))
	}
	if k != jsonscan.Object {
		return malformed("a message must be a JSON object with a \"type\" (found " + k.String() + ")")
	}
	if err := d.BeginObject(); err != nil {
		return malformed(syntaxMessage(d, err))
	}
	for {
		i, _, more, err := d.NextKeyIndex(wsKeys)
		if err != nil {
			return malformed(syntaxMessage(d, err))
		}
		if !more {
			break
		}
		if _, err := d.Peek(); err != nil {
			return malformed(syntaxMessage(d, err))
		}
		start := d.Pos()
		switch i {
		case wsKeyVersion:
			err = m.sub.read(sc, d, submitVersion, maxSteps)
		case wsKeyClientID:
			err = m.sub.read(sc, d, submitClientID, maxSteps)
		case wsKeySteps:
			err = m.sub.read(sc, d, submitSteps, maxSteps)
		case wsKeyComment:
			err = m.sub.read(sc, d, submitComment, maxSteps)
		case wsKeyRef:
			err = m.sub.read(sc, d, submitRef, maxSteps)
		default:
			err = d.Skip()
		}
		if err != nil {
			return malformed(syntaxMessage(d, err))
		}
		if i >= 0 {
			m.raw[i] = bytes.TrimLeft(data[start:d.Pos()], " \t\r\n")
		}
	}
	if err := d.End(); err != nil {
		return malformed(syntaxMessage(d, err))
	}
	raw := m.raw[wsKeyType]
	if raw == nil {
		return malformed(`missing "type"`)
	}
	for i, name := range names {
		if string(raw) == `"`+name+`"` {
			m.typ = i
			return nil
		}
	}
	return malformed("unknown message type " + abbreviate(raw) + ": want " + strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1])
}

// decodeID reads the message's "id" (a JSON number) into m.id.
func (m *wsMessage) decodeID() error {
	raw := m.raw[wsKeyID]
	if raw == nil || string(raw) == "null" {
		return nil
	}
	if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') || len(raw) > 32 {
		return errors.New(`"id" must be a number`)
	}
	m.id = bytes.Clone(raw)
	return nil
}

// integer reads the value of key as an integer from 0 to limit; null
// reports ok false without an error. Digits beyond limit read as limit
// when clamp is set (versions: ahead of any document), else as an error.
func (m *wsMessage) integer(key int, name string, limit int64, clamp bool) (n int64, ok bool, err error) {
	raw := m.raw[key]
	if raw == nil {
		return 0, false, errors.New(`missing "` + name + `"`)
	}
	if string(raw) == "null" {
		return 0, false, nil
	}
	f, perr := strconv.ParseFloat(string(raw), 64)
	if perr != nil && !errors.Is(perr, strconv.ErrRange) || raw[0] == '"' || raw[0] == '[' || raw[0] == '{' {
		return 0, false, errors.New(`"` + name + `" must be a non-negative integer (found ` + abbreviate(raw) + ")")
	}
	if f != math.Trunc(f) || f < 0 || !clamp && f > float64(limit) {
		return 0, false, errors.New(`"` + name + `" must be an integer from 0 to ` + strconv.FormatInt(limit, 10) + " (found " + abbreviate(raw) + ")")
	}
	if f >= float64(limit) {
		return limit, true, nil
	}
	return int64(f), true, nil
}

// decodeToken reads the "token" of a hello or a token message ("" when
// absent or null) into m.token.
func (m *wsMessage) decodeToken() error {
	raw := m.raw[wsKeyToken]
	if raw == nil || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		d := jsonscan.NewDecoder(raw)
		if s, err := d.ReadString(); err == nil {
			m.token = s
			return nil
		}
	}
	return errors.New(`"token" must be a string`)
}

// decodeHello reads a hello's fields: its version (null: a snapshot),
// comment version, thread version, client id, name, color, data (up to maxData bytes,
// Limits.MaxPresenceData) and token.
func (m *wsMessage) decodeHello(maxData int) error {
	version, hasVersion, err := m.integer(wsKeyVersion, "version", math.MaxInt64, true)
	if err != nil {
		return err
	}
	m.version, m.snapshot = version, !hasVersion
	if hasVersion && m.raw[wsKeyCommentVersion] != nil {
		if m.commentVersion, _, err = m.integer(wsKeyCommentVersion, "commentVersion", math.MaxInt64, true); err != nil {
			return err
		}
	}
	if hasVersion && m.raw[wsKeyThreadVersion] != nil {
		if m.threadVersion, _, err = m.integer(wsKeyThreadVersion, "threadVersion", math.MaxInt64, true); err != nil {
			return err
		}
	}
	if m.clientID, err = clientIDOf(m.raw[wsKeyClientID]); err != nil {
		return err
	}
	if m.info, err = appendInfo(make([]byte, 0, 64), m.raw[wsKeyName], m.raw[wsKeyColor]); err != nil {
		return err
	}
	if m.data, err = appendPresenceData(nil, m.raw[wsKeyData], maxData); err != nil {
		return err
	}
	switch mode := string(m.raw[wsKeyMode]); mode {
	case "", `"classic"`:
	case `"commit"`:
		m.commitMode = true
	default:
		return errors.New(`"mode" must be "classic" or "commit" (found ` + abbreviate(m.raw[wsKeyMode]) + ")")
	}
	return m.decodeToken()
}

// maxPosition bounds presence positions (documents are far smaller).
const maxPosition = math.MaxInt32

// decodePresence reads a presence message's version and selection
// (anchor and head -1 when hidden).
func (m *wsMessage) decodePresence() error {
	version, _, err := m.integer(wsKeyVersion, "version", math.MaxInt64, true)
	if err == nil && string(m.raw[wsKeyVersion]) == "null" {
		err = errors.New(`"version" must be a non-negative integer`)
	}
	if err != nil {
		return err
	}
	anchor, visible, err := m.integer(wsKeyAnchor, "anchor", maxPosition, false)
	if err != nil {
		return err
	}
	head := anchor
	switch {
	case !visible:
		anchor, head = -1, -1
	case m.raw[wsKeyHead] != nil:
		h, ok, err := m.integer(wsKeyHead, "head", maxPosition, false)
		if err != nil {
			return err
		}
		if ok {
			head = h
		}
	}
	m.version, m.anchor, m.head = version, int(anchor), int(head)
	return nil
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
func clientIDOf(raw []byte) ([]byte, error) {
	if raw == nil {
		return nil, errors.New(`missing "clientID"`)
	}
	id, err := collab.ParseClientID(raw)
	switch {
	case err == nil:
		return bytes.Clone(id), nil
	case raw[0] == '"':
		return nil, errors.New(`"clientID" must be a number or a string of at most 256 bytes`)
	}
	return nil, errors.New(`"clientID" must be an integer from 0 to 2^53 or a string (found ` + abbreviate(raw) + ")")
}

// appendName appends a hello's name as a JSON string (null when absent).
func appendName(buf, raw []byte) ([]byte, error) {
	if raw == nil || string(raw) == "null" {
		return append(buf, "null"...), nil
	}
	if raw[0] != '"' {
		return buf, errors.New(`"name" must be a string`)
	}
	d := jsonscan.NewDecoder(raw)
	s, err := d.ReadStringBytes()
	if err != nil {
		return buf, errors.New(`"name" must be a string`)
	}
	if model.UTF16Len(string(s)) > maxNameLength {
		return buf, errors.New(`"name" is longer than 64 characters`)
	}
	return model.AppendJSONString(buf, string(s)), nil
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
func appendColor(buf, raw []byte) ([]byte, error) {
	if raw == nil || string(raw) == "null" {
		return append(buf, "null"...), nil
	}
	ok := len(raw) == 9 && raw[0] == '"' && raw[1] == '#' && raw[8] == '"'
	for i := 2; ok && i < 8; i++ {
		b := raw[i]
		ok = '0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F'
	}
	if !ok {
		return buf, errors.New(`"color" must be "#rrggbb" (found ` + abbreviate(raw) + ")")
	}
	return append(buf, raw...), nil
}

// appendPresenceData appends ,"data":… to the start of a presence info
// for a hello's data: nothing when it is absent or null, else a JSON
// object of at most max bytes (Limits.MaxPresenceData), copied as sent.
func appendPresenceData(buf, raw []byte, max int) ([]byte, error) {
	if raw == nil || string(raw) == "null" {
		return buf, nil
	}
	if raw[0] != '{' {
		return buf, errors.New(`"data" must be an object (found ` + abbreviate(raw) + ")")
	}
	if len(raw) > max {
		return buf, errors.New(`"data" is ` + strconv.Itoa(len(raw)) + " bytes of JSON, more than " + strconv.Itoa(max) + " (Limits.MaxPresenceData)")
	}
	buf = append(buf, `,"data":`...)
	return append(buf, raw...), nil
}

// appendInfo appends the start of what a connection's presence entries
// show of it: {"name":…,"color":… (without the closing brace), from the
// hello's values (raw JSON or nil).
func appendInfo(buf, name, color []byte) ([]byte, error) {
	buf = append(buf, `{"name":`...)
	buf, err := appendName(buf, name)
	if err != nil {
		return nil, err
	}
	buf = append(buf, `,"color":`...)
	return appendColor(buf, color)
}

// appendWelcome appends {"type":"welcome",…} with the fields of events,
// an Events' JSON, and the presence entries of conns and peers.
func appendWelcome(buf, events []byte, entries []collab.Presence, skip []byte) []byte {
	buf = append(buf, `{"type":"welcome",`...)
	buf = append(buf, events[1:len(events)-1]...)
	buf = append(buf, `,"presence":`...)
	return append(appendClients(buf, entries, skip), '}')
}

// appendSnapshot appends {"type":"snapshot",…} with the fields of state,
// a State's JSON, and the presence entries of conns and peers.
func appendSnapshot(buf, state []byte, entries []collab.Presence, skip []byte) []byte {
	buf = append(buf, `{"type":"snapshot",`...)
	buf = append(buf, state[1:len(state)-1]...)
	buf = append(buf, `,"presence":`...)
	return append(appendClients(buf, entries, skip), '}')
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

// appendCommitted appends the answer to a commit message:
// {"type":"committed","id":…} and the fields of a POST
// /docs/{id}/commits answer.
func appendCommitted(buf, id []byte, res collab.Result) []byte {
	buf = append(buf, `{"type":"committed","id":`...)
	buf = appendRawOrNull(buf, id)
	buf = append(buf, ',')
	start := len(buf)
	buf = appendCommitResult(buf, res)
	return append(buf[:start], buf[start+1:]...) // its fields, without its '{'
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
// ("id" when id is not nil, "step" when step >= 0), the settings that msg
// names named by names (names.go).
func appendWSError(buf, id []byte, status, step int, msg string, names settingNames) []byte {
	msg = names.named(msg)
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

// appendPresence appends the presence message at version of entries,
// but the one of skip (a client id), and of the client ids that left.
func appendPresence(buf []byte, version int64, entries []collab.Presence, left []collab.ClientID, skip []byte) []byte {
	buf = append(buf, `{"type":"presence","version":`...)
	buf = strconv.AppendInt(buf, version, 10)
	buf = append(buf, `,"clients":`...)
	buf = appendClients(buf, entries, skip)
	buf = append(buf, `,"left":[`...)
	for i, id := range left {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, id...)
	}
	return append(buf, "]}"...)
}

// appendClients appends the presence entries but the one of skip as a
// JSON array: [{"clientID":…,"name":…,"color":…,"anchor":…,"head":…}, …].
func appendClients(buf []byte, entries []collab.Presence, skip []byte) []byte {
	buf = append(buf, '[')
	first := true
	for _, p := range entries {
		if bytes.Equal(p.ClientID, skip) {
			continue
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = append(buf, `{"clientID":`...)
		buf = append(buf, p.ClientID...)
		if len(p.Info) > 2 {
			buf = append(buf, ',')
			buf = append(buf, p.Info[1:len(p.Info)-1]...)
		}
		buf = appendSelection(buf, p.Anchor, p.Head)
	}
	return append(buf, ']')
}

// appendSelection appends ,"anchor":…,"head":…} (null for a hidden
// selection, anchor < 0).
func appendSelection(buf []byte, anchor, head int) []byte {
	buf = append(buf, `,"anchor":`...)
	if anchor < 0 {
		return append(buf, `null,"head":null}`...)
	}
	buf = strconv.AppendInt(buf, int64(anchor), 10)
	buf = append(buf, `,"head":`...)
	buf = strconv.AppendInt(buf, int64(head), 10)
	return append(buf, '}')
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

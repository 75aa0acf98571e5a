package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Role is what a principal may do with a document; each role includes
// the ones before it. The zero Role is none.
type Role int8

// The roles.
const (
	RoleNone Role = iota
	// RoleRead reads a document, its events and presence.
	RoleRead
	// RoleComment also submits comment events (without steps).
	RoleComment
	// RoleSuggest also submits steps that only make suggestions (the
	// marks of package suggest): collab.Submission.SuggestOnly.
	RoleSuggest
	// RoleEdit also submits steps, and creates documents.
	RoleEdit
	// RoleAdmin also deletes and manages documents.
	RoleAdmin
)

var roleNames = [...]string{RoleNone: "none", RoleRead: "read", RoleComment: "comment", RoleSuggest: "suggest", RoleEdit: "edit", RoleAdmin: "admin"}

// String returns the role's name as tokens spell it ("none" for RoleNone).
func (r Role) String() string {
	if r < 0 || int(r) >= len(roleNames) {
		return "Role(" + strconv.Itoa(int(r)) + ")"
	}
	return roleNames[r]
}

// ParseRole returns the role named s: read, comment, suggest, edit or admin.
func ParseRole(s string) (Role, error) {
	for r := RoleRead; r <= RoleAdmin; r++ {
		if roleNames[r] == s {
			return r, nil
		}
	}
	return RoleNone, fmt.Errorf("unknown role %s: want read, comment, suggest, edit or admin", quote(s))
}

// Grant gives Role on the documents that Pattern matches.
type Grant struct {
	// Pattern is a document id, a prefix of ids ending in "*" ("*"
	// alone matches every document), or "=" and a document id, which
	// matches that id only, whatever characters it has ("=*" is the
	// document named "*", "=a=b" the one named "a=b").
	Pattern string
	Role    Role
}

// Matches reports whether the grant's pattern matches docID.
func (g Grant) Matches(docID string) bool {
	if id, ok := strings.CutPrefix(g.Pattern, "="); ok {
		return id == docID
	}
	if prefix, ok := strings.CutSuffix(g.Pattern, "*"); ok {
		return strings.HasPrefix(docID, prefix)
	}
	return g.Pattern == docID
}

// Grants is a token's "docs" claim.
type Grants []Grant

// MaxPatternBytes is the longest pattern of a "docs" claim, in bytes.
const MaxPatternBytes = 256

// Role returns the highest role of the grants whose pattern matches
// docID (RoleNone when none does).
func (gs Grants) Role(docID string) Role {
	best := RoleNone
	for _, g := range gs {
		if g.Role > best && g.Matches(docID) {
			best = g.Role
		}
	}
	return best
}

// checkPattern reports what is wrong with a pattern ("" when nothing is).
func checkPattern(p string) string {
	switch {
	case p == "":
		return "an empty pattern"
	case len(p) > MaxPatternBytes:
		return "a pattern longer than " + strconv.Itoa(MaxPatternBytes) + " bytes"
	case p == "=":
		return "pattern \"=\": an exact pattern needs a document id after \"=\""
	case p[0] == '=':
		return "" // exact: "*" is a character of the id
	case strings.Contains(strings.TrimSuffix(p, "*"), "*"):
		return "pattern " + quote(p) + ": \"*\" may only end a pattern (for an id with \"*\" in it, the exact form \"=ID\")"
	}
	return ""
}

// ParseGrant reads a grant written PATTERN=ROLE, as the token command's
// --doc flag takes it (e.g. "team-a.*=edit", "=*=admin" for the document
// named "*"); the role follows the last "=".
func ParseGrant(s string) (Grant, error) {
	i := strings.LastIndexByte(s, '=')
	if i < 0 {
		return Grant{}, fmt.Errorf("grant %s: want PATTERN=ROLE (e.g. team-a.*=edit)", quote(s))
	}
	pattern, name := s[:i], s[i+1:]
	if problem := checkPattern(pattern); problem != "" {
		return Grant{}, fmt.Errorf("grant %s: %s", quote(s), problem)
	}
	r, err := ParseRole(name)
	if err != nil {
		return Grant{}, fmt.Errorf("grant %s: %w", quote(s), err)
	}
	return Grant{Pattern: pattern, Role: r}, nil
}

// UnmarshalJSON reads a "docs" claim: a JSON object from pattern to role
// (null is no grant). Of a pattern given twice the last role counts, as
// with JSON.parse.
func (gs *Grants) UnmarshalJSON(data []byte) error {
	if string(bytes.TrimSpace(data)) == "null" {
		*gs = nil
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return errors.New(`"docs" must be an object from document pattern to role`)
	}
	out := make(Grants, 0, len(m))
	for pattern, raw := range m {
		if problem := checkPattern(pattern); problem != "" {
			return errors.New(`"docs" has ` + problem)
		}
		var name string
		if err := json.Unmarshal(raw, &name); err != nil {
			return fmt.Errorf(`"docs": the role of pattern %s must be a string`, quote(pattern))
		}
		r, err := ParseRole(name)
		if err != nil {
			return fmt.Errorf(`"docs": pattern %s: %w`, quote(pattern), err)
		}
		out = append(out, Grant{Pattern: pattern, Role: r})
	}
	*gs = out
	return nil
}

// MarshalJSON writes the grants as a "docs" claim.
func (gs Grants) MarshalJSON() ([]byte, error) {
	m := make(map[string]string, len(gs))
	for _, g := range gs {
		if g.Role < RoleRead || g.Role > RoleAdmin {
			return nil, fmt.Errorf("grant %s: invalid role %v", quote(g.Pattern), g.Role)
		}
		m[g.Pattern] = g.Role.String()
	}
	return json.Marshal(m)
}

// quote quotes s for an error message, cut to 64 bytes.
func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return strconv.Quote(s)
}

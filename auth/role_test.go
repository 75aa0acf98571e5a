package auth

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestGrantsRole(t *testing.T) {
	gs := Grants{
		{"team-a.*", RoleEdit},
		{"team-a.secret", RoleRead},
		{"team-a.secret", RoleComment},
		{"handbook", RoleRead},
		{"hand*", RoleComment},
		{"ops.*", RoleAdmin},
	}
	tests := []struct {
		doc  string
		want Role
	}{
		{"team-a.notes", RoleEdit},
		{"team-a.", RoleEdit},
		{"team-a.secret", RoleEdit}, // the highest role of the matching patterns
		{"team-a", RoleNone},
		{"team-b.notes", RoleNone},
		{"handbook", RoleComment},
		{"handbook2", RoleComment},
		{"hand", RoleComment},
		{"han", RoleNone},
		{"ops.x", RoleAdmin},
		{"", RoleNone},
	}
	for _, tt := range tests {
		if got := gs.Role(tt.doc); got != tt.want {
			t.Errorf("Role(%q) = %v, want %v", tt.doc, got, tt.want)
		}
	}
	all := Grants{{"*", RoleRead}}
	for _, doc := range []string{"", "a", "team-a.x"} {
		if all.Role(doc) != RoleRead {
			t.Errorf(`"*" does not match %q`, doc)
		}
	}
	if (Grants(nil)).Role("a") != RoleNone {
		t.Error("no grants give a role")
	}
}

func TestRoleOrder(t *testing.T) {
	order := []string{"read", "comment", "edit", "admin"}
	prev := RoleNone
	for _, name := range order {
		r, err := ParseRole(name)
		if err != nil || r <= prev || r.String() != name {
			t.Errorf("ParseRole(%q) = %v, %v (after %v)", name, r, err, prev)
		}
		prev = r
	}
	for _, bad := range []string{"", "none", "Edit", "owner", "write"} {
		if _, err := ParseRole(bad); err == nil {
			t.Errorf("ParseRole(%q): no error", bad)
		}
	}
}

func TestParseGrant(t *testing.T) {
	good := map[string]Grant{
		"team-a.*=edit":   {"team-a.*", RoleEdit},
		"handbook=read":   {"handbook", RoleRead},
		"*=admin":         {"*", RoleAdmin},
		"a=b=comment":     {"a=b", RoleComment},
		"team-a/*=edit":   {"team-a/*", RoleEdit},
		"x.y~z_-=comment": {"x.y~z_-", RoleComment},
	}
	for s, want := range good {
		if g, err := ParseGrant(s); err != nil || g != want {
			t.Errorf("ParseGrant(%q) = %+v, %v; want %+v", s, g, err, want)
		}
	}
	for _, s := range []string{"", "doc", "=edit", "doc=", "doc=owner", "a*b=read", "**=read", strings.Repeat("a", 257) + "=read"} {
		if g, err := ParseGrant(s); err == nil {
			t.Errorf("ParseGrant(%q) = %+v, want an error", s, g)
		}
	}
}

func TestGrantsJSON(t *testing.T) {
	var gs Grants
	if err := json.Unmarshal([]byte(`{"team-a.*":"edit","handbook":"read","handbook":"admin"}`), &gs); err != nil {
		t.Fatal(err)
	}
	if gs.Role("team-a.x") != RoleEdit || gs.Role("handbook") != RoleAdmin || len(gs) != 2 {
		t.Errorf("grants %+v", gs)
	}
	for _, bad := range []string{`[]`, `"edit"`, `{"a":1}`, `{"a":"owner"}`, `{"":"read"}`, `{"a*b":"read"}`, `{"a":null}`} {
		var gs Grants
		if err := json.Unmarshal([]byte(bad), &gs); err == nil {
			t.Errorf("%s: no error (%+v)", bad, gs)
		}
	}
	if err := json.Unmarshal([]byte(`null`), &gs); err != nil || gs != nil {
		t.Errorf("null: %+v, %v", gs, err)
	}
}

// FuzzGrants: no "docs" claim makes parsing panic, and what parses
// writes back to the same grants.
func FuzzGrants(f *testing.F) {
	for _, s := range []string{`{"team-a.*":"edit","handbook":"read"}`, `{"*":"admin"}`, `{}`, `null`, `[]`, `{"a*b":"read"}`,
		`{"a":"owner"}`, `{"\u0000":"read"}`, `{"a":"read","a":"edit"}`, `{"a":{"b":"read"}}`} {
		f.Add([]byte(s), "team-a.x")
	}
	f.Fuzz(func(t *testing.T, data []byte, doc string) {
		var gs Grants
		if err := gs.UnmarshalJSON(data); err != nil {
			return
		}
		out, err := gs.MarshalJSON()
		if err != nil {
			t.Fatalf("%s parsed as %+v but does not marshal: %v", data, gs, err)
		}
		var back Grants
		if err := back.UnmarshalJSON(out); err != nil {
			t.Fatalf("%s does not parse back: %v", out, err)
		}
		if gs.Role(doc) != back.Role(doc) {
			t.Fatalf("%s: role of %q %v, after a round trip %v", data, doc, gs.Role(doc), back.Role(doc))
		}
	})
}

// FuzzToken: no token makes Verify panic; what verifies has a subject
// and an expiry in the future (with the skew).
func FuzzToken(f *testing.F) {
	good := sign(f, "HS256", testSecret, "", validClaims())
	parts := strings.Split(good, ".")
	f.Add(good)
	f.Add("")
	f.Add("a.b.c")
	f.Add(parts[0] + "." + parts[1] + ".")
	f.Add(unsigned(f, `{"alg":"none"}`, validClaims()))
	f.Add(unsigned(f, `{"alg":"HS256","kid":"x","crit":["exp"]}`, validClaims()))
	f.Add(`{"payload":"e30","signatures":[]}`)
	f.Add(parts[0] + ".." + parts[2])
	v, err := NewVerifier(Config{Keys: []Key{secretKey(f)}, Now: func() time.Time { return testNow }})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, token string) {
		c, err := v.Verify(t.Context(), token)
		if err != nil {
			if c != nil {
				t.Fatalf("claims %+v with error %v", c, err)
			}
			return
		}
		if c.Subject == "" || !testNow.Before(c.Expires.Add(DefaultClockSkew)) {
			t.Fatalf("accepted claims %+v", c)
		}
	})
}

// TestGrantsExact: a pattern "=ID" matches the document ID only, "*"
// and "=" in it included; a pattern ending in "*" stays a prefix.
func TestGrantsExact(t *testing.T) {
	gs := Grants{{"=*", RoleAdmin}, {"=team-a.*", RoleEdit}, {"=a=b", RoleComment}, {"==x", RoleRead}}
	for doc, want := range map[string]Role{
		"*": RoleAdmin, "secret": RoleNone, "": RoleNone, "**": RoleNone,
		"team-a.*": RoleEdit, "team-a.x": RoleNone,
		"a=b": RoleComment, "=a=b": RoleNone,
		"=x": RoleRead, "x": RoleNone,
	} {
		if got := gs.Role(doc); got != want {
			t.Errorf("Role(%q) = %v, want %v", doc, got, want)
		}
	}
	if (Grants{{"*", RoleAdmin}}).Role("secret") != RoleAdmin {
		t.Error(`"*" is no longer every document`)
	}
	if g, err := ParseGrant("=*=admin"); err != nil || g != (Grant{"=*", RoleAdmin}) {
		t.Errorf(`ParseGrant("=*=admin") = %+v, %v`, g, err)
	}
	if _, err := ParseGrant("==read"); err == nil {
		t.Error(`ParseGrant("==read"): no error for the pattern "="`)
	}
	var claim Grants
	if err := json.Unmarshal([]byte(`{"=a*b":"read"}`), &claim); err != nil || claim.Role("a*b") != RoleRead || claim.Role("a*bc") != RoleNone {
		t.Errorf(`{"=a*b":"read"}: %+v, %v`, claim, err)
	}
}

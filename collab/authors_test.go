package collab_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
)

// TestAuthorsRandom types and deletes at random places of one paragraph,
// by random authors, keeping a model of who typed each character, and
// checks that Authors gives every character its typist and version, also
// after restores (whose step's author inserts what it brings back).
func TestAuthorsRandom(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(100) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			a := newAuthority(t, nil, collab.Config{})
			mustGet(t, a, "d")
			var model []char
			history := [][]char{nil} // model at each version
			for v := int64(1); v <= 60; v = int64(len(history)) {
				author := fmt.Sprint("user-", rng.IntN(3))
				switch {
				case len(model) > 0 && rng.IntN(4) == 0: // delete
					from := rng.IntN(len(model))
					to := from + 1 + rng.IntN(min(3, len(model)-from))
					mustSubmit(t, a, "d", collab.Submission{Version: v - 1, Steps: steps(del(1+from, 1+to)), ClientID: collab.ClientID(strconv.Quote(author)), Author: author})
					model = append(model[:from:from], model[to:]...)
				case v > 10 && rng.IntN(8) == 0: // restore an older version
					target := rng.Int64N(v - 1)
					old, want := model, history[target]
					if sameChars(old, want) {
						continue // Restore would submit nothing
					}
					if _, err := a.Restore(ctx, "d", "", target, author); err != nil {
						t.Fatal(err)
					}
					// The restore's step replaces what lies between the
					// common start and end of the texts (an end that
					// overlaps the start moved after it) by version
					// target's text, which its author inserts.
					p, e := 0, 0
					for p < len(old) && p < len(want) && old[p].letter == want[p].letter {
						p++
					}
					for e < len(old) && e < len(want) && old[len(old)-1-e].letter == want[len(want)-1-e].letter {
						e++
					}
					e = min(e, min(len(old), len(want))-p)
					var next []char
					next = append(next, old[:p]...)
					for _, c := range want[p : len(want)-e] {
						next = append(next, char{c.letter, author, v})
					}
					model = append(next, old[len(old)-e:]...)
				default: // insert one character
					pos := rng.IntN(len(model) + 1)
					letter := rune('a' + rng.IntN(3))
					mustSubmit(t, a, "d", collab.Submission{Version: v - 1, Steps: steps(insert(1+pos, string(letter))), ClientID: collab.ClientID(strconv.Quote(author)), Author: author})
					model = append(model[:pos:pos], append([]char{{letter, author, v}}, model[pos:]...)...)
				}
				history = append(history, append([]char(nil), model...))
			}
			au, err := a.Authors(ctx, "d")
			if err != nil {
				t.Fatal(err)
			}
			size := len(model) + 2
			if n := len(au.Ranges); n == 0 || au.Ranges[0].From != 0 || au.Ranges[n-1].To != size {
				t.Fatalf("ranges %+v for a size of %d", au.Ranges, size)
			}
			at := func(pos int) collab.AuthorRange {
				for _, r := range au.Ranges {
					if r.From <= pos && pos < r.To {
						return r
					}
				}
				t.Fatalf("no range at %d", pos)
				return collab.AuthorRange{}
			}
			for _, pos := range []int{0, size - 1} {
				if r := at(pos); r.Author != "" || r.Version != 0 {
					t.Errorf("the paragraph's token at %d: %+v, want the initial document's", pos, r)
				}
			}
			for i, c := range model {
				if r := at(1 + i); r.Author != c.author || r.Version != c.version {
					t.Errorf("character %d: %s at version %d, want %s at %d", i, r.Author, r.Version, c.author, c.version)
				}
			}
		})
	}
}

// char is a character of TestAuthorsRandom's model: its letter, who typed
// it and at which version.
type char struct {
	letter  rune
	author  string
	version int64
}

// sameChars reports whether a and b have the same letters.
func sameChars(a, b []char) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].letter != b[i].letter {
			return false
		}
	}
	return true
}

package transform

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// parseStepMaps parses step maps written as StepMap.String writes them,
// separated by spaces: "[2,4,0] -[2,4,0]".
func parseStepMaps(t testing.TB, spec string) []*StepMap {
	t.Helper()
	var maps []*StepMap
	for _, s := range strings.Fields(spec) {
		inverted := strings.HasPrefix(s, "-")
		var ranges []int
		if err := json.Unmarshal([]byte(strings.TrimPrefix(s, "-")), &ranges); err != nil {
			t.Fatalf("bad step map %q: %v", s, err)
		}
		maps = append(maps, NewStepMap(ranges, inverted))
	}
	return maps
}

// mk builds a mapping the way the JS test suite's mk does: appending the
// step maps, then declaring the mirror pairs.
func mk(t testing.TB, spec string, mirrors [][2]int) *Mapping {
	t.Helper()
	var m Mapping
	for _, sm := range parseStepMaps(t, spec) {
		m.AppendMap(sm, -1)
	}
	for _, p := range mirrors {
		m.SetMirror(p[0], p[1])
	}
	return &m
}

// flags returns the deletion flags of r as the JS test suite spells them.
func flags(r MapResult) string {
	var b strings.Builder
	for _, f := range []struct {
		set  bool
		name byte
	}{{r.Deleted(), 'd'}, {r.DeletedBefore(), 'b'}, {r.DeletedAfter(), 'a'}, {r.DeletedAcross(), 'x'}} {
		if f.set {
			b.WriteByte(f.name)
		}
	}
	return b.String()
}

// describeRow maps the positions 0 to n through m and returns each result
// followed by its flags, separated by spaces: "0 1a 3db".
func describeRow(t *testing.T, m Mappable, n, assoc int) string {
	t.Helper()
	out := make([]string, 0, n+1)
	for pos := 0; pos <= n; pos++ {
		r := m.MapResult(pos, assoc)
		if got := m.Map(pos, assoc); got != r.Pos {
			t.Errorf("Map(%d, %d) = %d, MapResult gives %d", pos, assoc, got, r.Pos)
		}
		out = append(out, strconv.Itoa(r.Pos)+flags(r))
	}
	return strings.Join(out, " ")
}

// describeMapping returns the state of m in a form that is easy to compare.
func describeMapping(m *Mapping) string {
	maps := make([]string, len(m.Maps()))
	for i, sm := range m.Maps() {
		maps[i] = sm.String()
	}
	return fmt.Sprintf("maps=%s mirror=%v from=%d to=%d", strings.Join(maps, " "), m.mirror, m.From, m.To)
}

// Ported from prosemirror-transform's test/test-mapping.ts: each position
// maps to the expected one, and back again through the inverted mapping
// unless the mapping loses it.
func TestMapping(t *testing.T) {
	type mapCase struct {
		from, to, assoc int
		lossy           bool
	}
	tests := []struct {
		name    string
		maps    string
		mirrors [][2]int
		cases   []mapCase
	}{
		{
			name:  "single insertion",
			maps:  "[2,0,4]",
			cases: []mapCase{{0, 0, 1, false}, {2, 6, 1, false}, {2, 2, -1, false}, {3, 7, 1, false}},
		},
		{
			name: "single deletion",
			maps: "[2,4,0]",
			cases: []mapCase{{0, 0, 1, false}, {2, 2, -1, false}, {3, 2, 1, true}, {6, 2, 1, false},
				{6, 2, -1, true}, {7, 3, 1, false}},
		},
		{
			name: "single replace",
			maps: "[2,4,4]",
			cases: []mapCase{{0, 0, 1, false}, {2, 2, 1, false}, {4, 6, 1, true}, {4, 2, -1, true},
				{6, 6, -1, false}, {8, 8, 1, false}},
		},
		{
			name:    "mirrored delete-insert",
			maps:    "[2,4,0] [2,0,4]",
			mirrors: [][2]int{{0, 1}},
			cases:   []mapCase{{0, 0, 1, false}, {2, 2, 1, false}, {4, 4, 1, false}, {6, 6, 1, false}, {7, 7, 1, false}},
		},
		{
			name:    "mirrored insert-delete",
			maps:    "[2,0,4] [2,4,0]",
			mirrors: [][2]int{{0, 1}},
			cases:   []mapCase{{0, 0, 1, false}, {2, 2, 1, false}, {3, 3, 1, false}},
		},
		{
			name:    "delete-insert with an insert in between",
			maps:    "[2,4,0] [1,0,1] [3,0,4]",
			mirrors: [][2]int{{0, 2}},
			cases:   []mapCase{{0, 0, 1, false}, {1, 2, 1, false}, {4, 5, 1, false}, {6, 7, 1, false}, {7, 8, 1, false}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mk(t, tt.maps, tt.mirrors)
			inverted := m.Invert()
			for _, c := range tt.cases {
				if got := m.Map(c.from, c.assoc); got != c.to {
					t.Errorf("Map(%d, %d) = %d, want %d", c.from, c.assoc, got, c.to)
				}
				if c.lossy {
					continue
				}
				if got := inverted.Map(c.to, c.assoc); got != c.from {
					t.Errorf("inverted Map(%d, %d) = %d, want %d", c.to, c.assoc, got, c.from)
				}
			}
		})
	}
}

// Ported from prosemirror-transform's test/test-mapping.ts.
func TestMapResultDeleted(t *testing.T) {
	tests := []struct {
		name       string
		maps       string
		pos, assoc int
		flags      string
	}{
		{"before, left", "[0,2,0]", 2, -1, "db"},
		{"before, right", "[0,2,0]", 2, 1, "b"},
		{"before, replaced", "[0,2,2]", 2, -1, "db"},
		{"before, two steps", "[0,1,0] [0,1,0]", 2, -1, "db"},
		{"before, not adjacent", "[0,1,0]", 2, -1, ""},
		{"after, left", "[2,2,0]", 2, -1, "a"},
		{"after, right", "[2,2,0]", 2, 1, "da"},
		{"after, replaced", "[2,2,2]", 2, 1, "da"},
		{"after, two steps", "[2,1,0] [2,1,0]", 2, 1, "da"},
		{"after, not adjacent", "[3,2,0]", 2, -1, ""},
		{"across, left", "[0,4,0]", 2, -1, "dbax"},
		{"across, right", "[0,4,0]", 2, 1, "dbax"},
		{"across, three steps", "[0,1,0] [4,1,0] [0,3,0]", 2, 1, "dbax"},
		{"around, neither", "[4,1,0] [0,1,0]", 2, -1, ""},
		{"around, both", "[2,1,0] [0,2,0]", 2, -1, "dba"},
		{"around, after", "[2,1,0] [0,1,0]", 2, -1, "a"},
		{"around, before", "[3,1,0] [0,2,0]", 2, -1, "db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mk(t, tt.maps, nil).MapResult(tt.pos, tt.assoc)
			if got := flags(r); got != tt.flags {
				t.Errorf("MapResult(%d, %d) flags = %q, want %q", tt.pos, tt.assoc, got, tt.flags)
			}
		})
	}
}

// The expected rows were produced by prosemirror-transform 1.12.7: each is
// mapping.mapResult(pos, assoc) for pos 0, 1, … in the form of describeRow,
// through the mapping and through mapping.invert().
var jsMappingCases = []struct {
	maps                           string
	mirrors                        [][2]int
	left, right, invLeft, invRight string
}{
	{
		maps:     "[0,0,3]",
		left:     "0 4 5 6 7",
		right:    "3 4 5 6 7",
		invLeft:  "0a 0dbax 0dbax 0db 1",
		invRight: "0da 0dbax 0dbax 0b 1",
	},
	{
		maps:     "[0,3,0]",
		left:     "0a 0dbax 0dbax 0db 1 2",
		right:    "0da 0dbax 0dbax 0b 1 2",
		invLeft:  "0 4 5 6 7 8",
		invRight: "3 4 5 6 7 8",
	},
	{
		maps:     "[2,0,2,4,2,0]",
		left:     "0 1 2 5 6a 6dbax 6db 7 8",
		right:    "0 1 4 5 6da 6dbax 6b 7 8",
		invLeft:  "0 1 2a 2dbax 2db 3 4 7 8",
		invRight: "0 1 2da 2dbax 2b 3 6 7 8",
	},
	{
		maps:     "-[2,0,2,4,2,0]",
		left:     "0 1 2a 2dbax 2db 3 4 7 8",
		right:    "0 1 2da 2dbax 2b 3 6 7 8",
		invLeft:  "0 1 2 5 6a 6dbax 6db 7 8",
		invRight: "0 1 4 5 6da 6dbax 6b 7 8",
	},
	{
		maps:     "[1,2,1,5,1,3]",
		left:     "0 1a 1dbax 2db 3 4a 7db 8 9 10 11",
		right:    "0 1da 2dbax 2b 3 4da 7b 8 9 10 11",
		invLeft:  "0 1a 3db 4 5a 5dbax 5dbax 6db 7 8 9",
		invRight: "0 1da 3b 4 5da 6dbax 6dbax 6b 7 8 9",
	},
	{
		maps:     "[1,2,1,5,1,3] -[1,2,1,5,1,3]",
		mirrors:  [][2]int{{0, 1}},
		left:     "0 1a 2 3 4 5a 6 7 8 9 10",
		right:    "0 1 2 3b 4 5 6b 7 8 9 10",
		invLeft:  "0 1a 2 3 4 5a 6 7 8 9 10",
		invRight: "0 1 2 3b 4 5 6b 7 8 9 10",
	},
	{
		maps:     "-[1,2,1,5,1,3] [1,2,1,5,1,3]",
		mirrors:  [][2]int{{0, 1}},
		left:     "0 1a 2 3 4a 5 6 7 8 9 10",
		right:    "0 1 2b 3 4 5 6 7b 8 9 10",
		invLeft:  "0 1a 2 3 4a 5 6 7 8 9 10",
		invRight: "0 1 2b 3 4 5 6 7b 8 9 10",
	},
	{
		maps:     "[1,2,1,5,1,3] [0,0,2] -[1,2,1,5,1,3]",
		mirrors:  [][2]int{{0, 2}},
		left:     "0 4a 2 3 5dbax 5dbax 6 9 10 11 12",
		right:    "3b 1 2 5dba 6dbax 5 8b 9 10 11 12",
		invLeft:  "0a 0dbax 2 3 1a 3dba 6 5dbax 6db 7 8",
		invRight: "0da 1 2 0b 1da 5 6dbax 6dbax 6b 7 8",
	},
	{
		maps:     "[2,2,0,2,0,2] -[2,2,0,2,0,2]",
		mirrors:  [][2]int{{0, 1}},
		left:     "0 1 2a 3 4 5 6",
		right:    "0 1 2 3 4b 5 6",
		invLeft:  "0 1 2a 3 4 5 6",
		invRight: "0 1 2 3 4b 5 6",
	},
	{
		maps:     "[2,3,1] [1,1,0] [2,3,2]",
		mirrors:  [][2]int{{0, 2}},
		left:     "0 1a 1dba 3 4 5 2dbax 2dbax 4db",
		right:    "0 1da 2 3 4 2dba 4dbax 4dbax 4b",
		invLeft:  "0 1 5dba 3 4 9 10 11 12",
		invRight: "0 2da 2 3 8b 9 10 11 12",
	},
	{
		maps:     "-[1,3,0,6,0,0,6,0,0] [1,2,2] [0,1,1,1,3,3,5,3,2]",
		mirrors:  [][2]int{{0, 2}},
		left:     "0a 1dba 5a 5dbax 5dbax 7db 8 9 10 11 12 13 14",
		right:    "0da 4b 5da 7dbax 7dbax 7b 8 9 10 11 12 13 14",
		invLeft:  "0a 2 4 5 6 2a 4 5 6 7 8 9 10",
		invRight: "1 1dba 4 5 1b 3 4 5b 6 7 8 9 10",
	},
	{
		maps:     "[0,1,0] [1,2,2] -[1,2,2] -[0,1,0]",
		mirrors:  [][2]int{{0, 3}, {1, 2}},
		left:     "0a 1 2a 3 4 5 6 7 8 9 10 11 12",
		right:    "0 1b 2 3 4b 5 6 7 8 9 10 11 12",
		invLeft:  "0a 1 2a 3 4 5 6 7 8 9 10 11 12",
		invRight: "0 1b 2 3 4b 5 6 7 8 9 10 11 12",
	},
	{
		maps:     "[2,2,2,5,1,0,6,0,0] [2,0,0] -[2,0,0] -[2,2,2,5,1,0,6,0,0]",
		mirrors:  [][2]int{{0, 3}, {1, 2}},
		left:     "0 1 2a 3 4 5a 6 7 8 9 10 11 12",
		right:    "0 1 2 3 4b 5 6b 7 8 9 10 11 12",
		invLeft:  "0 1 2a 3 4 5a 6 7 8 9 10 11 12",
		invRight: "0 1 2 3 4b 5 6b 7 8 9 10 11 12",
	},
	{
		maps:     "-[0,3,3,4,3,3,7,3,3] [1,0,0,3,0,0] [0,3,3,5,0,0,7,0,0]",
		mirrors:  [][2]int{{0, 2}},
		left:     "0a 1 2 3 4a 6 7 8 8 9 10 11 12",
		right:    "0 1 2 3b 5 6 7 7b 8 9 10b 11 12",
		invLeft:  "0a 1 2 3 4a 4dbax 4dbax 7db 7dbax 7dbax 10db 11 12",
		invRight: "0 1 2 3b 4da 7dbax 7dbax 7b 10dbax 10dbax 10b 11 12",
	},
	{
		maps:     "-[2,0,0]",
		left:     "0 1 2 3 4 5 6 7 8 9 10 11 12",
		right:    "0 1 2 3 4 5 6 7 8 9 10 11 12",
		invLeft:  "0 1 2 3 4 5 6 7 8 9 10 11 12",
		invRight: "0 1 2 3 4 5 6 7 8 9 10 11 12",
	},
	{
		maps:     "[1,2,2] [0,2,2] -[0,2,2] -[1,2,2]",
		mirrors:  [][2]int{{0, 3}, {1, 2}},
		left:     "0a 1a 2 3 4 5 6 7 8 9 10 11 12",
		right:    "0 1 2 3b 4 5 6 7 8 9 10 11 12",
		invLeft:  "0a 1a 2 3 4 5 6 7 8 9 10 11 12",
		invRight: "0 1 2 3b 4 5 6 7 8 9 10 11 12",
	},
	{
		maps:     "[2,2,2,6,1,1,9,0,0] [2,3,3] -[2,3,3] -[2,2,2,6,1,1,9,0,0]",
		mirrors:  [][2]int{{0, 3}, {1, 2}},
		left:     "0 1 2a 3 4 5 6a 7 8 9 10 11 12",
		right:    "0 1 2 3 4b 5b 6 7b 8 9 10 11 12",
		invLeft:  "0 1 2a 3 4 5 6a 7 8 9 10 11 12",
		invRight: "0 1 2 3 4b 5b 6 7b 8 9 10 11 12",
	},
	{
		maps:     "[1,0,0,2,0,0,4,0,0] [1,3,3] -[1,0,0,2,0,0,4,0,0]",
		mirrors:  [][2]int{{0, 2}},
		left:     "0 1a 1dbax 1dbax 4db 5 6 7 8 9 10 11 12",
		right:    "0 1da 4dbax 4dbax 4b 5 6 7 8 9 10 11 12",
		invLeft:  "0 1a 1dbax 1dbax 4db 5 6 7 8 9 10 11 12",
		invRight: "0 1da 4dbax 4dbax 4b 5 6 7 8 9 10 11 12",
	},
	{
		maps:     "-[0,3,3,3,3,3,8,3,3] [2,3,2,6,2,1] [1,0,0,2,3,3,6,2,2]",
		mirrors:  [][2]int{{0, 2}},
		left:     "0a 2 3 4 3 4 5 5dbax 6dba 7 8 9 10",
		right:    "1 2 3 5dbax 3 4 5dba 6dbax 6 7 8 9b 10",
		invLeft:  "0a 0dbax 0dbax 4 5 6 8dba 9 10 11db 12 13 14",
		invRight: "0da 3dbax 3 4 5 6dba 8 9 11dbax 11b 12 13 14",
	},
	{
		maps:     "[2,2,1] [1,1,1,4,0,0] -[1,1,1,4,0,0] -[2,2,1]",
		mirrors:  [][2]int{{0, 3}, {1, 2}},
		left:     "0 1a 2a 3 4 5 6 7 8 9 10 11 12",
		right:    "0 1 2 3 4b 5 6 7 8 9 10 11 12",
		invLeft:  "0 1a 2a 3 4 5 6 7 8 9 10 11 12",
		invRight: "0 1 2 3 4b 5 6 7 8 9 10 11 12",
	},
	{
		maps:     "[1,0,0]",
		left:     "0 1 2 3 4 5 6 7 8 9 10 11 12",
		right:    "0 1 2 3 4 5 6 7 8 9 10 11 12",
		invLeft:  "0 1 2 3 4 5 6 7 8 9 10 11 12",
		invRight: "0 1 2 3 4 5 6 7 8 9 10 11 12",
	},
	{
		maps:     "-[0,3,2,4,2,2] [2,1,1,4,1,0] [0,0,3,2,3,3]",
		mirrors:  [][2]int{{0, 2}},
		left:     "0a 1 2 5dbax 6 7 9 10 11 12 13 14 15",
		right:    "0 1 8dbax 5 6 8b 9 10 11 12 13 14 15",
		invLeft:  "0a 1 2 3 0dbax 0dbax 4 5 6 6 7 8 9",
		invRight: "0 1 2 0dba 2dbax 3 4 5 5b 6 7 8 9",
	},
	{
		maps:     "-[2,3,3,6,2,0,10,2,2] [1,1,1] [0,0,3,1,2,2,4,2,1]",
		mirrors:  [][2]int{{0, 2}},
		left:     "0 4a 4dbax 1 2 3 8db 11 12a 8 9 15 16",
		right:    "3 4da 0 1 2 8dbax 10 11 7 8 14b 15 16",
		invLeft:  "0a 3 4 5 1a 7 8 2dbax 9 6dbax 6db 7 8a",
		invRight: "2 3 4 0b 6 7 5dbax 8 6dba 6dbax 6b 7 8da",
	},
	{
		maps:     "-[0,0,0,1,0,3]",
		left:     "0 1a 1dbax 1dbax 1db 2 3 4 5 6 7 8 9",
		right:    "0 1da 1dbax 1dbax 1b 2 3 4 5 6 7 8 9",
		invLeft:  "0 1 5 6 7 8 9 10 11 12 13 14 15",
		invRight: "0 4 5 6 7 8 9 10 11 12 13 14 15",
	},
	{
		maps:     "[2,2,2] [2,1,1] -[2,1,1] -[2,2,2]",
		mirrors:  [][2]int{{0, 3}, {1, 2}},
		left:     "0 1 2a 3 4 5 6 7 8 9 10 11 12",
		right:    "0 1 2 3 4b 5 6 7 8 9 10 11 12",
		invLeft:  "0 1 2a 3 4 5 6 7 8 9 10 11 12",
		invRight: "0 1 2 3 4b 5 6 7 8 9 10 11 12",
	},
	{
		maps:     "[0,0,0,2,1,3,5,1,1] [0,1,1,1,0,0] -[0,0,0,2,1,3,5,1,1]",
		mirrors:  [][2]int{{0, 2}},
		left:     "0a 1db 2a 3 4 5a 6 7 8 9 10 11 12",
		right:    "0da 1b 2 3b 4 5 6b 7 8 9 10 11 12",
		invLeft:  "0a 1db 2a 3 4 5a 6 7 8 9 10 11 12",
		invRight: "0da 1b 2 3b 4 5 6b 7 8 9 10 11 12",
	},
	{
		maps:     "[2,0,0,4,0,0]",
		left:     "0 1 2 3 4 5 6 7 8 9 10 11 12",
		right:    "0 1 2 3 4 5 6 7 8 9 10 11 12",
		invLeft:  "0 1 2 3 4 5 6 7 8 9 10 11 12",
		invRight: "0 1 2 3 4 5 6 7 8 9 10 11 12",
	},
	{
		maps:     "[1,0,0]",
		left:     "0 1 2 3 4 5 6 7 8 9 10 11 12",
		right:    "0 1 2 3 4 5 6 7 8 9 10 11 12",
		invLeft:  "0 1 2 3 4 5 6 7 8 9 10 11 12",
		invRight: "0 1 2 3 4 5 6 7 8 9 10 11 12",
	},
	{
		maps:     "-[0,2,1,4,1,1,7,0,0] [1,2,2,3,1,1] [1,1,1,4,1,1,6,0,0]",
		mirrors:  [][2]int{{0, 2}},
		left:     "0a 2 3db 4dba 5 6 7 8 9 10 11 12 13",
		right:    "1 3dbax 3b 4 5b 6 7 8 9 10 11 12 13",
		invLeft:  "0a 0dbax 1 2db 3dba 4 5 6 7 8 9 10 11",
		invRight: "0da 0 2dbax 2b 3 4b 5 6 7 8 9 10 11",
	},
	{
		maps:     "-[2,3,3,7,0,0,8,0,0] [2,0,0] [1,1,0,3,0,0,5,0,0]",
		mirrors:  [][2]int{{0, 2}},
		left:     "0 1a 1dba 2 3 4 5 6 7 8 9 10 11",
		right:    "0 1da 1 2 3 4b 5 6 7 8 9 10 11",
		invLeft:  "0 1 2dbax 2dbax 5db 6 7 8 9 10 11 12 13",
		invRight: "0 2da 5dbax 5dbax 5b 6 7 8 9 10 11 12 13",
	},
	{
		maps:     "[0,3,2]",
		left:     "0a 0dbax 0dbax 2db 3 4 5 6 7 8 9 10 11",
		right:    "0da 2dbax 2dbax 2b 3 4 5 6 7 8 9 10 11",
		invLeft:  "0a 0dbax 3db 4 5 6 7 8 9 10 11 12 13",
		invRight: "0da 3dbax 3b 4 5 6 7 8 9 10 11 12 13",
	},
	{
		maps:     "[2,1,1,4,1,1] [0,0,0] -[0,0,0] -[2,1,1,4,1,1]",
		mirrors:  [][2]int{{0, 3}, {1, 2}},
		left:     "0 1 2a 3 4a 5 6 7 8 9 10 11 12",
		right:    "0 1 2 3b 4 5b 6 7 8 9 10 11 12",
		invLeft:  "0 1 2a 3 4a 5 6 7 8 9 10 11 12",
		invRight: "0 1 2 3b 4 5b 6 7 8 9 10 11 12",
	},
	{
		maps:     "-[2,3,3,5,0,0] [2,0,0] [0,0,0,1,0,0]",
		mirrors:  [][2]int{{0, 2}},
		left:     "0 1 2a 1 2 3 6 7 8 9 10 11 12",
		right:    "0 1 0 1 2 5b 6 7 8 9 10 11 12",
		invLeft:  "0 1 2a 2dbax 2dbax 5db 6 7 8 9 10 11 12",
		invRight: "0 1 2da 5dbax 5dbax 5b 6 7 8 9 10 11 12",
	},
	{
		maps:     "-[1,0,0,1,0,0]",
		left:     "0 1 2 3 4 5 6 7 8 9 10 11 12",
		right:    "0 1 2 3 4 5 6 7 8 9 10 11 12",
		invLeft:  "0 1 2 3 4 5 6 7 8 9 10 11 12",
		invRight: "0 1 2 3 4 5 6 7 8 9 10 11 12",
	},
}

func TestMappingMatchesJS(t *testing.T) {
	for _, tt := range jsMappingCases {
		t.Run(tt.maps, func(t *testing.T) {
			m := mk(t, tt.maps, tt.mirrors)
			n := strings.Count(tt.left, " ")
			inverted := m.Invert()
			for _, row := range []struct {
				name  string
				m     Mappable
				assoc int
				want  string
			}{
				{"left", m, -1, tt.left},
				{"right", m, 1, tt.right},
				{"inverted left", inverted, -1, tt.invLeft},
				{"inverted right", inverted, 1, tt.invRight},
			} {
				if got := describeRow(t, row.m, n, row.assoc); got != row.want {
					t.Errorf("%s:\n got %s\nwant %s", row.name, got, row.want)
				}
			}
			// A lone step map must map as the mapping around it does.
			if maps := m.Maps(); len(maps) == 1 {
				if got := describeRow(t, maps[0], n, 1); got != tt.right {
					t.Errorf("step map right:\n got %s\nwant %s", got, tt.right)
				}
				if got := describeRow(t, maps[0].Invert(), n, -1); got != tt.invLeft {
					t.Errorf("inverted step map left:\n got %s\nwant %s", got, tt.invLeft)
				}
			}
		})
	}
}

// Expected values from prosemirror-transform 1.12.7.
func TestStepMapForEachAndString(t *testing.T) {
	tests := []struct {
		sm     *StepMap
		str    string
		ranges [][4]int
	}{
		{NewStepMap([]int{2, 0, 4}, false), "[2,0,4]", [][4]int{{2, 2, 2, 6}}},
		{NewStepMap([]int{1, 2, 1, 5, 1, 3}, false), "[1,2,1,5,1,3]", [][4]int{{1, 3, 1, 2}, {5, 6, 4, 7}}},
		{NewStepMap([]int{1, 2, 1, 5, 1, 3}, true), "-[1,2,1,5,1,3]", [][4]int{{1, 2, 1, 3}, {4, 7, 5, 6}}},
		{NewStepMap([]int{0, 4, 0, 6, 0, 2}, false).Invert(), "-[0,4,0,6,0,2]", [][4]int{{0, 0, 0, 4}, {2, 4, 6, 6}}},
		{StepMapOffset(3), "[0,0,3]", [][4]int{{0, 0, 0, 3}}},
		{StepMapOffset(-3), "[0,3,0]", [][4]int{{0, 3, 0, 0}}},
		{EmptyStepMap, "[]", nil},
		{&StepMap{}, "[]", nil},
	}
	for _, tt := range tests {
		t.Run(tt.str, func(t *testing.T) {
			if got := tt.sm.String(); got != tt.str {
				t.Errorf("String() = %q, want %q", got, tt.str)
			}
			var got [][4]int
			tt.sm.ForEach(func(oldStart, oldEnd, newStart, newEnd int) {
				got = append(got, [4]int{oldStart, oldEnd, newStart, newEnd})
			})
			if fmt.Sprint(got) != fmt.Sprint(tt.ranges) {
				t.Errorf("ForEach gives %v, want %v", got, tt.ranges)
			}
		})
	}
}

func TestStepMapEmpty(t *testing.T) {
	if NewStepMap(nil, false) != EmptyStepMap || NewStepMap([]int{}, true) != EmptyStepMap {
		t.Error("NewStepMap with no ranges does not give EmptyStepMap")
	}
	if EmptyStepMap.Invert() != EmptyStepMap {
		t.Error("EmptyStepMap.Invert() is not EmptyStepMap")
	}
	if StepMapOffset(0) != EmptyStepMap {
		t.Error("StepMapOffset(0) is not EmptyStepMap")
	}
	for _, sm := range []*StepMap{EmptyStepMap, {}} {
		for _, pos := range []int{-1, 0, 5} {
			if r := sm.MapResult(pos, -1); r != (MapResult{Pos: pos}) {
				t.Errorf("%v.MapResult(%d, -1) = %+v, want the position untouched", sm, pos, r)
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("NewStepMap with 4 ranges does not panic")
		}
	}()
	NewStepMap([]int{1, 2, 3, 4}, false)
}

// The recovery values and touches results were produced by
// prosemirror-transform 1.12.7, for positions 0 to 9 with assoc -1 and 1.
func TestStepMapRecoverAndTouches(t *testing.T) {
	tests := []struct {
		sm      *StepMap
		recover string // index:offset per position and assoc, "-" for none
		touches [2]string
	}{
		{
			sm:      NewStepMap([]int{1, 2, 1, 5, 1, 3}, false),
			recover: "- - - 0:0 0:1 0:1 0:2 - - - - 1:0 1:1 - - - - - - -",
			touches: [2]string{"0111000000", "0000011000"},
		},
		{
			sm:      NewStepMap([]int{1, 2, 1, 5, 1, 3}, true),
			recover: "- - - 0:0 0:1 - - - - 1:0 1:1 1:1 1:2 1:2 1:3 - - - - -",
			touches: [2]string{"0110000000", "0000111100"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.sm.String(), func(t *testing.T) {
			var recovers []string
			for pos := range 10 {
				for _, assoc := range []int{-1, 1} {
					r := tt.sm.MapResult(pos, assoc)
					if !r.hasRecover {
						recovers = append(recovers, "-")
						continue
					}
					recovers = append(recovers, fmt.Sprintf("%d:%d", recoverIndex(r.recover), recoverOffset(r.recover)))
					// Recovering through the mirror image puts the
					// position back where it was.
					if back, ok := tt.sm.Invert().recover(r.recover); !ok || back != pos {
						t.Errorf("inverse recovers %d (%v) from MapResult(%d, %d), want %d", back, ok, pos, assoc, pos)
					}
				}
			}
			if got := strings.Join(recovers, " "); got != tt.recover {
				t.Errorf("recovery values:\n got %s\nwant %s", got, tt.recover)
			}
			for index, want := range tt.touches {
				var b strings.Builder
				for pos := range 10 {
					if tt.sm.touches(pos, makeRecover(index, 0)) {
						b.WriteByte('1')
					} else {
						b.WriteByte('0')
					}
				}
				if b.String() != want {
					t.Errorf("touches range %d: %s, want %s", index, b.String(), want)
				}
			}
		})
	}
}

func TestRecoverEncoding(t *testing.T) {
	for _, c := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {65535, 7}, {3, 1 << 40}} {
		v := makeRecover(c[0], c[1])
		if recoverIndex(v) != c[0] || recoverOffset(v) != c[1] {
			t.Errorf("makeRecover(%d, %d) decodes to %d, %d", c[0], c[1], recoverIndex(v), recoverOffset(v))
		}
	}
}

// base is the mapping [2,4,0] [0,0,1] -[2,4,0] [1,0,1] with maps 0 and 2
// mirrored. Expected values from prosemirror-transform 1.12.7.
func baseMapping(t *testing.T) *Mapping {
	t.Helper()
	return mk(t, "[2,4,0] [0,0,1] -[2,4,0] [1,0,1]", [][2]int{{2, 0}})
}

func TestMappingSlice(t *testing.T) {
	base := baseMapping(t)
	before := describeMapping(base)
	tests := []struct {
		from, to int
		want     string // Map(pos, 1) for pos 0 to 8
	}{
		{1, 3, "1 6 7 8 9 10 11 12 13"},
		{0, 3, "1 6 2 3 4 5 7 8 9"},
	}
	for _, tt := range tests {
		sl := base.Slice(tt.from, tt.to)
		var got []string
		for pos := range 9 {
			got = append(got, strconv.Itoa(sl.Map(pos, 1)))
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("Slice(%d, %d) maps 0…8 to %s, want %s", tt.from, tt.to, strings.Join(got, " "), tt.want)
		}
	}

	sl := base.Slice(1, 3)
	sl.AppendMap(NewStepMap([]int{1, 0, 1}, false), -1)
	sl.SetMirror(4, 3)
	if got, want := describeMapping(sl), "maps=[2,4,0] [0,0,1] -[2,4,0] [1,0,1] [1,0,1] mirror=[2 0 4 3] from=1 to=5"; got != want {
		t.Errorf("after appending to a slice:\n got %s\nwant %s", got, want)
	}
	if got := describeMapping(base); got != before {
		t.Errorf("appending to a slice changed the mapping it came from:\n got %s\nwant %s", got, before)
	}
}

func TestMappingAppend(t *testing.T) {
	c := NewStepMap([]int{1, 0, 1}, false)
	tests := []struct {
		name string
		do   func(m, base *Mapping)
		want string
	}{
		{
			"AppendMapping",
			func(m, base *Mapping) { m.AppendMapping(base) },
			"maps=[1,0,1] [2,4,0] [0,0,1] -[2,4,0] [1,0,1] mirror=[3 1] from=0 to=5",
		},
		{
			"AppendMapping of a slice that cuts a mirror pair",
			func(m, base *Mapping) { m.AppendMapping(base.Slice(1, 4)) },
			"maps=[1,0,1] [0,0,1] -[2,4,0] [1,0,1] mirror=[] from=0 to=4",
		},
		{
			"AppendMapping of a slice",
			func(m, base *Mapping) { m.AppendMapping(base.Slice(0, 2)) },
			"maps=[1,0,1] [2,4,0] [0,0,1] mirror=[] from=0 to=3",
		},
		{
			"AppendMappingInverted",
			func(m, base *Mapping) { m.AppendMappingInverted(base) },
			"maps=[1,0,1] -[1,0,1] [2,4,0] -[0,0,1] -[2,4,0] mirror=[4 2] from=0 to=5",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m Mapping
			m.AppendMap(c, -1)
			tt.do(&m, baseMapping(t))
			if got := describeMapping(&m); got != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestMappingInvert(t *testing.T) {
	base := baseMapping(t)
	if got, want := describeMapping(base.Invert()), "maps=-[1,0,1] [2,4,0] -[0,0,1] -[2,4,0] mirror=[3 1] from=0 to=4"; got != want {
		t.Errorf("Invert():\n got %s\nwant %s", got, want)
	}

	// The JS places the mirror pairs of an inverted mapping as if it
	// spanned all its maps, so a mapping with To short of the end gets a
	// wrong pair (2 and 1 instead of 2 and 0) and maps 0 to 2. Kept for
	// conformance.
	inv := base.Slice(0, 3).Invert()
	if got, want := describeMapping(inv), "maps=[2,4,0] -[0,0,1] -[2,4,0] mirror=[2 1] from=0 to=3"; got != want {
		t.Errorf("Slice(0, 3).Invert():\n got %s\nwant %s", got, want)
	}
	var got []string
	for pos := range 9 {
		got = append(got, strconv.Itoa(inv.Map(pos, 1)))
	}
	if want := "2 0 1 1 1 1 1 6 7"; strings.Join(got, " ") != want {
		t.Errorf("Slice(0, 3).Invert() maps 0…8 to %s, want %s", strings.Join(got, " "), want)
	}
}

func TestMappingGetMirror(t *testing.T) {
	m := mk(t, "[2,4,0] -[2,4,0]", [][2]int{{1, 0}})
	for _, tt := range []struct {
		n, want int
		ok      bool
	}{{0, 1, true}, {1, 0, true}, {2, 0, false}} {
		if got, ok := m.GetMirror(tt.n); got != tt.want || ok != tt.ok {
			t.Errorf("GetMirror(%d) = %d, %v, want %d, %v", tt.n, got, ok, tt.want, tt.ok)
		}
	}
}

func TestNewMappingDoesNotWriteToCallersSlice(t *testing.T) {
	a, b, c := StepMapOffset(1), StepMapOffset(2), StepMapOffset(3)
	maps := make([]*StepMap, 1, 4)
	maps[0] = a
	m := NewMapping(maps)
	m.AppendMap(b, -1)
	maps = append(maps, c)
	if got := m.Map(0, 1); got != 3 {
		t.Errorf("Map(0, 1) = %d, want 3: appending to the caller's slice changed the mapping", got)
	}
	if maps[1] != c {
		t.Error("AppendMap wrote into the caller's slice")
	}
}

func TestZeroMapping(t *testing.T) {
	var m Mapping
	if got := m.Map(5, 1); got != 5 {
		t.Errorf("zero Mapping maps 5 to %d", got)
	}
	if r := m.MapResult(5, -1); r != (MapResult{Pos: 5}) {
		t.Errorf("zero Mapping MapResult(5, -1) = %+v", r)
	}
	if inv := m.Invert(); len(inv.Maps()) != 0 || inv.To != 0 {
		t.Errorf("zero Mapping inverts to %s", describeMapping(inv))
	}
}

// A mirror declared between maps with different numbers of ranges must
// not make mapping panic: where the mirror has no range to recover a
// position in, the mapping maps on as if there were no mirror. (The JS
// gives NaN.)
func TestMappingBadMirror(t *testing.T) {
	m := mk(t, "[1,2,1,5,1,3] [0,1,0]", [][2]int{{0, 1}})
	plain := mk(t, "[1,2,1,5,1,3] [0,1,0]", nil)
	for _, pos := range []int{5, 6} { // inside the second range of map 0
		if got, want := m.MapResult(pos, 1), plain.MapResult(pos, 1); got != want {
			t.Errorf("MapResult(%d, 1) = %+v, want %+v", pos, got, want)
		}
	}
}

// fuzzReader hands out the fuzz input a byte at a time, then zeros.
type fuzzReader []byte

func (r *fuzzReader) next(n int) int {
	if len(*r) == 0 {
		return 0
	}
	b := (*r)[0]
	*r = (*r)[1:]
	return int(b) % n
}

// stepMap returns a step map with up to three well-formed ranges: ordered
// and not overlapping, with at least gap positions between one range and
// the next.
func (r *fuzzReader) stepMap(gap int) *StepMap {
	var ranges []int
	pos := 0
	for i := range r.next(4) {
		start := pos + r.next(4)
		if i > 0 {
			start += gap
		}
		oldSize := r.next(5)
		ranges = append(ranges, start, oldSize, r.next(5))
		pos = start + oldSize
	}
	return NewStepMap(ranges, r.next(2) == 1)
}

func FuzzMapping(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 4, 0, 0, 3, 1, 0, 1, 1, 2})
	f.Add([]byte{3, 1, 2, 1, 2, 1, 3, 0, 0, 0, 1, 1, 3, 2, 2, 2, 2, 1, 0, 1, 0, 0, 0, 9, 9, 9})
	f.Add([]byte("mirrors and inverted maps, as many as the bytes allow"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := fuzzReader(data)
		const maxPos = 20

		// A step map round-trips through its inverse every position it
		// does not delete, and a mapping through it and its mirrored
		// inverse is the identity. The JS guarantees neither when ranges
		// touch: of two insertions at one position, the inverse cannot
		// tell which a position came from.
		sm := r.stepMap(1)
		inv := sm.Invert()
		var there Mapping
		there.AppendMap(sm, -1)
		there.AppendMap(inv, 0)
		for pos := -1; pos <= maxPos; pos++ {
			for _, assoc := range []int{-1, 1} {
				res := sm.MapResult(pos, assoc)
				if got := sm.Map(pos, assoc); got != res.Pos {
					t.Fatalf("%v: Map(%d, %d) = %d, MapResult gives %d", sm, pos, assoc, got, res.Pos)
				}
				if back := inv.Map(res.Pos, assoc); !res.Deleted() && back != pos {
					t.Fatalf("%v: %d (assoc %d) maps to %d and back to %d", sm, pos, assoc, res.Pos, back)
				}
				if got := there.Map(pos, assoc); got != pos {
					t.Fatalf("%v and its mirror map %d (assoc %d) to %d", sm, pos, assoc, got)
				}
			}
		}

		// A mapping whose mirrors nest, as when undoing steps in reverse
		// order, round-trips through its inverse every position it does
		// not delete.
		var m Mapping
		var open []int
		for range 1 + r.next(6) {
			if len(open) > 0 && r.next(2) == 1 {
				last := open[len(open)-1]
				open = open[:len(open)-1]
				m.AppendMap(m.Maps()[last].Invert(), last)
			} else {
				open = append(open, len(m.Maps()))
				m.AppendMap(r.stepMap(1), -1)
			}
		}
		minv := m.Invert()
		for pos := -1; pos <= maxPos; pos++ {
			for _, assoc := range []int{-1, 1} {
				res := m.MapResult(pos, assoc)
				if got := m.Map(pos, assoc); got != res.Pos {
					t.Fatalf("%s: Map(%d, %d) = %d, MapResult gives %d", describeMapping(&m), pos, assoc, got, res.Pos)
				}
				if back := minv.Map(res.Pos, assoc); !res.Deleted() && back != pos {
					t.Fatalf("%s: %d (assoc %d) maps to %d and back to %d", describeMapping(&m), pos, assoc, res.Pos, back)
				}
			}
		}

		// Touching ranges, arbitrary mirrors, slices and appends must not
		// panic.
		m.AppendMap(r.stepMap(0), -1)
		n := len(m.Maps())
		for range r.next(4) {
			m.SetMirror(r.next(n+2)-1, r.next(n+2)-1)
		}
		sl := m.Slice(r.next(n+1), r.next(n+1))
		sl.AppendMapping(&m)
		sl.AppendMappingInverted(sl)
		sl.AppendMapping(sl.Invert())
		for _, mm := range []*Mapping{&m, sl, sl.Slice(r.next(n+1), r.next(n+1))} {
			for pos := -1; pos <= maxPos; pos++ {
				for _, assoc := range []int{-1, 1} {
					if got, res := mm.Map(pos, assoc), mm.MapResult(pos, assoc); got != res.Pos {
						t.Fatalf("%s: Map(%d, %d) = %d, MapResult gives %d", describeMapping(mm), pos, assoc, got, res.Pos)
					}
				}
			}
		}
	})
}

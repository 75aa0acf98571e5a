package readbuf

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestAppend(t *testing.T) {
	long := strings.Repeat("abcdefgh", 1000)
	for _, tc := range []struct {
		name   string
		buf    []byte
		r      io.Reader
		want   string
		failed bool
	}{
		{"empty", nil, strings.NewReader(""), "", false},
		{"after a prefix", []byte("pre:"), strings.NewReader("body"), "pre:body", false},
		{"grows", make([]byte, 0, 3), iotest.OneByteReader(strings.NewReader(long)), long, false},
		{"error keeps what was read", nil, io.MultiReader(strings.NewReader("part"), iotest.ErrReader(errors.New("boom"))), "part", true},
	} {
		got, err := Append(tc.buf, tc.r)
		if !bytes.Equal(got, []byte(tc.want)) || (err != nil) != tc.failed {
			t.Errorf("%s: %q, %v", tc.name, got, err)
		}
	}
	// A buffer with room is filled in place.
	buf := make([]byte, 0, 64)
	got, _ := Append(buf, strings.NewReader("in place"))
	if &got[0] != &buf[:1][0] {
		t.Error("a buffer with room was reallocated")
	}
}

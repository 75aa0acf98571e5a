package bytesize

import (
	"bytes"
	"log/slog"
	"testing"
)

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0 bytes"}, {1, "1 byte"}, {1023, "1023 bytes"}, {1024, "1 KiB"}, {1536, "1.5 KiB"},
		{512 << 20, "512 MiB"}, {300<<20 + 1, "300.0 MiB"}, {3 << 29, "1.5 GiB"}, {2 << 40, "2 TiB"},
		{-4096, "-4 KiB"},
	} {
		if got := Format(tc.n); got != tc.want {
			t.Errorf("Format(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestSizeLogValue(t *testing.T) {
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("m", "max_memory", Size(512<<20))
	if want := `"max_memory":"512 MiB"`; !bytes.Contains(buf.Bytes(), []byte(want)) {
		t.Errorf("logged %s, want %s", &buf, want)
	}
}

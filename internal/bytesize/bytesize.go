// Package bytesize writes byte counts for people to read: "512 MiB",
// "1.5 GiB", "300 bytes".
package bytesize

import (
	"log/slog"
	"strconv"
)

// Size is a byte count that prints, and logs, as Format writes it.
type Size int64

// String returns Format(s).
func (s Size) String() string { return Format(int64(s)) }

// LogValue returns Format(s) for log/slog.
func (s Size) LogValue() slog.Value { return slog.StringValue(Format(int64(s))) }

var units = []struct {
	name string
	size int64
}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}

// Format returns n in the largest binary unit it reaches: a whole number
// of them when it is one ("512 MiB"), else rounded to one decimal
// ("1.5 GiB"); under 1 KiB, in bytes ("300 bytes").
func Format(n int64) string {
	for _, u := range units {
		if n >= u.size || -n >= u.size {
			if n%u.size == 0 {
				return strconv.FormatInt(n/u.size, 10) + " " + u.name
			}
			return strconv.FormatFloat(float64(n)/float64(u.size), 'f', 1, 64) + " " + u.name
		}
	}
	if n == 1 || n == -1 {
		return strconv.FormatInt(n, 10) + " byte"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

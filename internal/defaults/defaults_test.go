package defaults

import (
	"testing"
	"time"
)

type inner struct {
	A int64
	b int // unexported: left alone
}

type config struct {
	inner
	N     int
	D     time.Duration
	Never time.Duration // its default is negative: left as given
	None  int           // no default: left as given
	S     string
	Sub   inner
}

func TestFill(t *testing.T) {
	def := config{inner: inner{A: 1, b: 9}, N: 2, D: time.Second, Never: -1, S: "x", Sub: inner{A: 3}}
	for _, tc := range []struct {
		name    string
		in, out config
	}{
		{"zero", config{}, config{inner: inner{A: 1}, N: 2, D: time.Second, Sub: inner{A: 3}}},
		{"negative", config{inner: inner{A: -5}, N: -1, D: -time.Second, None: -4, Sub: inner{A: -1}},
			config{inner: inner{A: 1}, N: 2, D: time.Second, None: -4, Sub: inner{A: 3}}},
		{"set", config{inner: inner{A: 7}, N: 8, D: time.Minute, Never: 5, None: 6, S: "y", Sub: inner{A: 9}},
			config{inner: inner{A: 7}, N: 8, D: time.Minute, Never: 5, None: 6, S: "y", Sub: inner{A: 9}}},
		{"never", config{Never: -3}, config{inner: inner{A: 1}, N: 2, D: time.Second, Never: -3, Sub: inner{A: 3}}},
	} {
		got := tc.in
		Fill(&got, def)
		if got != tc.out {
			t.Errorf("%s: Fill(%+v) = %+v, want %+v", tc.name, tc.in, got, tc.out)
		}
	}
}

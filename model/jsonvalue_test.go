package model

import "testing"

func TestAppendJSNumber(t *testing.T) {
	cases := []struct {
		f    float64
		want string
	}{
		{0, "0"}, {1, "1"}, {-3, "-3"}, {1.5, "1.5"}, {1e21, "1e+21"}, {1e20, "100000000000000000000"},
		{1.5e-7, "1.5e-7"}, {0.000001, "0.000001"}, {123456789.125, "123456789.125"},
		{9007199254740993, "9007199254740992"}, {-1e-7, "-1e-7"}, {2.5e300, "2.5e+300"},
	}
	for _, c := range cases {
		if got := string(appendJSNumber(nil, c.f)); got != c.want {
			t.Errorf("appendJSNumber(%v) = %s, want %s", c.f, got, c.want)
		}
	}
}

func TestParseJSONValueOrder(t *testing.T) {
	v, err := ParseJSONValue([]byte(`{"b":1,"2":2,"a":[true,null,"x"],"1":{"z":1,"y":2},"b":3}`))
	if err != nil {
		t.Fatal(err)
	}
	got := string(appendJSONValue(nil, v))
	want := `{"1":{"z":1,"y":2},"2":2,"b":3,"a":[true,null,"x"]}`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	w, _ := ParseJSONValue([]byte(`{"a":[true,null,"x"],"b":3,"1":{"y":2,"z":1},"2":2}`))
	if !compareDeep(v, w) {
		t.Errorf("compareDeep should ignore key order")
	}
}

func TestAppendJSONString(t *testing.T) {
	got := string(appendJSONString(nil, "a\"\\\n\t\x01<>&\u2028é😀\xed\xa0\xbd"))
	want := `"a\"\\\n\t\u0001<>&` + "\u2028é😀" + `\ud83d"`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

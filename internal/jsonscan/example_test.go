package jsonscan_test

import (
	"fmt"

	"github.com/pmauthority/pmauthority/internal/jsonscan"
)

// Reading an object key by key, skipping what is not needed.
func Example() {
	d := jsonscan.NewDecoder([]byte(`{"stepType":"replace","from":2,"to":5.0,"extra":[1,{"x":null}],"text":"\ud83d\ude00"}`))
	if err := d.BeginObject(); err != nil {
		panic(err)
	}
	for {
		key, ok, err := d.NextKey()
		if err != nil {
			panic(err)
		}
		if !ok {
			break
		}
		switch string(key) {
		case "stepType", "text":
			s, err := d.ReadString()
			if err != nil {
				panic(err)
			}
			fmt.Printf("%s: %s\n", key, s)
		case "from", "to":
			f, raw, err := d.ReadNumber()
			if err != nil {
				panic(err)
			}
			fmt.Printf("%s: %v (%s)\n", key, f, raw)
		default:
			if err := d.Skip(); err != nil {
				panic(err)
			}
		}
	}
	fmt.Println(d.End())
	// Output:
	// stepType: replace
	// from: 2 (2)
	// to: 5 (5.0)
	// text: 😀
	// <nil>
}

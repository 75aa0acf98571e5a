package edit_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/edit"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/transform"
)

func basic(t *testing.T) *model.Schema {
	t.Helper()
	s, err := schemas.Get("basic")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func doc(t *testing.T, js string) *model.Node {
	t.Helper()
	n, err := basic(t).NodeFromJSON([]byte(js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return n
}

// p is a paragraph's JSON with text.
func p(text string) string {
	if text == "" {
		return `{"type":"paragraph"}`
	}
	return `{"type":"paragraph","content":[{"type":"text","text":"` + text + `"}]}`
}

func docOf(blocks ...string) string {
	return `{"type":"doc","content":[` + strings.Join(blocks, ",") + `]}`
}

// fakeMarkdown parses "Markdown" that is one paragraph's text.
func fakeMarkdown(s *model.Schema, src string) (*model.Node, error) {
	t, err := s.Text(src, nil)
	if err != nil {
		return nil, err
	}
	para, err := s.Node("paragraph", nil, model.FragmentOf(t), nil)
	if err != nil {
		return nil, err
	}
	return s.Node("doc", nil, model.FragmentOf(para), nil)
}

// run makes the request on d (base and current) and returns the result.
func run(t *testing.T, d *model.Node, body string) (*model.Node, error) {
	t.Helper()
	req, err := edit.Parse([]byte(body))
	if err != nil {
		return nil, err
	}
	plan, err := edit.Prepare(d, req, fakeMarkdown)
	if err != nil {
		return nil, err
	}
	tr := transform.New(d)
	if err := plan.Make(tr); err != nil {
		return nil, err
	}
	return tr.Doc, nil
}

func TestEdits(t *testing.T) {
	start := docOf(`{"type":"heading","attrs":{"level":1},"content":[{"type":"text","text":"Title"}]}`, p("one two three"), p("four two"))
	for _, c := range []struct {
		name, body, want string
	}{
		{"insert after a found paragraph", `{"base":0,"edits":[{"op":"insert","target":{"text":{"find":"three"}},"at":"after","markdown":"new"}]}`,
			docOf(`{"type":"heading","attrs":{"level":1},"content":[{"type":"text","text":"Title"}]}`, p("one two three"), p("new"), p("four two"))},
		{"insert before a block by path", `{"base":0,"edits":[{"op":"insert","target":{"block":{"path":[0]}},"at":"before","content":{"type":"horizontal_rule"}}]}`,
			docOf(`{"type":"horizontal_rule"}`, `{"type":"heading","attrs":{"level":1},"content":[{"type":"text","text":"Title"}]}`, p("one two three"), p("four two"))},
		{"insert at the end of a textblock", `{"base":0,"edits":[{"op":"insert","target":{"block":{"attr":"level","value":1}},"at":"end","markdown":"!"}]}`,
			docOf(`{"type":"heading","attrs":{"level":1},"content":[{"type":"text","text":"Title!"}]}`, p("one two three"), p("four two"))},
		{"replace text with context", `{"base":0,"edits":[{"op":"replaceText","target":{"text":{"find":"two","before":"four "}},"text":"2"}]}`,
			docOf(`{"type":"heading","attrs":{"level":1},"content":[{"type":"text","text":"Title"}]}`, p("one two three"), p("four 2"))},
		{"bold on a found phrase", `{"base":0,"edits":[{"op":"addMark","target":{"text":{"find":"two","after":" three"}},"mark":{"type":"strong"}}]}`,
			docOf(`{"type":"heading","attrs":{"level":1},"content":[{"type":"text","text":"Title"}]}`,
				`{"type":"paragraph","content":[{"type":"text","text":"one "},{"type":"text","marks":[{"type":"strong"}],"text":"two"},{"type":"text","text":" three"}]}`, p("four two"))},
		{"delete a block", `{"base":0,"edits":[{"op":"deleteBlock","target":{"block":{"path":[2]}}}]}`,
			docOf(`{"type":"heading","attrs":{"level":1},"content":[{"type":"text","text":"Title"}]}`, p("one two three"))},
		{"set the block type", `{"base":0,"edits":[{"op":"setBlockType","target":{"text":{"find":"four"}},"type":"heading","attrs":{"level":2}}]}`,
			docOf(`{"type":"heading","attrs":{"level":1},"content":[{"type":"text","text":"Title"}]}`, p("one two three"), `{"type":"heading","attrs":{"level":2},"content":[{"type":"text","text":"four two"}]}`)},
		{"wrap in a list", `{"base":0,"edits":[{"op":"wrapInList","target":{"block":{"path":[1]}},"type":"bullet_list"}]}`,
			docOf(`{"type":"heading","attrs":{"level":1},"content":[{"type":"text","text":"Title"}]}`, `{"type":"bullet_list","content":[{"type":"list_item","content":[`+p("one two three")+`]}]}`, p("four two"))},
		{"several edits, mapped through each other", `{"base":0,"edits":[
			{"op":"insert","target":{"block":{"path":[0]}},"at":"after","markdown":"intro"},
			{"op":"replaceText","target":{"text":{"find":"one"}},"text":"ONE"},
			{"op":"deleteBlock","target":{"text":{"find":"four"}}}]}`,
			docOf(`{"type":"heading","attrs":{"level":1},"content":[{"type":"text","text":"Title"}]}`, p("intro"), p("ONE two three"))},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := run(t, doc(t, start), c.body)
			if err != nil {
				t.Fatal(err)
			}
			if js := string(got.AppendJSON(nil)); js != c.want {
				t.Errorf("got  %s\nwant %s", js, c.want)
			}
		})
	}
}

func TestLiftOutOfList(t *testing.T) {
	list := docOf(`{"type":"bullet_list","content":[{"type":"list_item","content":[` + p("a") + `]},{"type":"list_item","content":[` + p("b") + `]}]}`)
	got, err := run(t, doc(t, list), `{"base":0,"edits":[{"op":"liftOutOfList","target":{"text":{"find":"b"}}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	want := docOf(`{"type":"bullet_list","content":[{"type":"list_item","content":[`+p("a")+`]}]}`, p("b"))
	if js := string(got.AppendJSON(nil)); js != want {
		t.Errorf("got  %s\nwant %s", js, want)
	}
	if _, err := run(t, doc(t, docOf(p("x"))), `{"base":0,"edits":[{"op":"liftOutOfList","target":{"text":{"find":"x"}}}]}`); !isTargetError(err, 0) {
		t.Errorf("lift out of no list: %v, want a TargetError", err)
	}
}

func isTargetError(err error, i int) bool {
	var te *edit.TargetError
	return errors.As(err, &te) && te.Edit == i
}

func TestEditErrors(t *testing.T) {
	d := docOf(p("one two"), p("two three"), `{"type":"paragraph","content":[{"type":"text","text":"x"},{"type":"image","attrs":{"src":"i.png"}},{"type":"text","text":"y😀z"}]}`)
	for _, c := range []struct {
		name, body string
		target     int // the edit a *TargetError names; -1 for a request error
		says       string
	}{
		{"not JSON", `{"base":0,`, -1, "invalid edit request"},
		{"no base", `{"edits":[{"op":"deleteBlock","target":{"block":{"path":[0]}}}]}`, -1, "base"},
		{"no edits", `{"base":0,"edits":[]}`, -1, "edits"},
		{"unknown field", `{"base":0,"edits":[{"op":"deleteBlock","target":{"block":{"path":[0]}},"pos":3}]}`, -1, "pos"},
		{"unknown op", `{"base":0,"edits":[{"op":"explode","target":{"block":{"path":[0]}}}]}`, 0, "unknown op"},
		{"text twice", `{"base":0,"edits":[{"op":"replaceText","target":{"text":{"find":"two"}},"text":"2"}]}`, 0, "more than once"},
		{"text across blocks", `{"base":0,"edits":[{"op":"replaceText","target":{"text":{"find":"two two"}},"text":"2"}]}`, 0, "not found"},
		{"path out of range", `{"base":0,"edits":[{"op":"deleteBlock","target":{"block":{"path":[5]}}}]}`, 0, "no child 5"},
		{"path to text", `{"base":0,"edits":[{"op":"deleteBlock","target":{"block":{"path":[0,0]}}}]}`, 0, "not a block"},
		{"no such attr", `{"base":0,"edits":[{"op":"deleteBlock","target":{"block":{"attr":"id","value":"x"}}}]}`, 0, "no block has id"},
		{"second edit", `{"base":0,"edits":[{"op":"deleteBlock","target":{"block":{"path":[0]}}},{"op":"addMark","target":{"block":{"path":[1]}},"mark":{"type":"em"}}]}`, 1, "text target"},
		{"unknown mark", `{"base":0,"edits":[{"op":"addMark","target":{"text":{"find":"three"}},"mark":{"type":"glow"}}]}`, 0, "glow"},
		{"unknown type", `{"base":0,"edits":[{"op":"setBlockType","target":{"text":{"find":"three"}},"type":"table"}]}`, 0, "table"},
		{"bad at", `{"base":0,"edits":[{"op":"insert","target":{"text":{"find":"three"}},"at":"inside","markdown":"x"}]}`, 0, "inside"},
		{"both contents", `{"base":0,"edits":[{"op":"insert","target":{"text":{"find":"three"}},"at":"after","markdown":"x","content":{"type":"paragraph"}}]}`, 0, "not both"},
		{"bad content", `{"base":0,"edits":[{"op":"insert","target":{"text":{"find":"three"}},"at":"after","content":{"type":"nope"}}]}`, 0, "nope"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := run(t, doc(t, d), c.body)
			if err == nil {
				t.Fatal("no error")
			}
			if c.target < 0 && !errors.Is(err, edit.ErrInvalid) || c.target >= 0 && !isTargetError(err, c.target) {
				t.Errorf("%v: want %s", err, map[bool]string{true: "ErrInvalid", false: "a TargetError"}[c.target < 0])
			}
			if !strings.Contains(err.Error(), c.says) {
				t.Errorf("%q does not say %q", err, c.says)
			}
		})
	}
	// Text after an inline node and an astral character: positions in
	// UTF-16 code units.
	got, err := run(t, doc(t, d), `{"base":0,"edits":[{"op":"replaceText","target":{"text":{"find":"z","before":"😀"}},"text":"Z"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"type":"text","text":"y😀Z"}`; !strings.Contains(string(got.AppendJSON(nil)), want) {
		t.Errorf("got %s, want it to contain %s", got.AppendJSON(nil), want)
	}
}

// TestStale makes edits found at a base version on a document that moved
// on: mapped when their target is untouched, refused when it changed.
func TestStale(t *testing.T) {
	s := basic(t)
	base := doc(t, docOf(p("alpha beta"), p("gamma delta")))
	for _, c := range []struct {
		name   string
		change func(tr *transform.Transform) error
		body   string
		want   string // the document after the edit, or "" for a StaleError
	}{
		{"typed before", func(tr *transform.Transform) error { return insertText(s, tr, 1, "new ") },
			`{"base":0,"edits":[{"op":"replaceText","target":{"text":{"find":"delta"}},"text":"DELTA"}]}`,
			docOf(p("new alpha beta"), p("gamma DELTA"))},
		{"typed in the same block", func(tr *transform.Transform) error { return insertText(s, tr, 13, "big ") },
			`{"base":0,"edits":[{"op":"addMark","target":{"text":{"find":"delta"}},"mark":{"type":"em"}}]}`,
			docOf(p("alpha beta"), `{"type":"paragraph","content":[{"type":"text","text":"big gamma "},{"type":"text","marks":[{"type":"em"}],"text":"delta"}]}`)},
		{"target deleted", func(tr *transform.Transform) error { return tr.Delete(18, 24) },
			`{"base":0,"edits":[{"op":"replaceText","target":{"text":{"find":"delta"}},"text":"DELTA"}]}`, ""},
		{"target text changed", func(tr *transform.Transform) error { return insertText(s, tr, 20, "x") },
			`{"base":0,"edits":[{"op":"replaceText","target":{"text":{"find":"delta"}},"text":"DELTA"}]}`, ""},
		{"context changed", func(tr *transform.Transform) error { return tr.Delete(13, 18) },
			`{"base":0,"edits":[{"op":"replaceText","target":{"text":{"find":"delta","before":"gamma "}},"text":"DELTA"}]}`, ""},
		{"block edited", func(tr *transform.Transform) error { return insertText(s, tr, 3, "x") },
			`{"base":0,"edits":[{"op":"deleteBlock","target":{"block":{"path":[0]}}}]}`, ""},
		{"block deleted", func(tr *transform.Transform) error { return tr.Delete(0, 12) },
			`{"base":0,"edits":[{"op":"setBlockType","target":{"block":{"path":[0]}},"type":"heading"}]}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, err := edit.Parse([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			plan, err := edit.Prepare(base, req, fakeMarkdown)
			if err != nil {
				t.Fatal(err)
			}
			since := transform.New(base)
			if err := c.change(since); err != nil {
				t.Fatal(err)
			}
			tr := transform.New(since.Doc)
			err = plan.MakeSince(tr, since.Mapping)
			var se *edit.StaleError
			if c.want == "" {
				if !errors.As(err, &se) || se.Edit != 0 {
					t.Fatalf("%v, want a StaleError naming edit 0", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if js := string(tr.Doc.AppendJSON(nil)); js != c.want {
				t.Errorf("got  %s\nwant %s", js, c.want)
			}
		})
	}
}

func insertText(s *model.Schema, tr *transform.Transform, pos int, text string) error {
	n, err := s.Text(text, nil)
	if err != nil {
		return err
	}
	return tr.Insert(pos, model.FragmentOf(n))
}

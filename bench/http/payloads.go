package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pmauthority/pmauthority/internal/tracedoc"
	"github.com/pmauthority/pmauthority/model"
	"github.com/pmauthority/pmauthority/schemas"
	"github.com/pmauthority/pmauthority/transform"
)

// A Payload is one request body that every server is loaded with.
type Payload struct {
	// Name is the short name used in tables and file names (seed, small,
	// 50KB, 1MB).
	Name string
	// About says what the payload is, for the report.
	About string
	// Body is the request body.
	Body []byte
}

// seedPayload is prosemirror-v8-perf's payload, byte for byte (its k6
// script's body): the text schema, so it carries no "schema" field and
// the servers run with text as their default schema.
const seedPayload = `{"steps":[{"stepType":"replace","from":0,"to":0,"slice":{"content":[{"type":"text","text":"Hello"}]}}],"doc": {"type":"doc"}}`

// smallDoc is a small document in the basic schema with a little of
// everything: a heading, marks, a link, a list.
const smallDoc = `{"type":"doc","content":[` +
	`{"type":"heading","attrs":{"level":2},"content":[{"type":"text","text":"Release notes"}]},` +
	`{"type":"paragraph","content":[{"type":"text","text":"This version is "},{"type":"text","marks":[{"type":"strong"}],"text":"faster"},` +
	`{"type":"text","text":" and applies steps like "},{"type":"text","marks":[{"type":"link","attrs":{"href":"https://prosemirror.net","title":null}}],"text":"ProseMirror"},{"type":"text","text":" does."}]},` +
	`{"type":"bullet_list","content":[{"type":"list_item","content":[{"type":"paragraph","content":[{"type":"text","text":"same answers"}]}]},` +
	`{"type":"list_item","content":[{"type":"paragraph","content":[{"type":"text","marks":[{"type":"em"}],"text":"less memory"}]}]}]}]}`

// Payloads returns the four payloads of the benchmark: the seed payload,
// a small basic document with one step, a ~50 KB document with 20 mixed
// steps and a ~1 MB document with one step. The two large documents are
// cut from the editing trace end document tracedoc.DocSource in tracesDir.
// Every step is checked to apply with pmauthority's own transform package;
// whether node gives the same answer is checked at run time.
func Payloads(tracesDir string) ([]Payload, error) {
	basic, err := schemas.Get("basic")
	if err != nil {
		return nil, err
	}
	small, err := basicPayload(basic, []byte(smallDoc), func(doc *model.Node) ([]json.RawMessage, error) {
		// Typing at the end of the heading.
		end := 1 + len("Release notes")
		return []json.RawMessage{insertStep(end, " 2.0")}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("small payload: %w", err)
	}
	doc50, err := tracedoc.BuildDoc(tracesDir, 50_000)
	if err != nil {
		return nil, err
	}
	mixed, err := basicPayload(basic, doc50, mixedSteps)
	if err != nil {
		return nil, fmt.Errorf("50KB payload: %w", err)
	}
	doc1M, err := tracedoc.BuildDoc(tracesDir, 1_000_000)
	if err != nil {
		return nil, err
	}
	large, err := basicPayload(basic, doc1M, func(doc *model.Node) ([]json.RawMessage, error) {
		paras := plainParagraphs(doc, 20)
		if len(paras) == 0 {
			return nil, fmt.Errorf("no plain paragraph")
		}
		p := paras[len(paras)/2]
		return []json.RawMessage{insertStep(p.wordStart(len(p.text)/2), "quite ")}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("1MB payload: %w", err)
	}
	return []Payload{
		{Name: "seed", About: "prosemirror-v8-perf's payload: empty doc, insert \"Hello\" (text schema)", Body: []byte(seedPayload)},
		{Name: "small", About: fmt.Sprintf("basic doc of %d bytes (heading, marks, link, list), 1 step (typing)", len(smallDoc)), Body: small},
		{Name: "50KB", About: fmt.Sprintf("basic doc of %d bytes, 20 steps (typing, backspacing, a word replaced, a split, addMark strong/em)", len(doc50)), Body: mixed},
		{Name: "1MB", About: fmt.Sprintf("basic doc of %d bytes, 1 step (typing)", len(doc1M)), Body: large},
	}, nil
}

// basicPayload returns the request {"schema":"basic","doc":…,"steps":…}
// with the steps that makeSteps returns for docJSON, after checking that
// they apply.
func basicPayload(schema *model.Schema, docJSON []byte, makeSteps func(*model.Node) ([]json.RawMessage, error)) ([]byte, error) {
	doc, err := schema.NodeFromJSON(docJSON)
	if err != nil {
		return nil, err
	}
	steps, err := makeSteps(doc)
	if err != nil {
		return nil, err
	}
	parsed := make([]transform.Step, len(steps))
	for i, s := range steps {
		if parsed[i], err = transform.StepFromJSON(schema, s); err != nil {
			return nil, fmt.Errorf("step %d %s: %w", i, s, err)
		}
	}
	if _, err := transform.ApplySteps(doc, parsed); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.WriteString(`{"schema":"basic","doc":`)
	buf.Write(docJSON)
	buf.WriteString(`,"steps":[`)
	for i, s := range steps {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(s)
	}
	buf.WriteString("]}")
	return buf.Bytes(), nil
}

// paragraph is a top-level paragraph of plain ASCII text nodes (marks
// allowed), where a text offset is a position offset.
type paragraph struct {
	pos  int // position before the paragraph
	text string
}

// at returns the position of text offset off.
func (p paragraph) at(off int) int { return p.pos + 1 + off }

// wordStart returns the position of the start of the word at or after
// text offset off (the end of the text if there is none).
func (p paragraph) wordStart(off int) int {
	i := strings.IndexByte(p.text[off:], ' ')
	if i < 0 {
		return p.at(len(p.text))
	}
	return p.at(off + i + 1)
}

// wordAfter returns the offsets [from, to) of the first word that starts
// at or after text offset off.
func (p paragraph) wordAfter(off int) (from, to int) {
	from = p.wordStart(off) - p.pos - 1
	to = from
	for to < len(p.text) && p.text[to] != ' ' {
		to++
	}
	return from, to
}

// plainParagraphs returns the top-level paragraphs of doc that hold at
// least minLen characters of ASCII text and nothing but text nodes.
func plainParagraphs(doc *model.Node, minLen int) []paragraph {
	var out []paragraph
	doc.ForEach(func(child *model.Node, offset, _ int) {
		if child.Type.Name != "paragraph" {
			return
		}
		for i := range child.ChildCount() {
			if !child.Child(i).IsText() {
				return
			}
		}
		text := child.TextContent()
		for i := range len(text) {
			if text[i] >= 0x80 {
				return
			}
		}
		if len(text) >= minLen {
			out = append(out, paragraph{pos: offset, text: text})
		}
	})
	return out
}

// mixedSteps returns 20 steps of an editing session in doc: a word typed
// letter by letter, four backspaces, a word selected and replaced, a
// paragraph split and typed into, and two words made strong and em. The
// edits go from the end of the document towards its start, so that each
// step's positions are those of the original document.
func mixedSteps(doc *model.Node) ([]json.RawMessage, error) {
	paras := plainParagraphs(doc, 80)
	if len(paras) < 8 {
		return nil, fmt.Errorf("only %d plain paragraphs of 80+ characters", len(paras))
	}
	pick := func(frac float64) paragraph { return paras[int(frac*float64(len(paras)-1))] }
	var steps []json.RawMessage

	// Typing "quickly " at the start of a word near the end: 8 steps.
	p := pick(0.9)
	at := p.wordStart(len(p.text) / 3)
	for i, c := range "quickly " {
		steps = append(steps, insertStep(at+i, string(c)))
	}

	// Four backspaces at the end of a word, then a word selected and
	// replaced by typing over it: 5 steps.
	p = pick(0.7)
	_, end := p.wordAfter(len(p.text) / 2)
	for i := range 4 {
		steps = append(steps, deleteStep(p.at(end-1-i), p.at(end-i)))
	}
	from, to := p.wordAfter(len(p.text) / 4)
	if from == to || to > end-4 {
		return nil, fmt.Errorf("no word to replace before offset %d in %q", end-4, p.text)
	}
	steps = append(steps, replaceTextStep(p.at(from), p.at(to), "edited"))

	// Enter in the middle of a paragraph, then typing at the start of the
	// new paragraph: 4 steps.
	p = pick(0.5)
	split := p.wordStart(len(p.text) / 2)
	steps = append(steps, json.RawMessage(fmt.Sprintf(
		`{"stepType":"replace","from":%d,"to":%d,"slice":{"content":[{"type":"paragraph"},{"type":"paragraph"}],"openStart":1,"openEnd":1},"structure":true}`,
		split, split)))
	for i, c := range "So " {
		steps = append(steps, insertStep(split+2+i, string(c)))
	}

	// A word made strong, another made em: 2 steps.
	p = pick(0.3)
	from, to = p.wordAfter(len(p.text) / 3)
	steps = append(steps, markStep("addMark", "strong", p.at(from), p.at(to)))
	p = pick(0.1)
	from, to = p.wordAfter(len(p.text) / 2)
	steps = append(steps, markStep("addMark", "em", p.at(from), p.at(to)))

	// One more letter typed at the very start, so the last step shifts
	// the whole document: 1 step.
	steps = append(steps, insertStep(paras[0].at(0), "A"))

	if len(steps) != 20 {
		return nil, fmt.Errorf("made %d steps, want 20", len(steps))
	}
	return steps, nil
}

// insertStep returns the step that types text at pos.
func insertStep(pos int, text string) json.RawMessage {
	return replaceTextStep(pos, pos, text)
}

// replaceTextStep returns the step that replaces from-to with text.
func replaceTextStep(from, to int, text string) json.RawMessage {
	t, _ := json.Marshal(text)
	return json.RawMessage(fmt.Sprintf(`{"stepType":"replace","from":%d,"to":%d,"slice":{"content":[{"type":"text","text":%s}]}}`, from, to, t))
}

// deleteStep returns the step that deletes from-to.
func deleteStep(from, to int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"stepType":"replace","from":%d,"to":%d}`, from, to))
}

// markStep returns an addMark or removeMark step of a mark without
// attributes.
func markStep(stepType, mark string, from, to int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"stepType":%q,"mark":{"type":%q},"from":%d,"to":%d}`, stepType, mark, from, to))
}

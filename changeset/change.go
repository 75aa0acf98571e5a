package changeset

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/pmauthority/pmauthority/model"
)

// Span is a stretch of a change's deleted or inserted content with the
// data (an author, say) attached to it.
type Span[D comparable] struct {
	// Length is the span's length in document positions.
	Length int
	// Data is the data associated with the span.
	Data D
}

// Change is a replaced range: the content from FromA to ToA in the old
// document was replaced by that from FromB to ToB in the new one.
type Change[D comparable] struct {
	// FromA and ToA bound the range in the old document.
	FromA, ToA int
	// FromB and ToB bound the range in the new document.
	FromB, ToB int
	// Deleted is the data of the deleted content; its lengths add up to
	// ToA-FromA.
	Deleted []Span[D]
	// Inserted is the data of the inserted content; its lengths add up to
	// ToB-FromB.
	Inserted []Span[D]
}

// Combine decides whether the data of two adjacent spans may be merged
// into one span, and with what data. It returns false when they may not.
type Combine[D comparable] func(a, b D) (D, bool)

// sameData is the default Combine, prosemirror-changeset's
// (a, b) => a === b ? a : null: equal data merges.
func sameData[D comparable](a, b D) (D, bool) { return a, a == b }

func (c Change[D]) lenA() int { return c.ToA - c.FromA }
func (c Change[D]) lenB() int { return c.ToB - c.FromB }

// slice returns the part of c from startA to endA (old document) and
// startB to endB (new document), offsets relative to c's start.
func (c Change[D]) slice(startA, endA, startB, endB int) Change[D] {
	if startA == 0 && startB == 0 && endA == c.lenA() && endB == c.lenB() {
		return c
	}
	return Change[D]{
		FromA: c.FromA + startA, ToA: c.FromA + endA,
		FromB: c.FromB + startB, ToB: c.FromB + endB,
		Deleted:  sliceSpans(c.Deleted, startA, endA),
		Inserted: sliceSpans(c.Inserted, startB, endB),
	}
}

// sliceSpans returns the spans that cover from to to of spans.
func sliceSpans[D comparable](spans []Span[D], from, to int) []Span[D] {
	if from == to {
		return nil
	}
	if from == 0 && to == spansLen(spans) {
		return spans
	}
	var result []Span[D]
	for i, off := 0, 0; off < to; i++ {
		if i == len(spans) {
			panic(inconsistent("a change's spans are shorter than the change"))
		}
		span := spans[i]
		end := off + span.Length
		if overlap := min(to, end) - max(from, off); overlap > 0 {
			result = append(result, Span[D]{overlap, span.Data})
		}
		off = end
	}
	return result
}

// joinSpans returns a followed by b, the last span of a and the first of
// b merged into one when combine allows it. It never writes to a or b.
func joinSpans[D comparable](a, b []Span[D], combine Combine[D]) []Span[D] {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	last := a[len(a)-1]
	combined, ok := combine(last.Data, b[0].Data)
	result := make([]Span[D], 0, len(a)+len(b))
	if !ok {
		return append(append(result, a...), b...)
	}
	result = append(result, a[:len(a)-1]...)
	result = append(result, Span[D]{last.Length + b[0].Length, combined})
	return append(result, b[1:]...)
}

func spansLen[D comparable](spans []Span[D]) int {
	n := 0
	for _, s := range spans {
		n += s.Length
	}
	return n
}

// ErrInconsistent is the error where changes do not fit together: the
// spans of a change do not add up to its length, or the step maps and
// documents given to AddSteps are not those of one history. These are
// the cases where prosemirror-changeset reads past the end of an array
// and throws a TypeError.
var ErrInconsistent = errors.New("changeset: inconsistent changes")

// inconsistent is the panic that recoverInconsistent turns into an
// error wrapping ErrInconsistent.
type inconsistent string

// recoverInconsistent turns an inconsistent panic into *err.
func recoverInconsistent(err *error) {
	if r := recover(); r != nil {
		msg, ok := r.(inconsistent)
		if !ok {
			panic(r)
		}
		*err = fmt.Errorf("%w: %s", ErrInconsistent, string(msg))
	}
}

// Merge merges two sequences of changes, where the end document of x is
// the start document of y, into one spanning the start of x to the end
// of y. Deletions from x and insertions from y are kept; content that x
// inserted and y deleted drops out. A nil combine merges equal data.
func Merge[D comparable](x, y []Change[D], combine Combine[D]) (merged []Change[D], err error) {
	if combine == nil {
		combine = sameData[D]
	}
	defer recoverInconsistent(&err)
	return mergeChanges(x, y, combine), nil
}

func mergeChanges[D comparable](x, y []Change[D], combine Combine[D]) []Change[D] {
	if len(x) == 0 {
		return y
	}
	if len(y) == 0 {
		return x
	}
	// at returns the change at i, or nil past the end.
	at := func(list []Change[D], i int) *Change[D] {
		if i < len(list) {
			return &list[i]
		}
		return nil
	}
	// shift is how far the changes before index i of list moved
	// positions: that of the last one before i.
	shift := func(list []Change[D], i int) int {
		if i == 0 {
			return 0
		}
		return list[i-1].ToB - list[i-1].ToA
	}
	var result []Change[D]
	// Iterate over both sets in parallel, using the middle coordinate
	// system (B in x, A in y) to synchronize.
	iX, iY := 0, 0
	curX, curY := at(x, 0), at(y, 0)
	for {
		switch {
		case curX == nil && curY == nil:
			return result
		case curX != nil && (curY == nil || curX.ToB < curY.FromA): // curX entirely in front of curY
			off := shift(y, iY)
			ch := *curX
			if off != 0 {
				ch.FromB += off
				ch.ToB += off
			}
			result = append(result, ch)
			iX++
			curX = at(x, iX)
		case curY != nil && (curX == nil || curY.ToA < curX.FromB): // curY entirely in front of curX
			off := shift(x, iX)
			ch := *curY
			if off != 0 {
				ch.FromA -= off
				ch.ToA -= off
			}
			result = append(result, ch)
			iY++
			curY = at(y, iY)
		default: // Touch, need to merge
			// Areas of the middle document covered by x but not by y are
			// insertions from x that need to be added, and areas covered by
			// y but not x are deletions from y that need to be added.
			pos := min(curX.FromB, curY.FromA)
			fromA := min(curX.FromA, curY.FromA-shift(x, iX))
			toA := fromA
			fromB := min(curY.FromB, curX.FromB+shift(y, iY))
			toB := fromB
			var deleted, inserted []Span[D]
			// Keep from adding the deletions or insertions of the same
			// change twice.
			enteredX, enteredY := false, false
			// Any number of further ranges might touch this group.
			for {
				nextX, nextY := 200000000, 200000000
				if curX != nil {
					nextX = curX.FromB
					if pos >= curX.FromB {
						nextX = curX.ToB
					}
				}
				if curY != nil {
					nextY = curY.FromA
					if pos >= curY.FromA {
						nextY = curY.ToA
					}
				}
				next := min(nextX, nextY)
				inX := curX != nil && pos >= curX.FromB
				inY := curY != nil && pos >= curY.FromA
				if !inX && !inY {
					break
				}
				if inX && pos == curX.FromB && !enteredX {
					deleted = joinSpans(deleted, curX.Deleted, combine)
					toA += curX.lenA()
					enteredX = true
				}
				if inX && !inY {
					inserted = joinSpans(inserted, sliceSpans(curX.Inserted, pos-curX.FromB, next-curX.FromB), combine)
					toB += next - pos
				}
				if inY && pos == curY.FromA && !enteredY {
					inserted = joinSpans(inserted, curY.Inserted, combine)
					toB += curY.lenB()
					enteredY = true
				}
				if inY && !inX {
					deleted = joinSpans(deleted, sliceSpans(curY.Deleted, pos-curY.FromA, next-curY.FromA), combine)
					toA += next - pos
				}
				if inX && next == curX.ToB {
					iX++
					curX = at(x, iX)
					enteredX = false
				}
				if inY && next == curY.ToA {
					iY++
					curY = at(y, iY)
					enteredY = false
				}
				pos = next
			}
			if fromA < toA || fromB < toB {
				result = append(result, Change[D]{fromA, toA, fromB, toB, deleted, inserted})
			}
		}
	}
}

// MarshalJSON writes the change as prosemirror-changeset's
// JSON.stringify(change) does: {"fromA", "toA", "fromB", "toB",
// "deleted", "inserted"}, spans as {"length", "data"}, empty span lists
// as []. String data is written as JSON.stringify writes strings; other
// data as encoding/json writes it.
func (c Change[D]) MarshalJSON() ([]byte, error) {
	return c.AppendJSON(nil)
}

// AppendJSON appends the change's JSON (see MarshalJSON) to buf.
func (c Change[D]) AppendJSON(buf []byte) ([]byte, error) {
	buf = append(buf, `{"fromA":`...)
	buf = strconv.AppendInt(buf, int64(c.FromA), 10)
	buf = append(buf, `,"toA":`...)
	buf = strconv.AppendInt(buf, int64(c.ToA), 10)
	buf = append(buf, `,"fromB":`...)
	buf = strconv.AppendInt(buf, int64(c.FromB), 10)
	buf = append(buf, `,"toB":`...)
	buf = strconv.AppendInt(buf, int64(c.ToB), 10)
	buf = append(buf, `,"deleted":`...)
	buf, err := appendSpans(buf, c.Deleted)
	if err != nil {
		return nil, err
	}
	buf = append(buf, `,"inserted":`...)
	if buf, err = appendSpans(buf, c.Inserted); err != nil {
		return nil, err
	}
	return append(buf, '}'), nil
}

func appendSpans[D comparable](buf []byte, spans []Span[D]) ([]byte, error) {
	buf = append(buf, '[')
	for i, s := range spans {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"length":`...)
		buf = strconv.AppendInt(buf, int64(s.Length), 10)
		buf = append(buf, `,"data":`...)
		switch d := any(s.Data).(type) {
		case string:
			buf = model.AppendJSONString(buf, d)
		default:
			b, err := json.Marshal(d)
			if err != nil {
				return nil, err
			}
			buf = append(buf, b...)
		}
		buf = append(buf, '}')
	}
	return append(buf, ']'), nil
}

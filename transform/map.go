package transform

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Mappable is implemented by the things positions can be mapped through:
// [StepMap] and [Mapping].
type Mappable interface {
	// Map maps pos through the object. assoc (-1 or 1) tells with which
	// side the position is associated, which decides the direction it
	// moves in when content is inserted right at it.
	Map(pos, assoc int) int

	// MapResult maps pos like Map and also reports whether the position
	// was deleted. When content on only one side of it is deleted, the
	// position counts as deleted only when assoc points towards that side.
	MapResult(pos, assoc int) MapResult
}

// A recovery value packs the index of a changed range (lower 16 bits) and
// the offset of a position inside it (the remaining bits) into one int, so
// that mapping many positions allocates nothing. It lets a [Mapping] map a
// position losslessly through a step map and its mirror image.
const (
	recoverIndexBits = 16
	recoverIndexMask = 1<<recoverIndexBits - 1
)

func makeRecover(index, offset int) int { return index + offset<<recoverIndexBits }
func recoverIndex(value int) int        { return value & recoverIndexMask }
func recoverOffset(value int) int       { return value >> recoverIndexBits }

// Bits of MapResult.delInfo, as in the JS.
const (
	delBefore = 1 << iota // the token before the position was deleted
	delAfter              // the token after the position was deleted
	delAcross             // a deletion spanned both sides of the position
	delSide               // the token on the side given by assoc was deleted
)

// MapResult is a mapped position with information about what happened
// around it.
type MapResult struct {
	// Pos is the mapped position.
	Pos int

	recover    int // a recovery value, meaningful when hasRecover is set
	hasRecover bool
	delInfo    uint8
}

// Deleted reports whether the token on the side queried (via assoc) was
// removed from the document.
func (r MapResult) Deleted() bool { return r.delInfo&delSide != 0 }

// DeletedBefore reports whether the token before the mapped position was
// deleted.
func (r MapResult) DeletedBefore() bool { return r.delInfo&(delBefore|delAcross) != 0 }

// DeletedAfter reports whether the token after the mapped position was
// deleted.
func (r MapResult) DeletedAfter() bool { return r.delInfo&(delAfter|delAcross) != 0 }

// DeletedAcross reports whether any of the maps passed through deleted
// across the position, taking the tokens before and after it.
func (r MapResult) DeletedAcross() bool { return r.delInfo&delAcross != 0 }

// StepMap describes the deletions and insertions made by a step, and maps
// positions in the document before the step to the document after it. It
// is immutable.
type StepMap struct {
	// ranges holds a [start, oldSize, newSize] triple per changed chunk,
	// ordered by start, with starts in pre-step coordinates.
	ranges   []int
	inverted bool
}

// EmptyStepMap is a StepMap that changes nothing. The zero StepMap is
// equivalent.
var EmptyStepMap = &StepMap{}

var (
	_ Mappable = (*StepMap)(nil)
	_ Mappable = (*Mapping)(nil)
)

// NewStepMap returns a StepMap for ranges, which holds a
// [start, oldSize, newSize] triple for each modified chunk. When inverted
// is set, the map goes the other way, from the post-step document to the
// pre-step one. The StepMap takes ownership of ranges: the caller must not
// modify it afterwards. Empty ranges give [EmptyStepMap]. NewStepMap panics
// if len(ranges) is not a multiple of three.
func NewStepMap(ranges []int, inverted bool) *StepMap {
	if len(ranges)%3 != 0 {
		panic(fmt.Sprintf("transform: NewStepMap: %d ranges is not a multiple of 3", len(ranges)))
	}
	if len(ranges) == 0 {
		return EmptyStepMap
	}
	return &StepMap{ranges: ranges, inverted: inverted}
}

// StepMapOffset returns a StepMap that moves every position by n, which
// may be negative. This helps to apply steps meant for a sub-document to a
// larger document, or the other way round.
func StepMapOffset(n int) *StepMap {
	switch {
	case n == 0:
		return EmptyStepMap
	case n < 0:
		return NewStepMap([]int{0, -n, 0}, false)
	default:
		return NewStepMap([]int{0, 0, n}, false)
	}
}

// sizeIndexes returns the offsets within a range triple of the size in the
// input document and of the size in the output document.
func (m *StepMap) sizeIndexes() (oldIndex, newIndex int) {
	if m.inverted {
		return 2, 1
	}
	return 1, 2
}

// recover returns the position in this map's output that a recovery value
// taken from this map's mirror image points to. It reports false when the
// value names a range this map does not have, which happens only when two
// maps that are not mirror images were declared mirrors.
func (m *StepMap) recover(value int) (int, bool) {
	index := recoverIndex(value)
	if index*3 >= len(m.ranges) {
		return 0, false
	}
	diff := 0
	if !m.inverted {
		for i := range index {
			diff += m.ranges[i*3+2] - m.ranges[i*3+1]
		}
	}
	return m.ranges[index*3] + diff + recoverOffset(value), true
}

// Map returns pos mapped through the step map.
func (m *StepMap) Map(pos, assoc int) int { return m.mapPos(pos, assoc, true).Pos }

// MapResult returns pos mapped through the step map, with deletion
// information.
func (m *StepMap) MapResult(pos, assoc int) MapResult { return m.mapPos(pos, assoc, false) }

// mapPos maps pos. When simple is set, only the Pos of the result is
// filled in, which spares the work for the common case of Map.
func (m *StepMap) mapPos(pos, assoc int, simple bool) MapResult {
	diff := 0
	oldIndex, newIndex := m.sizeIndexes()
	for i := 0; i < len(m.ranges); i += 3 {
		start := m.ranges[i]
		if m.inverted {
			start -= diff
		}
		if start > pos {
			break
		}
		oldSize, newSize := m.ranges[i+oldIndex], m.ranges[i+newIndex]
		end := start + oldSize
		if pos > end {
			diff += newSize - oldSize
			continue
		}
		side := assoc
		if oldSize != 0 {
			if pos == start {
				side = -1
			} else if pos == end {
				side = 1
			}
		}
		result := MapResult{Pos: start + diff}
		if side >= 0 {
			result.Pos += newSize
		}
		if simple {
			return result
		}
		// A position on the boundary that assoc points away from keeps the
		// content on its side: it maps to that boundary exactly, so it needs
		// no recovery and is not deleted.
		boundary := end
		if assoc < 0 {
			boundary = start
		}
		if pos != boundary {
			result.recover, result.hasRecover = makeRecover(i/3, pos-start), true
		}
		if oldSize != 0 {
			switch pos {
			case start:
				result.delInfo = delAfter
			case end:
				result.delInfo = delBefore
			default:
				result.delInfo = delAcross
			}
			if pos != boundary {
				result.delInfo |= delSide
			}
		}
		return result
	}
	return MapResult{Pos: pos + diff}
}

// touches reports whether pos lies in the range that the recovery value
// came from. prosemirror-view uses it to map decorations; it is kept here
// so that map.ts is ported whole.
func (m *StepMap) touches(pos, recover int) bool {
	diff, index := 0, recoverIndex(recover)
	oldIndex, newIndex := m.sizeIndexes()
	for i := 0; i < len(m.ranges); i += 3 {
		start := m.ranges[i]
		if m.inverted {
			start -= diff
		}
		if start > pos {
			break
		}
		oldSize := m.ranges[i+oldIndex]
		if pos <= start+oldSize && i == index*3 {
			return true
		}
		diff += m.ranges[i+newIndex] - oldSize
	}
	return false
}

// ForEach calls f for each changed range, with its bounds in the input and
// in the output document.
func (m *StepMap) ForEach(f func(oldStart, oldEnd, newStart, newEnd int)) {
	oldIndex, newIndex := m.sizeIndexes()
	diff := 0
	for i := 0; i < len(m.ranges); i += 3 {
		start := m.ranges[i]
		oldStart, newStart := start, start
		if m.inverted {
			oldStart -= diff
		} else {
			newStart += diff
		}
		oldSize, newSize := m.ranges[i+oldIndex], m.ranges[i+newIndex]
		f(oldStart, oldStart+oldSize, newStart, newStart+newSize)
		diff += newSize - oldSize
	}
}

// Invert returns the inverse of the map, which maps positions in the
// post-step document to the pre-step document.
func (m *StepMap) Invert() *StepMap { return NewStepMap(m.ranges, !m.inverted) }

// String returns the ranges in JSON form, prefixed with "-" when the map
// is inverted, as the JS toString does.
func (m *StepMap) String() string {
	var b strings.Builder
	if m.inverted {
		b.WriteByte('-')
	}
	b.WriteByte('[')
	for i, r := range m.ranges {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(r))
	}
	b.WriteByte(']')
	return b.String()
}

// Mapping is a pipeline of step maps. It can map positions losslessly
// through a series of steps in which some steps are inverted versions of
// earlier ones, which happens when rebasing steps for collaboration or
// history. The zero Mapping is empty and ready to use.
type Mapping struct {
	maps []*StepMap
	// mirror holds pairs of indexes into maps whose step maps are each
	// other's mirror image.
	mirror []int

	// From is the index in Maps of the first step map that Map and
	// MapResult go through.
	From int
	// To is the index in Maps just past the last step map that Map and
	// MapResult go through.
	To int
}

// NewMapping returns a mapping through maps. Appending to the mapping
// never modifies maps.
func NewMapping(maps []*StepMap) *Mapping {
	return &Mapping{maps: slices.Clip(maps), To: len(maps)}
}

// Maps returns all step maps in the mapping, including any outside
// From and To. The caller must not modify the slice.
func (m *Mapping) Maps() []*StepMap { return slices.Clip(m.maps) }

// Slice returns a mapping that maps only through the step maps from index
// from up to index to. It shares the step maps and mirror information of
// m; appending to either leaves the other alone.
func (m *Mapping) Slice(from, to int) *Mapping {
	return &Mapping{maps: slices.Clip(m.maps), mirror: slices.Clip(m.mirror), From: from, To: to}
}

// AppendMap adds sm to the end of the mapping and sets To to the new
// number of maps. If mirrors is not negative, it is the index of the
// step map that sm is the mirror image of.
func (m *Mapping) AppendMap(sm *StepMap, mirrors int) {
	m.maps = append(m.maps, sm)
	m.To = len(m.maps)
	if mirrors >= 0 {
		m.SetMirror(len(m.maps)-1, mirrors)
	}
}

// AppendMapping adds the step maps of other between its From and To to
// the end of the mapping, keeping the mirror pairs among them.
func (m *Mapping) AppendMapping(other *Mapping) {
	startSize := len(m.maps)
	// other.To is read once so that a mapping can be appended to itself.
	for i, to := other.From, other.To; i < to; i++ {
		mirr, ok := other.GetMirror(i)
		if ok && mirr < i && mirr >= other.From {
			mirr = startSize + (mirr - other.From)
		} else {
			mirr = -1
		}
		m.AppendMap(other.maps[i], mirr)
	}
}

// GetMirror returns the index of the step map that mirrors the one at
// index n, as declared by AppendMap or SetMirror, and whether there is one.
func (m *Mapping) GetMirror(n int) (int, bool) {
	for i, v := range m.mirror {
		if v == n {
			// Pairs sit at even/odd indexes, so i^1 is the other half.
			return m.mirror[i^1], true
		}
	}
	return 0, false
}

// SetMirror declares the step maps at indexes n and mirror to be each
// other's mirror image: they must have the same number of ranges, one
// undoing the other.
func (m *Mapping) SetMirror(n, mirror int) {
	m.mirror = append(m.mirror, n, mirror)
}

// AppendMappingInverted adds the inverse of other to the end of the
// mapping.
func (m *Mapping) AppendMappingInverted(other *Mapping) {
	// As in the JS, mirror indexes are computed from the full length of
	// other.maps, which places them correctly only when other spans all its
	// maps (From 0, To len(Maps)).
	totalSize := len(m.maps) + len(other.maps)
	for i := other.To - 1; i >= other.From; i-- {
		mirr, ok := other.GetMirror(i)
		if ok && mirr > i && mirr < other.To {
			mirr = totalSize - (mirr - other.From) - 1
		} else {
			mirr = -1
		}
		m.AppendMap(other.maps[i].Invert(), mirr)
	}
}

// Invert returns the inverse of the mapping.
func (m *Mapping) Invert() *Mapping {
	inverse := &Mapping{}
	inverse.AppendMappingInverted(m)
	return inverse
}

// Map returns pos mapped through the mapping.
func (m *Mapping) Map(pos, assoc int) int {
	if len(m.mirror) > 0 {
		return m.MapResult(pos, assoc).Pos
	}
	for i := m.From; i < m.To; i++ {
		pos = m.maps[i].Map(pos, assoc)
	}
	return pos
}

// MapResult returns pos mapped through the mapping, with deletion
// information gathered from all the step maps passed through.
func (m *Mapping) MapResult(pos, assoc int) MapResult {
	var delInfo uint8
	for i := m.From; i < m.To; i++ {
		result := m.maps[i].MapResult(pos, assoc)
		if result.hasRecover {
			// Inside a range that a later map undoes: skip to that map
			// and put the position back where it was, losing nothing.
			if corr, ok := m.GetMirror(i); ok && corr > i && corr < m.To {
				if recovered, ok := m.maps[corr].recover(result.recover); ok {
					i, pos = corr, recovered
					continue
				}
			}
		}
		delInfo |= result.delInfo
		pos = result.Pos
	}
	return MapResult{Pos: pos, delInfo: delInfo}
}

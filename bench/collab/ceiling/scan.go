package main

// The ceiling reads a submission with the scanner below instead of a JSON
// decoder: it finds the values of "version", "steps" and "clientID" in
// the top-level object and the bounds of each element of "steps" by
// following strings and bracket nesting, in one pass. It is not a JSON
// parser: it accepts much that is not JSON (it checks no literal, number
// or escape, nor what is inside the steps) and "version" must be plain
// digits. On the bodies collabbench sends, and on any JSON object whose
// version is a non-negative integer, it finds what encoding/json would
// (FuzzScanSubmission checks that).

// submission is what scanSubmission finds in a body.
type submission struct {
	version int64
	// steps are the bounds [start, end) of each step in the body, which
	// stepsFrom and stepsTo hold, the brackets included.
	steps              [][2]int
	stepsFrom, stepsTo int
	// clientID is the JSON of the client id (nil when absent).
	clientID []byte
}

// scanSubmission reads body into sub (reusing its memory) and reports
// whether it found an object with a "version".
func scanSubmission(b []byte, sub *submission) bool {
	*sub = submission{steps: sub.steps[:0]}
	// Of duplicate keys the last counts, as with encoding/json.
	hasVersion, stepsOK := false, true
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipWS(b, i+1)
	for i < len(b) && b[i] == '"' {
		k := skipString(b, i)
		if k < 0 {
			return false
		}
		key := b[i+1 : k-1]
		if i = skipWS(b, k); i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipWS(b, i+1)
		end := skipValue(b, i)
		if end <= i {
			return false
		}
		switch string(key) {
		case "version":
			sub.version, hasVersion = digits(b[i:end])
		case "steps":
			stepsOK = scanSteps(b, i, end, sub)
		case "clientID":
			sub.clientID = b[i:end]
		}
		if i = skipWS(b, end); i >= len(b) || b[i] != ',' {
			break
		}
		if i = skipWS(b, i+1); i >= len(b) || b[i] != '"' {
			return false
		}
	}
	return i < len(b) && b[i] == '}' && skipWS(b, i+1) == len(b) && hasVersion && stepsOK
}

// scanSteps records the elements of the array b[from:to] as sub's steps
// (null: none).
func scanSteps(b []byte, from, to int, sub *submission) bool {
	sub.steps, sub.stepsFrom, sub.stepsTo = sub.steps[:0], from, to
	if string(b[from:to]) == "null" {
		return true
	}
	if b[from] != '[' {
		return false
	}
	i := skipWS(b, from+1)
	if i < to && b[i] == ']' {
		return i == to-1
	}
	for i < to {
		end := skipValue(b, i)
		if end <= i || end > to {
			return false
		}
		sub.steps = append(sub.steps, [2]int{i, end})
		switch i = skipWS(b, end); {
		case i < to && b[i] == ',':
			i = skipWS(b, i+1)
		case i == to-1 && b[i] == ']':
			return true
		default:
			return false
		}
	}
	return false
}

// skipValue returns the index just after the value that starts at b[i]
// (which is i itself when none does), or -1 when b ends inside it. It
// follows strings and nesting, nothing else.
func skipValue(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			j := skipString(b, i)
			if j < 0 || depth == 0 {
				return j
			}
			i = j - 1
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // ends a scalar
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\r', '\n':
			if depth == 0 {
				return i
			}
		}
	}
	if depth > 0 {
		return -1
	}
	return i
}

// skipString returns the index just after the string that starts at b[i]
// (a '"'), or -1 when b ends inside it.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipWS returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// digits reads 1 to 15 decimal digits (a version; no sign, fraction or
// exponent).
func digits(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// Package readbuf reads a reader to its end into a buffer the caller
// reuses, where io.ReadAll would allocate a new one each time.
package readbuf

import "io"

// Append reads r to its end, appending to buf, and returns the extended
// buffer (grown as append grows it) and the first error other than io.EOF.
func Append(buf []byte, r io.Reader) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

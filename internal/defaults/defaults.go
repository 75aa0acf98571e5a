// Package defaults fills in the unset fields of a configuration from its
// defaults: the one zero-means-default rule of pmauthority's Limits and
// Timeouts (apply.Limits, collab.Limits, server.Limits, server.Timeouts).
package defaults

import "reflect"

// Fill sets every number field of *v (integers, durations) that is zero
// or negative to that field of def, when def's is positive, and fills
// struct fields, embedded ones too, the same way. A field whose default
// is zero or negative is left as it is, so that such a field may give a
// negative value its own meaning ("none", "never"), and so are fields of
// other kinds. T must be a struct type.
func Fill[T any](v *T, def T) {
	fill(reflect.ValueOf(v).Elem(), reflect.ValueOf(def))
}

func fill(v, def reflect.Value) {
	for i := range v.NumField() {
		f, d := v.Field(i), def.Field(i)
		switch f.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			if f.CanSet() && f.Int() <= 0 && d.Int() > 0 {
				f.SetInt(d.Int())
			}
		case reflect.Struct:
			fill(f, d)
		}
	}
}

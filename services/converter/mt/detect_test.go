package mt

import (
	"bytes"
	"testing"
)

// lineFieldTags are the fields of fieldSet with the text hasLinePrefix
// would look for.
var lineFieldTags = map[fieldSet]string{
	f11R: ":11R:", f11S: ":11S:", f12: ":12:", f19: ":19:", f25: ":25:", f28D: ":28D:", f30: ":30:",
	f32A: ":32A:", f32B: ":32B:", f32C: ":32C:", f32D: ":32D:", f50A: ":50A:", f50F: ":50F:", f50K: ":50K:",
	f58A: ":58A:", f58D: ":58D:", f59: ":59:", f59A: ":59A:", f59F: ":59F:", f71B: ":71B:", f75: ":75:", f76: ":76:",
}

// checkLineFields compares lineFields with one search per field, as the
// detectors made them before.
func checkLineFields(t *testing.T, b []byte) {
	t.Helper()
	got := lineFields(b)
	for f, p := range lineFieldTags {
		if want := hasLinePrefix(b, p); (got&f != 0) != want {
			t.Fatalf("%q: %s is %t, hasLinePrefix says %t", b, p, got&f != 0, want)
		}
	}
	i30, i21 := bytes.Index(b, []byte("\n:30:")), bytes.Index(b, []byte("\n:21:"))
	if (got&f30NL != 0) != (i30 >= 0) {
		t.Fatalf("%q: f30NL is %t, the index %d", b, got&f30NL != 0, i30)
	}
	if want := i21 >= 0 && (i30 < 0 || i21 < i30); got&f21Before30 != 0 != want {
		t.Fatalf("%q: f21Before30 is %t, the indexes %d and %d", b, got&f21Before30 != 0, i21, i30)
	}
}

func TestLineFields(t *testing.T) {
	for _, s := range []string{"", ":", ":30:", ":30", "\n:30:", ":21:\n:30:", ":20:x\r\n:21:y\r\n:30:z\n:21:",
		":59:\n:59A:\n:59F", "{4:\r\n:28D:1/1\r\n:30:250101\r\n-}", "x\n:71B:\n:32B:", ":5:\n:50:\n:50K"} {
		checkLineFields(t, []byte(s))
	}
}

func FuzzLineFields(f *testing.F) {
	f.Add([]byte(":20:x\r\n:21:y\r\n:30:z\n:32A:"))
	f.Add([]byte("{4:\n:11S:192\n:76:/x\n-}"))
	f.Fuzz(func(t *testing.T, b []byte) { checkLineFields(t, b) })
}

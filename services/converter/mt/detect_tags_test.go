package mt

import "testing"

// FuzzStatementTags holds statementTags to what one hasLinePrefix per field
// answers, which is what Detect asked before it read the input once.
func FuzzStatementTags(f *testing.F) {
	for _, s := range []string{"", ":61:", ":61", "x\n:61:", ":34F:1", "\n:90D:", ":90C:\r\n:13D:", "a:61:\n::61:", ":13D", "\n\n:90D:x"} {
		f.Add([]byte(s))
	}
	fields := []struct {
		tag int
		p   string
	}{{tag34F, ":34F:"}, {tag90D, ":90D:"}, {tag90C, ":90C:"}, {tag13D, ":13D:"}, {tag61, ":61:"}}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := statementTags(b)
		for _, fl := range fields {
			if want := hasLinePrefix(b, fl.p); (got&fl.tag != 0) != want {
				t.Fatalf("statementTags(%q) has %s = %v, hasLinePrefix says %v", b, fl.p, got&fl.tag != 0, want)
			}
		}
	})
}

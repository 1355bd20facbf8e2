package mx

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// benchDoc renders a camt.053.001.08 document of about size bytes from
// generated MT-shaped statements: one statement trimmed to size for small
// documents, as many statements as it takes for large ones.
func benchDoc(b *testing.B, size int) ([]*statement.Statement, []byte) {
	b.Helper()
	r := rand.New(rand.NewPCG(7, 7))
	render := func(stmts []*statement.Statement) []byte {
		doc, _, err := Render(stmts, typeCamt3, "camt.053.001.08")
		if err != nil {
			b.Fatal(err)
		}
		return []byte(doc)
	}
	stmts := randomStatements(r, 1)
	doc := render(stmts)
	for len(doc) > size && len(stmts[0].Entries) > 1 {
		stmts[0].Entries = stmts[0].Entries[:len(stmts[0].Entries)-1]
		doc = render(stmts)
	}
	if len(doc) >= size/2 {
		return stmts, doc
	}
	// Grow by the estimated number of statements, then top up.
	per := len(doc)
	stmts = append(stmts, randomStatements(r, size/per)...)
	for doc = render(stmts); len(doc) < size; doc = render(stmts) {
		stmts = append(stmts, randomStatements(r, 1+(size-len(doc))/per)...)
	}
	return stmts, doc
}

var benchSizes = []struct {
	name string
	size int
}{{"2KB", 2 << 10}, {"1MB", 1 << 20}}

func BenchmarkParseCamt053(b *testing.B) {
	for _, bs := range benchSizes {
		_, doc := benchDoc(b, bs.size)
		b.Run(fmt.Sprintf("%s/%dB", bs.name, len(doc)), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := Parse(doc, typeCamt3, statement.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkRenderCamt053(b *testing.B) {
	for _, bs := range benchSizes {
		stmts, doc := benchDoc(b, bs.size)
		b.Run(fmt.Sprintf("%s/%dB", bs.name, len(doc)), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := Render(stmts, typeCamt3, "camt.053.001.08"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

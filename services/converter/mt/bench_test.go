package mt

import (
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// benchInput returns MT940 text of about size bytes: generated statements
// rendered as FIN messages of at most one 2,000-character page each.
func benchInput(tb testing.TB, size int) []byte {
	rng := newRand(42)
	var b strings.Builder
	for b.Len() < size {
		st := genStatement(rng, 1+rng.Intn(12))
		pages, _, err := Render("940", []*statement.Statement{st}, statement.Options{})
		if err != nil {
			tb.Fatal(err)
		}
		for _, p := range pages {
			if b.Len() > 0 && b.Len()+len(p) > size && size < 4096 {
				return []byte(b.String())
			}
			b.WriteString(p)
			b.WriteString("\r\n")
		}
	}
	return []byte(b.String())
}

var benchSizes = []struct {
	name string
	size int
}{{"2KB", 2000}, {"1MB", 1 << 20}}

func BenchmarkParseMT940(b *testing.B) {
	for _, bs := range benchSizes {
		in := benchInput(b, bs.size)
		b.Run(bs.name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			msgs := 0
			for i := 0; i < b.N; i++ {
				st, _, err := Parse(in, statement.Options{})
				if err != nil {
					b.Fatal(err)
				}
				msgs += len(st)
			}
			b.ReportMetric(float64(msgs)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

func BenchmarkRenderMT940(b *testing.B) {
	for _, bs := range benchSizes {
		in := benchInput(b, bs.size)
		st, _, err := Parse(in, statement.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bs.name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, _, err := Render("940", st, statement.Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(st)*b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

// BenchmarkParseRenderMT940 is the MT940 -> model -> MT940 conversion, the
// figure the 100 MB/s aim is about.
func BenchmarkParseRenderMT940(b *testing.B) {
	for _, bs := range benchSizes {
		in := benchInput(b, bs.size)
		b.Run(bs.name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				st, _, err := Parse(in, statement.Options{})
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := Render("940", st, statement.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package mx

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/mt"
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

// crossInputs returns an MT940 file of about size bytes and the camt.053.001.08
// document the engine makes of it, so both directions convert the same
// statements.
func crossInputs(b *testing.B, size int) (mt940, camt []byte) {
	b.Helper()
	r := rand.New(rand.NewPCG(11, 11))
	var buf []byte
	for len(buf) < size {
		pages, _, err := mt.Render("940", balanced(randomStatements(r, 1)), statement.Options{})
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range pages {
			if len(buf) > 0 && len(buf)+len(p) > size && size < 4096 {
				goto done
			}
			buf = append(buf, p...)
			buf = append(buf, "\r\n"...)
		}
	}
done:
	res, err := testEngine.Convert(engine.Request{Input: buf, From: "mt940", To: "camt.053"})
	if err != nil {
		b.Fatal(err)
	}
	return buf, []byte(res.Pages[0])
}

// BenchmarkConvert is the figure the 100 MB/s aim is about: a whole
// conversion through the engine (detect, parse, render, warnings), MB/s of
// input.
func BenchmarkConvert(b *testing.B) {
	for _, bs := range benchSizes {
		mt940, camt := crossInputs(b, bs.size)
		st, _, err := mt.Parse(mt940, statement.Options{})
		if err != nil {
			b.Fatal(err)
		}
		msgs := len(st) // MT messages in, camt statements out, and back
		for _, c := range []struct {
			name, from, to string
			in             []byte
		}{
			{"MT940toCamt053", "mt940", "camt.053", mt940},
			{"Camt053toMT940", "camt.053", "mt940", camt},
		} {
			b.Run(fmt.Sprintf("%s/%s/%dB", c.name, bs.name, len(c.in)), func(b *testing.B) {
				b.SetBytes(int64(len(c.in)))
				b.ReportAllocs()
				var out, warns int
				for b.Loop() {
					res, err := testEngine.Convert(engine.Request{Input: c.in, From: c.from, To: c.to})
					if err != nil {
						b.Fatal(err)
					}
					out, warns = 0, len(res.Warnings)
					for _, d := range res.Pages {
						out += len(d)
					}
				}
				b.ReportMetric(float64(out)/float64(len(c.in)), "out/in")
				b.ReportMetric(float64(warns), "warnings")
				b.ReportMetric(float64(msgs*b.N)/b.Elapsed().Seconds(), "msgs/s")
			})
		}
	}
}

// balanced sets each statement's closing balance to the opening balance
// plus its entries, as in a real statement: an unbalanced one costs a
// BALANCE_MISMATCH warning per statement, which real files do not have.
func balanced(stmts []*statement.Statement) []*statement.Statement {
	for _, s := range stmts {
		open, _ := s.Balance(statement.OpeningBooked)
		sum := open.Value
		if open.Mark == statement.Debit {
			sum = sum.Neg()
		}
		for _, e := range s.Entries {
			if e.Mark == statement.Debit {
				sum = sum.Sub(e.Value)
			} else {
				sum = sum.Add(e.Value)
			}
		}
		for i := range s.Balances {
			if b := &s.Balances[i]; b.Type == statement.ClosingBooked {
				b.Mark, b.Value = statement.Credit, sum
				if sum.IsNegative() {
					b.Mark, b.Value = statement.Debit, sum.Neg()
				}
			}
		}
	}
	return stmts
}

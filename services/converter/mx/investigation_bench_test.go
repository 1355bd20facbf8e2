package mx

import (
	"testing"

	"github.com/ledgerlane/platform/services/converter/engine"
)

// BenchmarkConvertInvestigation is a whole conversion through the engine
// (detection, parse, render, warnings) of a typical message of each
// exceptions and investigations family, both ways: an MT192, MT296, MT190
// and MT291 (investigation_test.go) and the camt each becomes.
func BenchmarkConvertInvestigation(b *testing.B) {
	eng := caseEngine()
	for _, c := range []struct{ name, mt, mtType, mx string }{
		{"MT192-camt.056", mt192, "MT192", typeCamt56},
		{"MT296-camt.029", mt296, "MT296", typeCamt29},
		{"MT190-camt.105", mt190, "MT190", typeCamt105},
		{"MT291-camt.106", mt291, "MT291", typeCamt106},
	} {
		res, err := eng.Convert(engine.Request{Input: []byte(c.mt), To: c.mx})
		if err != nil {
			b.Fatal(err)
		}
		for _, run := range []struct{ name, in, to string }{{c.name, c.mt, c.mx}, {c.mx + "-" + c.mtType, res.Pages[0], c.mtType}} {
			in := []byte(run.in)
			b.Run(run.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(in)))
				for b.Loop() {
					if _, err := eng.Convert(engine.Request{Input: in, To: run.to}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			})
		}
	}
}

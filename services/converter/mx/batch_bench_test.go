package mx

import (
	"testing"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/mt"
)

// Typical messages of the two families, as the CBPR+ samples have them: an
// MT101 of one transaction and an MT204 of one debit.
const (
	benchMT101 = "{1:F01BOFSGB2LXXXX0000000000}{2:O1010825221020NDEADKK2XXXX00000000002210200825N}{3:{121:7a562c67-ca16-48ba-b074-65581be6f001}}{4:\r\n" +
		":20:11FF99RR\r\n:28D:1/1\r\n:30:090327\r\n:21:REF501\r\n:21F:UKNOWIT1234\r\n:32B:USD90000,\r\n" +
		":50F:/9020123100\r\n1/FINPETROL INC.\r\n2/ANDRELAE SPINKATU 7\r\n3/FI/HELSINKI\r\n:57C://CP9999\r\n" +
		":59F:/756-857489-21\r\n1/SOFTEASE PC GRAPHICS\r\n2/34 BRENTWOOD ROAD\r\n3/US/SEAFORD, NEW YORK, 11246\r\n:70:/INV/19S95\r\n" +
		":77B:/BENEFRES/US\r\n//34 BRENTWOOD ROAD\r\n//SEAFORD, NEW YORK 11246\r\n:71A:SHA\r\n:25A:/9101000123\r\n-}"
	benchMT204 = "{1:F01BOFSGB2LXXXX0000000000}{2:O2040825221020NDEADKK2XXXX00000000002210200825N}{3:{121:7a562c67-ca16-48ba-b074-65581be6f001}}{4:\r\n" +
		":20:CDT-101\r\n:19:350000,\r\n:30:221020\r\n:57A:BANODKKK\r\n:58A:/65479512\r\nNDEADKK2XXX\r\n" +
		":20:pcs010bizmsgidr1\r\n:21:MANDATE123456\r\n:32B:DKK350000,\r\n:53A:/25698745\r\nCLYDGB2S\r\n-}"
)

// BenchmarkConvertBatch is a whole conversion through the engine
// (detection, parse, render, warnings) of a typical MT101 and MT204 and of
// the pain.001 and pacs.010 they become.
func BenchmarkConvertBatch(b *testing.B) {
	eng := engine.New(mt.BatchFormats(), BatchFormats())
	for _, c := range []struct{ mt, mx, in string }{{"MT101", "pain.001", benchMT101}, {"MT204", "pacs.010", benchMT204}} {
		res, err := eng.Convert(engine.Request{Input: []byte(c.in), To: c.mx})
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range []struct{ name, in, to string }{{c.mt + "-" + c.mx, c.in, c.mx}, {c.mx + "-" + c.mt, res.Pages[0], c.mt}} {
			in := []byte(d.in)
			b.Run(d.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(in)))
				for b.Loop() {
					if _, err := eng.Convert(engine.Request{Input: in, To: d.to}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			})
		}
	}
}

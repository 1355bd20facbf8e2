package mx

import (
	"testing"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/mt"
)

const benchMT103 = "{1:F01WPACAU2SXXXX0000000000}{2:I103DBSSSGSGXXXXN}{3:{121:174c245f-2682-4291-ad67-2a41e530cd27}}{4:\r\n" +
	":20:pacs8bizmsgidr01\r\n:23B:CRED\r\n:32A:200805SGD500000,\r\n:50F:/458756241\r\n1/Australian Submarine\r\n2/694 Mersey Rd\r\n3/AU/Adelaide\r\n" +
	":52A:WPACAU2S\r\n:56A:DBSSSGSG\r\n:57A:UOVBSGSG\r\n:59F:/985412687\r\n1/Agoda Company\r\n2/30 Cecil Street\r\n3/SG/Singapore\r\n" +
	":70:/ROC/E2E04044506271305\r\nInvoice 4711\r\n:71A:OUR\r\n-}"

// BenchmarkConvertPayment is a whole conversion through the engine
// (detection, parse, render, warnings) of one MT103 and of the pacs.008 it
// becomes.
func BenchmarkConvertPayment(b *testing.B) {
	eng := engine.New(mt.PaymentFormats(), PaymentFormats())
	res, err := eng.Convert(engine.Request{Input: []byte(benchMT103), To: "pacs.008"})
	if err != nil {
		b.Fatal(err)
	}
	pacs := res.Pages[0]
	for _, c := range []struct{ name, in, to string }{{"MT103-pacs.008", benchMT103, "pacs.008"}, {"pacs.008-MT103", pacs, "MT103"}} {
		in := []byte(c.in)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if _, err := eng.Convert(engine.Request{Input: in, To: c.to}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

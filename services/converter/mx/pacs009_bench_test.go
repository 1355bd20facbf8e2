package mx

import (
	"testing"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/mt"
)

const benchMT202COV = "{1:F01INGBROBUXXXX0000000000}{2:O2020905221020MYMBGB2LXXXX00000000002210200905N}{3:{119:COV}{121:174c245f-2682-4291-ad67-2a41e530cd27}}{4:\r\n" +
	":20:pacs9bizmsgidr01\r\n:21:pcs008bzmsgidr-1\r\n:32A:221020RON26546464,\r\n:52A:MYMBGB2LXXX\r\n:57A:RZBRROBUXXX\r\n:58A:GEBABEBBXXX\r\n" +
	":72:/INS/INGBROBUXXX\r\n:50F:/25698745\r\n1/Debtor Co\r\n2/High Street\r\n3/GB/Epping\r\n:52A:MYMBGB2LXXX\r\n:57A:GEBABEBBXXX\r\n" +
	":59F:/65479512\r\n1/Ardent Finance\r\n2/Main Street\r\n3/RO/Bucharest\r\n-}"

// BenchmarkConvertCover is a whole conversion through the engine of one
// MT202COV and of the pacs.009 COV it becomes.
func BenchmarkConvertCover(b *testing.B) {
	eng := engine.New(mt.PaymentFormats(), PaymentFormats())
	res, err := eng.Convert(engine.Request{Input: []byte(benchMT202COV), To: "pacs.009"})
	if err != nil {
		b.Fatal(err)
	}
	pacs := res.Pages[0]
	for _, c := range []struct{ name, in, to string }{{"MT202COV-pacs.009", benchMT202COV, "pacs.009"}, {"pacs.009-MT202COV", pacs, "MT202COV"}} {
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

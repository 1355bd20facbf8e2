package mx

import (
	"testing"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/mt"
)

// Typical messages of each cash management family, as the CBPR+ samples
// have them.
const (
	benchMT210 = "{1:F01NDEAFIHHXXXX0000000000}{2:O2100925221020OKOYFIHHXXXX00000000002210200925N}{4:\r\n" +
		":20:cmt057bizmsgidr\r\n:25:25698745\r\n:30:221025\r\n:21:ITM-021\r\n:32B:EUR125650,\r\n" +
		":50F:/NOTPROVIDED\r\n1/NT Asset Management\r\n2/50 Bank Street\r\n3/GB/London\r\n:56A:CITIGB2L\r\n-}"
	benchMT920 = "{1:F01ABNANL2AXXXX0000000000}{2:O9200725221020INGBROBUXXXX00000000002210200725N}{4:\r\n" +
		":20:3948\r\n:12:942\r\n:25:123-45678\r\n:34F:CHFD1000000,\r\n:34F:CHFC100000,\r\n-}"
	benchMT110 = "{1:F01RBSSGBKCXXXX0000000000}{2:O1100905221020MYMBGB2LXXXX00000000002210200905N}{4:\r\n" +
		":20:camt107bzmsgidr1\r\n:21:102145\r\n:30:221020\r\n:32B:GBP25250,\r\n:50F:/60779854\r\n1/Debtor Co\r\n2/High Street\r\n3/GB/Epping\r\n" +
		":59F:1/Ardent Finance\r\n2/Main Street\r\n3/GB/London\r\n-}"
	benchMT111 = "{1:F01RBSSGBKCXXXX0000000000}{2:O1111005221020MYMBGB2LXXXX00000000002210201005N}{4:\r\n" +
		":20:camt108bzmsgidr1\r\n:21:102145\r\n:30:221020\r\n:32B:GBP25250,\r\n:59:Ardent Finance\r\nMain Street\r\nGB/London\r\n:75:/RequestedByCustomer/\r\n-}"
	benchMT112 = "{1:F01MYMBGB2LXXXX0000000000}{2:O1121005221020RBSSGBKCXXXX00000000002210201005N}{4:\r\n" +
		":20:camt109bzmsgidr1\r\n:21:102145\r\n:30:221020\r\n:32B:GBP25250,\r\n:59:Ardent Finance\r\nMain Street\r\nGB/London\r\n:76:/Rejected/Payer Request\r\n-}"
)

// BenchmarkConvertCash is a whole conversion through the engine (detection,
// parse, render, warnings) of one message of each cash management family
// and of the camt it becomes.
func BenchmarkConvertCash(b *testing.B) {
	eng := engine.New(mt.CashFormats(), CashFormats())
	for _, c := range []struct{ mt, camt, in string }{
		{"MT210", "camt.057", benchMT210}, {"MT920", "camt.060", benchMT920}, {"MT110", "camt.107", benchMT110},
		{"MT111", "camt.108", benchMT111}, {"MT112", "camt.109", benchMT112},
	} {
		res, err := eng.Convert(engine.Request{Input: []byte(c.in), To: c.camt})
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range []struct{ name, in, to string }{{c.mt + "-" + c.camt, c.in, c.camt}, {c.camt + "-" + c.mt, res.Pages[0], c.mt}} {
			in := []byte(d.in)
			b.Run(d.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(in)))
				for b.Loop() {
					if _, err := eng.Convert(engine.Request{Input: in, To: d.to}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

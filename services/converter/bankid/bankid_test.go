package bankid

import "testing"

func TestParseIBAN(t *testing.T) {
	tests := []struct {
		in, country, bank, branch string
		valid, known              bool
	}{
		{"DE89 3704 0044 0532 0130 00", "DE", "37040044", "", true, true},
		{"gb29nwbk60161331926819", "GB", "NWBK", "601613", true, true},
		{"FR1420041010050500013M02606", "FR", "20041", "01005", true, true},
		{"IT60X0542811101000000123456", "IT", "05428", "11101", true, true},
		{"ES9121000418450200051332", "ES", "2100", "0418", true, true},
		{"NL91ABNA0417164300", "NL", "ABNA", "", true, true},
		{"CH9300762011623852957", "CH", "00762", "", true, true},
		{"DE89370400440532013001", "DE", "37040044", "", false, true}, // check digits
		{"DE8937040044053201300", "DE", "", "", false, true},          // one short
		{"BR1800360305000010009795493C1", "BR", "", "", true, false},  // valid, layout not in the table
		{"12345678901234567", "", "", "", false, false},
	}
	for _, tc := range tests {
		got := ParseIBAN(tc.in)
		if got.CountryCode != tc.country || got.BankCode != tc.bank || got.BranchCode != tc.branch || got.Valid != tc.valid || got.KnownCountry != tc.known {
			t.Errorf("ParseIBAN(%q) = %+v", tc.in, got)
		}
	}
}

// TestLayouts: every layout fits its length; a broken row would slice out
// of range.
func TestLayouts(t *testing.T) {
	for cc, l := range layouts {
		bban := l.length - 4
		if l.bankTo <= l.bankFrom || l.bankTo > bban || l.brTo > bban || l.brFrom > l.brTo {
			t.Errorf("%s: %+v", cc, l)
		}
	}
}

func TestParseBIC(t *testing.T) {
	tests := []struct {
		in                    string
		valid, test           bool
		inst, cc, loc, branch string
	}{
		{"DEUTDEFF", true, false, "DEUT", "DE", "FF", ""},
		{"deutdeff500", true, false, "DEUT", "DE", "FF", "500"},
		{"COBADEFFXXX", true, false, "COBA", "DE", "FF", ""},
		{"ABCDGB20", true, true, "ABCD", "GB", "20", ""},
		{"1234DE12", true, false, "1234", "DE", "12", ""},
		{"DEUT1EFF", false, false, "", "", "", ""},
		{"DEUTDE", false, false, "", "", "", ""},
		{"DEUTDEFF5", false, false, "", "", "", ""},
	}
	for _, tc := range tests {
		got := ParseBIC(tc.in)
		if got.Valid != tc.valid || got.Test != tc.test || got.Institution != tc.inst || got.CountryCode != tc.cc || got.Location != tc.loc || got.Branch != tc.branch {
			t.Errorf("ParseBIC(%q) = %+v", tc.in, got)
		}
	}
}

func FuzzParseIBAN(f *testing.F) {
	f.Add("DE89 3704 0044 0532 0130 00")
	f.Add("IT60X0542811101000000123456")
	f.Fuzz(func(t *testing.T, s string) {
		v := ParseIBAN(s)
		if v.Valid && !ValidIBAN(v.Value) {
			t.Fatalf("%q valid by ParseIBAN only", s)
		}
		_ = ParseBIC(s)
	})
}

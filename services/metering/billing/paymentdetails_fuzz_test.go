package billing_test

import (
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/metering/billing"
)

// The detail parsers take whatever a form sends: they never panic, what they
// accept is canonical (parsing it again gives it back) and only what they
// allow, and what they refuse names its field.

func FuzzParseCardNumber(f *testing.F) {
	for _, s := range []string{"4242 4242 4242 4242", "4242424242424241", "5555-5555-5555-4444", "", "4", "٤٢٤٢"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, brand, err := billing.ParseCardNumber(s)
		if err != nil {
			return
		}
		if len(d) < 12 || len(d) > 19 || strings.Trim(d, "0123456789") != "" || brand == "" {
			t.Fatalf("%q -> %q %q", s, d, brand)
		}
		if d2, _, err := billing.ParseCardNumber(d); err != nil || d2 != d {
			t.Fatalf("not canonical: %q -> %q %v", d, d2, err)
		}
	})
}

func FuzzParseIBAN(f *testing.F) {
	for _, s := range []string{"DE89 3704 0044 0532 0130 00", "gb82 west 1234 5698 7654 32", "DE88370400440532013000", "", "DE", "ÄÄ89"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		iban, err := billing.ParseIBAN(s)
		if err != nil {
			return
		}
		if len(iban) < 15 || len(iban) > 34 || strings.Trim(iban, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
			t.Fatalf("%q -> %q", s, iban)
		}
		if again, err := billing.ParseIBAN(iban); err != nil || again != iban {
			t.Fatalf("not canonical: %q -> %q %v", iban, again, err)
		}
	})
}

func FuzzParseBankNumbers(f *testing.F) {
	for _, s := range []string{"021000021", "021000022", "12-34-56", "12345678", "1234 5678 9012 3456 7", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, parse := range map[string]func(string) (string, error){
			"routing": billing.ParseRoutingNumber, "us account": billing.ParseUSAccountNumber,
			"sort code": billing.ParseSortCode, "uk account": billing.ParseUKAccountNumber,
		} {
			d, err := parse(s)
			if err != nil {
				continue
			}
			if d == "" || strings.Trim(d, "0123456789") != "" {
				t.Fatalf("%s: %q -> %q", name, s, d)
			}
			if again, err := parse(d); err != nil || again != d {
				t.Fatalf("%s: not canonical: %q -> %q %v", name, d, again, err)
			}
		}
	})
}

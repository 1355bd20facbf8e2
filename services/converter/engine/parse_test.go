package engine_test

import (
	"errors"
	"testing"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/statement"
)

func TestParse(t *testing.T) {
	camt, err := eng.Convert(engine.Request{Input: []byte(mt940), To: "camt.053"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, input, from, typ string
		entries                int
		err                    error
	}{
		{"MT940 detected", mt940, "", "MT940", 1, nil},
		{"MT940 named", mt940, "mt940", "MT940", 1, nil},
		{"camt.053 detected", camt.Pages[0], "", "camt.053", 1, nil},
		{"undetectable", "hello", "", "", 0, engine.ErrUndetectable},
		{"unknown source", mt940, "pdf", "", 0, engine.ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := eng.Parse([]byte(tt.input), tt.from, statement.Options{})
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("want %v, got %v", tt.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.DetectedType != tt.typ || len(p.Statements) != 1 || len(p.Statements[0].Entries) != tt.entries {
				t.Fatalf("parsed %s with %d statements", p.DetectedType, len(p.Statements))
			}
			e := p.Statements[0].Entries[0]
			if e.Mark != statement.Debit || e.Value.String() != "25.5" || e.BankReference != "BANKREF1" {
				t.Fatalf("entry %+v", e)
			}
		})
	}
	var pe *statement.ParseError
	if _, err := eng.Parse([]byte(":20:X\n:25:1\n:28C:1\n:60F:C991399EUR1,00\n-"), "MT940", statement.Options{}); !errors.As(err, &pe) {
		t.Fatalf("broken MT940: want a ParseError, got %v", err)
	}
}

package filefmt_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/filefmt"
	"github.com/ledgerlane/platform/services/converter/statement"
)

func TestParseCSV(t *testing.T) {
	signed := filefmt.CSVMapping{Date: "Date", Amount: "Amount", Currency: "USD", Description: "Memo", Counterparty: "Payee", Reference: "Id"}
	split := filefmt.CSVMapping{Date: "Booked", Debit: "Out", Credit: "In", CurrencyColumn: "Ccy", DateFormat: "mdy"}
	tests := []struct {
		name    string
		file    string
		m       filefmt.CSVMapping
		entries []string // "date mark amount currency ref"
		field   string   // a mapping fault's field, or the ParseError's column
		line    int
	}{
		{"signed amounts", "Date,Amount,Memo,Payee,Id\n2024-03-31,-12.50,Coffee,Cafe,A1\n2024-04-01,+100,Pay,,A2\n", signed,
			[]string{"2024-03-31 D 12.5 USD A1", "2024-04-01 C 100 USD A2"}, "", 0},
		{"BOM, spaces and quotes", "\ufeff Date , Amount,Memo,Payee,Id\n\"2024-03-31\", -1 ,\"a, b\",,\n", signed,
			[]string{"2024-03-31 D 1 USD "}, "", 0},
		{"debit and credit columns", "Booked,Out,In,Ccy\n03/31/2024,12.00,,eur\n04/01/2024,,5,EUR\n", split,
			[]string{"2024-03-31 D 12 EUR ", "2024-04-01 C 5 EUR "}, "", 0},
		{"negative debit is still money out", "Booked,Out,In,Ccy\n03/31/2024,-12.00,,EUR\n", split,
			[]string{"2024-03-31 D 12 EUR "}, "", 0},
		{"header only", "Date,Amount\n", filefmt.CSVMapping{Date: "Date", Amount: "Amount", Currency: "USD"}, nil, "", 0},

		{"no date column named", "a\n", filefmt.CSVMapping{Amount: "a", Currency: "USD"}, nil, "csv_mapping.date", 0},
		{"no amount named", "a\n", filefmt.CSVMapping{Date: "a", Currency: "USD"}, nil, "csv_mapping.amount", 0},
		{"amount and debit", "a\n", filefmt.CSVMapping{Date: "a", Amount: "a", Debit: "a", Currency: "USD"}, nil, "csv_mapping.amount", 0},
		{"no currency", "a\n", filefmt.CSVMapping{Date: "a", Amount: "a"}, nil, "csv_mapping.currency", 0},
		{"bad date format", "a\n", filefmt.CSVMapping{Date: "a", Amount: "a", Currency: "USD", DateFormat: "iso"}, nil, "csv_mapping.date_format", 0},
		{"bad delimiter", "a\n", filefmt.CSVMapping{Date: "a", Amount: "a", Currency: "USD", Delimiter: "|"}, nil, "csv_mapping.delimiter", 0},
		{"decimal mark equals delimiter", "a\n", filefmt.CSVMapping{Date: "a", Amount: "a", Currency: "USD", DecimalSeparator: ","}, nil, "csv_mapping.decimal_separator", 0},
		{"missing column", "Date,Amount\n", filefmt.CSVMapping{Date: "Date", Amount: "Betrag", Currency: "USD"}, nil, "csv_mapping.amount", 0},
		{"duplicate column", "Date,Date,Amount\n", filefmt.CSVMapping{Date: "Date", Amount: "Amount", Currency: "USD"}, nil, "csv_mapping.date", 0},

		{"empty file", "", signed, nil, "", 1},
		{"grouping separator refused", "Date,Amount,Memo,Payee,Id\n2024-03-31,\"1,234.50\",,,\n", signed, nil, "Amount", 2},
		{"exponent refused", "Date,Amount,Memo,Payee,Id\n2024-03-31,1e3,,,\n", signed, nil, "Amount", 2},
		{"impossible date", "Date,Amount,Memo,Payee,Id\n2024-02-30,1,,,\n", signed, nil, "Date", 2},
		{"year zero", "Date,Amount,Memo,Payee,Id\n0000-01-01,1,,,\n", signed, nil, "Date", 2},
		{"two-digit year", "Date,Amount,Memo,Payee,Id\n24-02-01,1,,,\n", signed, nil, "Date", 2},
		{"both debit and credit", "Booked,Out,In,Ccy\n03/31/2024,1,2,EUR\n", split, nil, "In", 2},
		{"neither debit nor credit", "Booked,Out,In,Ccy\n03/31/2024,,,EUR\n", split, nil, "Out", 2},
		{"bad currency", "Booked,Out,In,Ccy\n03/31/2024,1,,EURO\n", split, nil, "Ccy", 2},
		{"ragged row", "Date,Amount,Memo,Payee,Id\n2024-03-31,1\n", signed, nil, "", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stmts, err := filefmt.ParseCSV([]byte(tt.file), tt.m)
			if tt.field == "" && tt.line == 0 {
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, e := range stmts[0].Entries {
					ref := e.BankReference
					got = append(got, e.BookingDate.String()+" "+string(e.Mark)+" "+e.Value.String()+" "+e.Currency+" "+ref)
				}
				if strings.Join(got, "|") != strings.Join(tt.entries, "|") {
					t.Fatalf("entries\n got %q\nwant %q", got, tt.entries)
				}
				return
			}
			var fe *engine.FieldError
			var pe *statement.ParseError
			switch {
			case errors.As(err, &fe):
				if fe.Field != tt.field {
					t.Fatalf("field %q, want %q (%v)", fe.Field, tt.field, err)
				}
			case errors.As(err, &pe):
				if pe.Field != tt.field || pe.Line != tt.line {
					t.Fatalf("line %d field %q, want %d %q (%v)", pe.Line, pe.Field, tt.line, tt.field, err)
				}
			default:
				t.Fatalf("error %v, want a field or parse error", err)
			}
		})
	}
}

// FuzzParseCSV: no input panics, and whatever is read is a well-formed
// entry: a date that exists, a non-negative amount, a direction, a currency.
func FuzzParseCSV(f *testing.F) {
	f.Add("Date,Amount,Memo\n2024-03-31,-12.50,Coffee\n", ",", ".")
	f.Add("Date;Amount;Memo\n31.03.2024;-12,50;\"a;b\"\n", ";", ",")
	f.Add("Date,Amount\n\"2024-01-01\",\"1\n", ",", ".")
	f.Fuzz(func(t *testing.T, file, delim, mark string) {
		m := filefmt.CSVMapping{Date: "Date", Amount: "Amount", Description: "Memo", Currency: "EUR",
			Delimiter: delim, DecimalSeparator: mark}
		stmts, err := filefmt.ParseCSV([]byte(file), m)
		if err != nil {
			var fe *engine.FieldError
			var pe *statement.ParseError
			if !errors.As(err, &fe) && !errors.As(err, &pe) {
				t.Fatalf("unclassified error %T %v", err, err)
			}
			return
		}
		for _, e := range stmts[0].Entries {
			if e.BookingDate.IsZero() || e.Value.IsNegative() || (e.Mark != statement.Credit && e.Mark != statement.Debit) || e.Currency != "EUR" {
				t.Fatalf("bad entry %+v", e)
			}
		}
	})
}

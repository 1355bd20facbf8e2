// Package filefmt renders statements as the files accounting software
// imports: CSV (one row per entry), OFX 1.0.2 (SGML) and 2.2.0 (XML), and
// QBO (QuickBooks Web Connect: OFX 1.0.2 with an Intuit bank id). The
// choices each format makes are documented in docs/conversion-formats.md.
package filefmt

import (
	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// Warning codes this package emits; docs/conversion-warnings.md lists them.
const (
	CodeEntriesOnly        = "FILE_ENTRIES_ONLY"
	CodeTransliterated     = "FILE_TRANSLITERATED"
	CodeCharactersReplaced = "FILE_CHARACTERS_REPLACED"
	CodeNameTruncated      = "FILE_NAME_TRUNCATED"
	CodeMemoTruncated      = "FILE_MEMO_TRUNCATED"
	CodeBalanceMissing     = "FILE_BALANCE_MISSING"
	CodeFormulaEscaped     = "FILE_CSV_FORMULA_ESCAPED"
)

// sources are the statement types every file target is made from.
var sources = []string{"MT940", "MT950", "MT942", "camt.053", "camt.052"}

// Media types of the files.
const (
	MediaTypeCSV = "text/csv"
	MediaTypeOFX = "application/x-ofx"
	MediaTypeQBO = "application/vnd.intu.qbo"
)

// Formats is what this package adds to a conversion engine: the csv, ofx
// and qbo renderers. It has no parsers: the sources come from mt and mx.
func Formats() engine.FormatSet {
	return engine.FormatSet{Renderers: []engine.Renderer{{
		Type:      "csv",
		MediaType: MediaTypeCSV,
		Options:   []string{"dateFormat"},
		Accepts:   sources,
		Refuses:   statement.Refused(),
		Render: func(stmts []*statement.Statement, _ string, opts statement.Options) ([]string, []statement.Warning, error) {
			out, warns, err := RenderCSV(stmts, opts.DateFormat)
			if err != nil {
				return nil, nil, err
			}
			return []string{out}, warns, nil
		},
	}, {
		Type:      "ofx",
		MediaType: MediaTypeOFX,
		Options:   []string{"ofxVersion", "intuBid", "strict"},
		Accepts:   sources,
		Refuses:   statement.Refused(),
		Render: func(stmts []*statement.Statement, _ string, opts statement.Options) ([]string, []statement.Warning, error) {
			out, warns, err := RenderOFX(stmts, OFXOptions{Version: opts.OFXVersion, IntuBid: opts.IntuBid})
			if err != nil {
				return nil, nil, err
			}
			return []string{out}, warns, nil
		},
	}, {
		Type:      "qbo",
		MediaType: MediaTypeQBO,
		Options:   []string{"intuBid", "strict"},
		Accepts:   sources,
		Refuses:   statement.Refused(),
		Render: func(stmts []*statement.Statement, _ string, opts statement.Options) ([]string, []statement.Warning, error) {
			// QuickBooks refuses a Web Connect file without the bank id it
			// uses to pick the financial institution.
			if opts.IntuBid == "" {
				return nil, nil, &engine.FieldError{Field: "intuBid", Reason: "required for QBO output"}
			}
			out, warns, err := RenderOFX(stmts, OFXOptions{Version: "102", IntuBid: opts.IntuBid, QBO: true})
			if err != nil {
				return nil, nil, err
			}
			return []string{out}, warns, nil
		},
	}}}
}

// Package mt reads and writes the SWIFT MT statement messages MT940
// (customer statement), MT941 (balance report), MT942 (interim transaction
// report) and MT950 (statement message) over the neutral statement model;
// Formats gives them to the conversion engine. MT970 to MT973 are detected
// and refused by name (statement.Refused).
//
// Reading is tolerant the way a human reader is: bank header lines, bare
// block-4 text, lower-case marks, '.' decimal separators, fields broken over
// lines. Each tolerance is a warning with a stable code (see
// docs/conversion-warnings.md). Faults that leave a value unreadable are a
// *statement.ParseError naming the message, line and field.
//
// Writing produces full FIN messages:
//
//	{1:F01<sender LT>0000000000}{2:I9xx<receiver LT>N}{4:\r\n...\r\n-}
//
// The sender is the account servicer's BIC when known, otherwise
// DefaultBIC; the receiver is always DefaultBIC ("NOTPROVIDED", LT address
// NOTPROVIXDED), since the model does not know who receives the statement.
// Session and sequence numbers are zero. Texts are transliterated to the
// SWIFT X character set, and a statement whose block 4 exceeds 2,000
// characters is split into pages with :28C: sequence numbers and :60M:/:62M:
// intermediate balances.
//
// Two-digit years are read as 1980-2079.
package mt

import (
	"bytes"
	"strings"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// Formats is what this package adds to a conversion engine: MT940, MT941,
// MT942 and MT950 parsers and renderers (text/plain), MT970 to MT973
// parsers that refuse with the reason (every statement renderer refuses
// them by name), and the MT detector.
func Formats() engine.FormatSet {
	var set engine.FormatSet
	for _, t := range []string{"MT940", "MT942", "MT950"} {
		set.Parsers = append(set.Parsers, engine.Parser{
			Type: t,
			Parse: func(input []byte, _ string, opts statement.Options) ([]*statement.Statement, []statement.Warning, error) {
				// One reader serves all three: the fields present decide
				// each message's kind, whatever type the caller named.
				return Parse(input, opts)
			},
		})
	}
	// MT941 and the refused types name the type of a message that does not
	// say it itself (bare block 4 text): a balance report has no field of
	// its own that an MT940 could not have.
	for _, t := range []string{"MT941", "MT970", "MT971", "MT972", "MT973"} {
		set.Parsers = append(set.Parsers, engine.Parser{
			Type: t,
			Parse: func(input []byte, _ string, opts statement.Options) ([]*statement.Statement, []statement.Warning, error) {
				return parse(input, opts, t[2:])
			},
		})
	}
	opts := []string{"translitProfile", "field86Profile", "strict"}
	set.Renderers = []engine.Renderer{{
		Type: "MT940", MediaType: MediaType, Options: opts, Accepts: []string{"MT940", "MT950", "camt.053"},
		Render: func(s []*statement.Statement, _ string, o statement.Options) ([]string, []statement.Warning, error) {
			return Render("940", s, o)
		},
	}, {
		Type: "MT950", MediaType: MediaType, Options: []string{"translitProfile", "strict"}, Accepts: []string{"MT940", "MT950", "camt.053"},
		Render: func(s []*statement.Statement, _ string, o statement.Options) ([]string, []statement.Warning, error) {
			return Render("950", s, o)
		},
	}, {
		Type: "MT942", MediaType: MediaType, Options: opts, Accepts: []string{"MT942", "camt.052"},
		Render: func(s []*statement.Statement, _ string, o statement.Options) ([]string, []statement.Warning, error) {
			return Render("942", s, o)
		},
	}, {
		// A camt.052 with entries is refused: MT941 carries balances only.
		Type: "MT941", MediaType: MediaType, Options: []string{"translitProfile", "strict"}, Accepts: []string{"MT941", "camt.052"},
		Render: func(s []*statement.Statement, _ string, o statement.Options) ([]string, []statement.Warning, error) {
			return Render("941", s, o)
		},
	}}
	for i := range set.Renderers {
		set.Renderers[i].Refuses = statement.Refused()
	}
	set.Detectors = []engine.Detector{Detect}
	return set
}

// PaymentFormats is what this package adds to a conversion engine for the
// payment model: the MT103, MT202, MT205 (and COV), MT900, MT910, MT199 and
// MT299 parsers and renderers, the MT200 parser and the MT payment detector,
// which must be tried before the statement detector (bare block 4 text of
// an MT103 also starts with :20:).
func PaymentFormats() engine.FormatSet {
	set := engine.FormatSet{Parsers: paymentParsers(PaymentTypes, ParsePayments)}
	set.Renderers = []engine.Renderer{paymentRenderer("103", []string{"MT103", "pacs.008", "pacs.004", "pacs.002"}, RenderPayments)}
	// MT202 and MT205 write the COV variant for a cover payment (pacs.009
	// with UndrlygCstmrCdtTrf); MT202COV and MT205COV refuse any other.
	for _, t := range []string{"MT202", "MT202COV", "MT205", "MT205COV"} {
		fi := []string{"MT202", "MT202COV", "MT205", "MT205COV", "pacs.009"}
		if !strings.HasSuffix(t, "COV") {
			// a return (/RETN/ in :72:) and a reject (/REJT/)
			fi = append(fi, "pacs.004", "pacs.002")
		}
		if strings.HasSuffix(t, "COV") {
			fi = []string{"MT202COV", "MT205COV", "pacs.009"} // a core MT202/205 is never a cover
		}
		set.Renderers = append(set.Renderers, paymentRenderer(t[2:], fi, RenderPayments))
	}
	// MT900 and MT910 confirm a debit and a credit (camt.054).
	for _, t := range []string{"MT900", "MT910"} {
		set.Renderers = append(set.Renderers, paymentRenderer(t[2:], []string{t, "camt.054"}, RenderPayments))
	}
	// MT199 and MT299 carry a status, a reject (/REJT/ in :79:) or a gpi
	// status confirmation: pacs.002.
	for _, t := range []string{"MT199", "MT299"} {
		set.Renderers = append(set.Renderers, paymentRenderer(t[2:], []string{"MT199", "MT299", "pacs.002"}, RenderPayments))
	}
	set.Detectors = []engine.Detector{DetectPayment}
	return set
}

// paymentParsers are the engine's parsers of types (MT names), each
// reading its type with parse.
func paymentParsers(types []string, parse func(input []byte, typ string) ([]*payment.Payment, []statement.Warning, error)) []engine.Parser {
	out := make([]engine.Parser, 0, len(types))
	for _, t := range types {
		out = append(out, engine.Parser{
			Type: t,
			ParsePayments: func(input []byte, _ string, _ statement.Options) ([]*payment.Payment, []statement.Warning, error) {
				return parse(input, t)
			},
		})
	}
	return out
}

// paymentRenderer is the engine's renderer of MT typ ("103") that takes the
// payments of the types accepts names and writes them with render.
func paymentRenderer(typ string, accepts []string, render func(typ string, ps []*payment.Payment, opts statement.Options) ([]string, []statement.Warning, error)) engine.Renderer {
	return engine.Renderer{
		Type: "MT" + typ, MediaType: MediaType, Options: []string{"translitProfile", "strict"}, Accepts: accepts,
		RenderPayments: func(ps []*payment.Payment, _ string, o statement.Options) ([]string, []statement.Warning, error) {
			return render(typ, ps, o)
		},
	}
}

// MediaType is what MT output is served as: FIN text.
const MediaType = "text/plain"

// detectWindow bounds how far the detector looks for the first MT field;
// bank headers before it are a few lines at most.
const detectWindow = 4096

// Detect recognises MT940/MT941/MT942/MT950, and MT970 to MT973 to be
// refused by name. The type comes from block 2 ({2:I940…} or {2:O940…}, or
// a bank header line "940"), else from the fields: :34F: makes an MT942;
// without any :61:, a :90D:, :90C: or :13D: makes an MT941 (balance
// report); :13D: with entries an MT942; otherwise MT940, since MT950 has no
// field of its own and is only chosen when block 2 says so. MT970 to MT973
// are known by block 2 alone: their block 4 looks like an MT940's.
func Detect(input []byte) (typ, version string, ok bool) {
	head := input
	if len(head) > detectWindow {
		head = head[:detectWindow]
	}
	trimmed := bytes.TrimLeft(head, " \t\r\n\x01\x02\ufeff")
	if len(trimmed) > 0 && trimmed[0] == '<' {
		return "", "", false // XML (MX) may quote MT text; it is never MT itself
	}
	if i := bytes.Index(head, []byte("{2:")); i >= 0 && len(head) >= i+7 && (head[i+3] == 'I' || head[i+3] == 'O') {
		switch string(head[i+4 : i+7]) {
		case "940":
			return "MT940", "", true
		case "941":
			return "MT941", "", true
		case "942":
			return "MT942", "", true
		case "950":
			return "MT950", "", true
		case "970", "971", "972", "973":
			return "MT" + string(head[i+4:i+7]), "", true
		}
		return "", "", false // an MT of another type (MT103, …)
	}
	if !bytes.HasPrefix(trimmed, []byte("{1:")) && !bytes.HasPrefix(trimmed, []byte("{4:")) &&
		!hasLinePrefix(head, ":20:") && !hasLinePrefix(head, ":25:") && !hasLinePrefix(head, ":60F:") && !hasLinePrefix(head, ":61:") {
		return "", "", false
	}
	// One pass over the whole input for the fields that decide the type,
	// rather than one search per field: this runs on every MT conversion.
	tags := statementTags(input)
	if tags&tag34F != 0 {
		return "MT942", "", true
	}
	if tags&(tag90D|tag90C|tag13D) != 0 {
		if tags&tag61 == 0 {
			return "MT941", "", true
		}
		if tags&tag13D != 0 {
			return "MT942", "", true
		}
	}
	// The first eight lines (the eighth is the rest, as bytes.SplitN would
	// leave it), read in place: this runs on every MT conversion.
	rest := head
	for n := 0; n < 8 && rest != nil; n++ {
		l := rest
		rest = nil
		if i := bytes.IndexByte(l, '\n'); i >= 0 && n < 7 {
			l, rest = l[:i], l[i+1:]
		}
		switch headerTypeBytes(bytes.TrimSpace(l)) {
		case "941":
			return "MT941", "", true
		case "942":
			return "MT942", "", true
		case "950":
			return "MT950", "", true
		}
	}
	return "MT940", "", true
}

// headerTypeBytes is headerType of a line still in the input's bytes,
// without making a string of it.
func headerTypeBytes(t []byte) string {
	t = bytes.Trim(t, ": ")
	if len(t) >= 3 && (len(t) == 3 || t[3] == ' ') {
		switch string(t[:3]) {
		case "940":
			return "940"
		case "941":
			return "941"
		case "942":
			return "942"
		case "950":
			return "950"
		}
	}
	return ""
}

// The fields statementTags looks for, as bits.
const (
	tag34F = 1 << iota
	tag90D
	tag90C
	tag13D
	tag61
)

// statementTags reports which of :34F:, :90D:, :90C:, :13D: and :61: start
// a line of b (at its start or after a line feed), as hasLinePrefix would
// for each, in one pass.
func statementTags(b []byte) int {
	tags := 0
	for {
		if len(b) >= 4 && b[0] == ':' {
			switch {
			case b[1] == '6' && b[2] == '1' && b[3] == ':':
				tags |= tag61
			case len(b) >= 5 && b[4] == ':':
				switch string(b[1:4]) {
				case "34F":
					tags |= tag34F
				case "90D":
					tags |= tag90D
				case "90C":
					tags |= tag90C
				case "13D":
					tags |= tag13D
				}
			}
		}
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return tags
		}
		b = b[i+1:]
	}
}

// hasLinePrefix reports whether some line of b starts with p.
func hasLinePrefix(b []byte, p string) bool {
	if bytes.HasPrefix(b, []byte(p)) {
		return true
	}
	return bytes.Contains(b, []byte("\n"+p))
}

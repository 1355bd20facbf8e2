package statement

import (
	"fmt"
	"strings"
)

// Severity of a warning.
const (
	SeverityInfo    = "info"    // tolerated input, nothing lost
	SeverityWarning = "warning" // something was changed or could not be carried
)

// Warning is a structured, non-fatal finding. Code is stable and listed in
// docs/conversion-warnings.md; Lossy marks warnings that strict=true turns
// into a 422.
type Warning struct {
	Code     string
	Severity string
	Message  string
	Path     string // where: "message 1, line 12, field :61:" or an XPath-like MX path
	Line     int    // 1-based line of the input, when the finding has one (MT input)
	Lossy    bool
	// Invalid marks a finding that breaks a rule of the message's network
	// (a SWIFT network validated rule): the message still converts, but
	// Validate reports it as an error.
	Invalid bool
}

// ParseError is a fatal input error. It names the message (1-based), line
// (1-based) and field so a user can find the fault in their file.
type ParseError struct {
	Message int
	Line    int
	Field   string // ":61:", "Stmt/Bal/Amt", …
	Reason  string
}

func (e *ParseError) Error() string {
	var b strings.Builder
	if e.Message > 0 {
		fmt.Fprintf(&b, "message %d, ", e.Message)
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d, ", e.Line)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, "field %s: ", e.Field)
	}
	b.WriteString(e.Reason)
	return b.String()
}

// Options are the conversion options of the API, already validated.
type Options struct {
	TranslitProfile string // "base" (default) or "german"
	Field86Profile  string // "plain" (default), "sepa" or "german"
	Strict          bool
	TargetVersion   string // e.g. "camt.053.001.08"; empty means the renderer's default
	DateFormat      string // "dmy", "mdy", "ymd" (CSV)
	OFXVersion      string // "102" or "220"
	IntuBid         string // digits (QBO/OFX)
}

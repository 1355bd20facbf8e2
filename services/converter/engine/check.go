package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// Codes of the findings Validate and Normalize add to the parsers' own
// (docs/conversion-warnings.md lists them all).
const (
	// CodeInvalidMessage: the parser cannot read the message; the finding
	// names the message, line and field as a ParseError does.
	CodeInvalidMessage = "INVALID_MESSAGE"
	// CodeVersionChanged: Normalize wrote a version other than the input's,
	// which the renderer does not write.
	CodeVersionChanged = "NORMALIZED_VERSION_CHANGED"
)

// SeverityError marks a Validate finding that makes the message invalid.
const SeverityError = "error"

// Issue is one finding of Validate.
type Issue struct {
	Code     string
	Severity string // "error", or the warning's own severity
	Message  string
	Path     string
	Line     int // 1-based; 0 when the finding has no single line
}

// Validation is what Validate found.
type Validation struct {
	Valid           bool
	DetectedType    string
	DetectedVersion string
	Errors          []Issue
	Warnings        []Issue
}

// Validate reads input as from (detected when empty) without converting it.
// A fault the parser cannot read past makes the message invalid; what it
// tolerated is a warning, and with opts.Strict a lossy one is an error too,
// as it would fail a strict conversion. Only an unknown or undetectable
// source is an error return: an invalid message is a finding.
func Validate(input []byte, from string, opts statement.Options) (*Validation, error) {
	p, version, err := source(input, from)
	if err != nil {
		return nil, err
	}
	v := &Validation{DetectedType: p.Type, DetectedVersion: version}
	_, warns, err := p.Parse(input, version, opts)
	var pe *statement.ParseError
	switch {
	case errors.As(err, &pe):
		msg := pe.Reason
		if pe.Message > 0 {
			msg = fmt.Sprintf("message %d: %s", pe.Message, msg)
		}
		v.Errors = append(v.Errors, Issue{Code: CodeInvalidMessage, Severity: SeverityError, Message: msg, Path: pe.Field, Line: pe.Line})
	case err != nil:
		return nil, err
	}
	for _, w := range warns {
		is := Issue{Code: w.Code, Severity: w.Severity, Message: w.Message, Path: w.Path, Line: w.Line}
		if opts.Strict && w.Lossy {
			is.Severity = SeverityError
			v.Errors = append(v.Errors, is)
			continue
		}
		v.Warnings = append(v.Warnings, is)
	}
	v.Valid = len(v.Errors) == 0
	return v, nil
}

// Normalize rewrites input in its own format and returns it as Convert
// would: MT as FIN messages with CRLF line ends, the X character set and
// pages of at most 2,000 characters; camt in the schema's element order.
// opts.TargetVersion pins the version; otherwise the input's own version is
// kept where the renderer writes it, and the renderer's default is used,
// with a NORMALIZED_VERSION_CHANGED warning, where it does not.
func Normalize(input []byte, from string, opts statement.Options) (*Result, error) {
	p, version, err := source(input, from)
	if err != nil {
		return nil, err
	}
	mu.RLock()
	r, ok := renderers[strings.ToLower(p.Type)]
	mu.RUnlock()
	if !ok || !accepts(r, p.Type) {
		return nil, fmt.Errorf("%w: %s cannot be written back", ErrUnsupported, p.Type)
	}
	changed := false
	if opts.TargetVersion == "" && version != "" {
		if contains(r.Versions, version) {
			opts.TargetVersion = version
		} else {
			changed = len(r.Versions) > 0
		}
	}
	res, err := Convert(Request{Input: input, From: p.Type, To: p.Type, Options: opts})
	if err != nil {
		return nil, err
	}
	if changed {
		res.Warnings = append(res.Warnings, statement.Warning{
			Code: CodeVersionChanged, Severity: statement.SeverityInfo,
			Message: fmt.Sprintf("%s is read but not written; the message was normalized to %s", version, res.TargetVersion),
		})
	}
	return res, nil
}

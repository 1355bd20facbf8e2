package engine

import (
	"fmt"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// Parsed is what Parse read: the statements of a file and how it was read.
type Parsed struct {
	Statements      []*statement.Statement
	Warnings        []statement.Warning
	DetectedType    string
	DetectedVersion string
}

// Parse reads input as from (detected when empty) into the statement model
// without rendering anything: the finance service's statement import reads
// entries this way, so the converter stays the one place that parses
// statement formats. A source of the payment model (pacs.008, MT103, …) is
// ErrUnsupported: it carries no statement entries.
func (e *Engine) Parse(input []byte, from string, opts statement.Options) (*Parsed, error) {
	p, version, err := e.source(input, from)
	if err != nil {
		return nil, err
	}
	if p.Parse == nil {
		return nil, fmt.Errorf("%w: %s is a payment message, not a statement", ErrUnsupported, p.Type)
	}
	stmts, warns, err := p.Parse(input, version, opts)
	if err != nil {
		return nil, err
	}
	return &Parsed{Statements: stmts, Warnings: warns, DetectedType: p.Type, DetectedVersion: version}, nil
}

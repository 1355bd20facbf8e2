// Package builtin lists the formats the converter ships: MT (mt), ISO 20022
// camt (mx) and the accounting files CSV, OFX and QBO (filefmt). Engine
// builds the conversion engine the converter service and mtconvert run.
package builtin

import (
	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/filefmt"
	"github.com/ledgerlane/platform/services/converter/mt"
	"github.com/ledgerlane/platform/services/converter/mx"
)

// Formats returns every shipped format set, MT first: its detector is tried
// before the camt one.
func Formats() []engine.FormatSet {
	return []engine.FormatSet{mt.Formats(), mx.Formats(), filefmt.Formats()}
}

// Engine returns an engine over Formats.
func Engine() *engine.Engine { return engine.New(Formats()...) }

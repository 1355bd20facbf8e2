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

// Formats returns every shipped format set, MT first: its detectors are
// tried before the MX ones, and the MT payment detector before the statement
// one (bare block 4 text of both starts with :20:). The payment sets put the
// payment model (MT103 ⇄ pacs.008) beside the statement model; the returns
// set adds pacs.004 (MT103/MT202/MT205 with /RETN/). The cash management
// sets (MT210, MT920, MT110/111/112 ⇄ camt.057, camt.060, camt.107/108/109)
// come first: bare block 4 text of an MT110 has the fields of an MT103. The
// exceptions and investigations sets (MTn90/n91/n92/n95/n96 ⇄ camt.105,
// camt.106, camt.056, camt.029; camt.026 refused) come before the payment
// sets: an n92 may carry a copy of an MT103's fields. MT101 and MT204 (⇄
// pain.001, pacs.010) come before all: their bare block 4 text has a :30:
// before the first :21:, which the cash detector takes for an MT210.
func Formats() []engine.FormatSet {
	return []engine.FormatSet{mt.BatchFormats(), mt.CashFormats(), mt.InvestigationFormats(), mt.PaymentFormats(), mt.Formats(), mx.BatchFormats(), mx.CashFormats(), mx.InvestigationFormats(), mx.PaymentFormats(), mx.ReturnFormats(), mx.Formats(), filefmt.Formats()}
}

// Engine returns an engine over Formats.
func Engine() *engine.Engine { return engine.New(Formats()...) }

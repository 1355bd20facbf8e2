// Package mx reads and writes the ISO 20022 cash management statements:
// camt.053 (bank to customer statement) and camt.052 (account report), in
// versions .001.02 and .001.08 and, for reading, the versions in between and
// after whose elements we read are unchanged. Formats gives its parsers,
// renderers and detector to the conversion engine.
package mx

import (
	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// Warning codes this package emits; docs/conversion-warnings.md lists them.
const (
	CodeBalanceDropped       = "MX_BALANCE_DROPPED"
	CodeStructuredRemittance = "MX_STRUCTURED_REMITTANCE"
	CodeEntryStatus          = "MX_ENTRY_STATUS"
	CodeEntryDateDefaulted   = "MX_ENTRY_DATE_DEFAULTED"
	CodeBatchDetails         = "MX_BATCH_DETAILS"
	CodeVersionUntested      = "MX_VERSION_UNTESTED"
	CodeTruncated            = "MX_TEXT_TRUNCATED"
	CodePaginationDropped    = "MX_PAGINATION_DROPPED"
	CodeSequenceDropped      = "MX_SEQUENCE_NUMBER_DROPPED"
	CodeRelatedRefDropped    = "MX_RELATED_REFERENCE_DROPPED"
	CodeFloorLimitDropped    = "MX_FLOOR_LIMIT_DROPPED"
	CodeAccountMissing       = "MX_ACCOUNT_MISSING"
	CodeBICDropped           = "MX_BIC_DROPPED"
	CodeAmountRounded        = "MX_AMOUNT_ROUNDED"
	CodeFundsCodeDropped     = "MX_FUNDS_CODE_DROPPED"
	CodeGermanDropped        = "MX_POSTING_TEXT_DROPPED"
	CodeCounterpartyAccount  = "MX_COUNTERPARTY_ACCOUNT_DROPPED"
	CodePageZero             = "MX_PAGE_NUMBER_ZERO"
	CodeHeaderDefaulted      = "MX_HEADER_DEFAULTED"
	// CodeBalanceMarking: a :60M:/:62M: (or :60F:/:62F:) marking that camt's
	// pagination cannot state as the model has it.
	CodeBalanceMarking = "BALANCE_MARKING_CHANGED"
	// CodeBalanceMismatch is the MT reader's BALANCE_MISMATCH: one code for
	// the same finding whatever the source.
	CodeBalanceMismatch = "BALANCE_MISMATCH"
)

// The versions we have checked element by element against the schemas; other
// .001.NN versions of the same messages are read with an info warning.
var (
	readVersions053 = []string{"camt.053.001.02", "camt.053.001.03", "camt.053.001.04", "camt.053.001.08"}
	readVersions052 = []string{"camt.052.001.02", "camt.052.001.03", "camt.052.001.04", "camt.052.001.08"}
)

// Sources each target accepts. MT types come from package mt; an engine's
// Formats lists a pair only when it has both sides.
var (
	accepts053 = []string{"MT940", "MT950", "camt.053"}
	accepts052 = []string{"MT942", "MT941", "camt.052"}
)

// MediaType is what camt output is served as.
const MediaType = "application/xml"

// Formats is what this package adds to a conversion engine: camt.053 and
// camt.052 parsers, renderers (application/xml; camt.052 also from an MT941
// balance report, MT970 to MT973 refused by name) and the camt detector.
func Formats() engine.FormatSet {
	var set engine.FormatSet
	for _, typ := range []string{typeCamt3, typeCamt2} {
		known := readVersions053
		acc := accepts053
		if typ == typeCamt2 {
			known, acc = readVersions052, accepts052
		}
		set.Parsers = append(set.Parsers, engine.Parser{
			Type:     typ,
			Versions: known,
			Parse: func(input []byte, version string, opts statement.Options) ([]*statement.Statement, []statement.Warning, error) {
				stmts, warns, err := Parse(input, typ, opts)
				if err == nil && version != "" && !contains(known, version) {
					warns = append(warns, statement.Warning{Code: CodeVersionUntested, Severity: statement.SeverityInfo,
						Path: "Document", Message: version + " read with the element paths of " + known[len(known)-1]})
				}
				return stmts, warns, err
			},
		})
		set.Renderers = append(set.Renderers, engine.Renderer{
			Type:           typ,
			MediaType:      MediaType,
			Versions:       []string{typ + ".001.02", typ + ".001.08"},
			DefaultVersion: typ + ".001.08",
			Options:        []string{"strict", "targetVersion"},
			Accepts:        acc,
			Refuses:        statement.Refused(),
			Render: func(stmts []*statement.Statement, version string, opts statement.Options) ([]string, []statement.Warning, error) {
				doc, warns, err := Render(stmts, typ, version)
				if err != nil {
					return nil, nil, err
				}
				return []string{doc}, warns, nil
			},
		})
	}
	set.Detectors = []engine.Detector{Detect}
	set.HeadDetectors = []engine.HeadDetector{detectHead}
	return set
}

// PaymentFormats is what this package adds to a conversion engine for the
// payment model: the pacs.008, pacs.009 and camt.054 parsers and renderers (an Envelope with the
// head.001.001.02 AppHdr and the Document) and the pacs detector.
func PaymentFormats() engine.FormatSet {
	var set engine.FormatSet
	for _, typ := range []string{typePacs8, typePacs9, typeCamt54, typePacs2} {
		known := pacsReadVersions[typ]
		set.Parsers = append(set.Parsers, engine.Parser{
			Type:     typ,
			Versions: known,
			ParsePayments: func(input []byte, version string, _ statement.Options) ([]*payment.Payment, []statement.Warning, error) {
				return ParsePayments(input, typ, version)
			},
		})
	}
	set.Renderers = []engine.Renderer{
		paymentRenderer(typePacs8, []string{typePacs8 + ".001.08"}, []string{"MT103", typePacs8}, RenderPayments),
		paymentRenderer(typePacs9, []string{typePacs9 + ".001.08"}, []string{"MT200", "MT202", "MT202COV", "MT205", "MT205COV", typePacs9}, RenderPayments),
		paymentRenderer(typeCamt54, []string{typeCamt54 + ".001.08"}, []string{"MT900", "MT910", typeCamt54}, RenderPayments),
		paymentRenderer(typePacs2, []string{typePacs2 + ".001.10"}, []string{"MT199", "MT299", "MT103", "MT202", "MT205", typePacs2}, RenderPayments),
	}
	set.Detectors = []engine.Detector{DetectPayment}
	set.HeadDetectors = []engine.HeadDetector{detectPaymentHead}
	return set
}

// paymentRenderer is the engine's renderer of typ at versions (the first
// the default), which takes the payments of the types accepts names and
// writes each as an Envelope with render.
func paymentRenderer(typ string, versions, accepts []string, render func(ps []*payment.Payment, typ, version string) ([]string, []statement.Warning, error)) engine.Renderer {
	return engine.Renderer{
		Type:           typ,
		MediaType:      MediaType,
		Versions:       versions,
		DefaultVersion: versions[0],
		Options:        []string{"strict", "targetVersion"},
		Accepts:        accepts,
		RenderPayments: func(ps []*payment.Payment, version string, _ statement.Options) ([]string, []statement.Warning, error) {
			return render(ps, typ, version)
		},
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

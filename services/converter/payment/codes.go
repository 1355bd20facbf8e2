package payment

import (
	"fmt"
	"strconv"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// Warning codes of the payment readers and writers (mt and mx). They are
// part of the API and listed in docs/conversion-warnings.md ("## Payments");
// a test keeps the two in step.
const (
	CodeTruncated           = "PAY_TRUNCATED"
	CodeTransliterated      = "PAY_TRANSLITERATED"
	CodeFieldDropped        = "PAY_FIELD_DROPPED"
	CodeCodeMapped          = "PAY_CODE_MAPPED"
	CodeAddressUnstructured = "PAY_ADDRESS_UNSTRUCTURED"
	CodeAddressHybrid       = "PAY_ADDRESS_HYBRID"
	CodeAgentDefaulted      = "PAY_AGENT_DEFAULTED"
	CodeUETRGenerated       = "PAY_UETR_GENERATED"
	CodeHeaderDefaulted     = "PAY_HEADER_DEFAULTED"
	CodeEndToEndDefaulted   = "PAY_END_TO_END_DEFAULTED"
	CodeValidationFlag      = "PAY_VALIDATION_FLAG"
	CodeVersionUntested     = "PAY_VERSION_UNTESTED"
	CodeSplit               = "PAY_SPLIT"
	CodeFieldDefaulted      = "PAY_FIELD_DEFAULTED"
	CodeAddressFlattened    = "PAY_ADDRESS_FLATTENED"
	CodeNonstandard         = "PAY_NONSTANDARD_VALUE"
	CodeUnknownField        = "PAY_UNKNOWN_FIELD"
	CodeDuplicateField      = "PAY_DUPLICATE_FIELD"
	// CodeMT101Multiple is lossy although nothing is cut: strict refuses
	// what is lossy, and a strict client must not get an MT101 the network
	// will refuse.
	CodeMT101Multiple = "PAY_MT101_MULTIPLE_TRANSACTIONS"
	// Network validated rules of MT103 and MT202/205 (SWIFT's error codes):
	// the message converts, but Validate reports them as errors.
	CodeRuleD75 = "PAY_RULE_D75"
	CodeRuleE13 = "PAY_RULE_E13"
	CodeRuleD50 = "PAY_RULE_D50"
	CodeRuleE15 = "PAY_RULE_E15"
	CodeRuleE01 = "PAY_RULE_E01"
	CodeRuleE02 = "PAY_RULE_E02"
	CodeRuleE06 = "PAY_RULE_E06"
	CodeRuleC81 = "PAY_RULE_C81"
	CodeRuleT26 = "PAY_RULE_T26"
	CodeRuleC06 = "PAY_RULE_C06"
)

// CodeInfo is what a code means.
type CodeInfo struct {
	Severity string
	Lossy    bool
	Meaning  string
	// Invalid: the finding breaks a network rule (statement.Warning.Invalid).
	Invalid bool
}

// Codes is the one table of the payment warning codes; docs and tests read it.
var Codes = map[string]CodeInfo{
	CodeTruncated:           {statement.SeverityWarning, true, "A value was longer than its target field (MT 16x references, 4 x 35 names and addresses, :70: 4 x 35, :72: 6 x 35; MX Max35Text/Max140Text) and was cut; MT output marks the cut with '+' as its last character. One warning per cut, naming the source path, the target field, the original and the kept length.", false},
	CodeTransliterated:      {statement.SeverityWarning, true, "Characters outside the SWIFT X character set were transliterated (translitProfile); the message gives the count of replaced characters.", false},
	CodeFieldDropped:        {statement.SeverityWarning, true, "Information the target has no place for was left out (e.g. MT :13C:, :51A:, :23B: other than CRED, 50F line 8/, option B locations; MX structured remittance, Ustrd beyond the first that do not fit, a second category purpose, PmtTpInf codes MT cannot carry; pacs.009 DbtrAgt and Purp, an InstdRmbrsmntAgt for an MT205, which has no :54a:; returns: /RETN/nn naming a field, :70:, :77B:, :23E: and :72: codes other than the return lines (pacs.004 has no place), pacs.004 ChrgsInf for an MT202/205 return (no :71F:/:71G:) and CompstnAmt, RtrChain accounts, OrgnlGrpInf beside /MREF/, RtrId other than MsgId, a party as debtor or creditor of an MT202/205 return; statuses: the rejected transfer's intermediary, settlement agents, instructed amount, charges and texts of an MT103/202/205 /REJT/ in pacs.002, OrgnlTxRef (amount, date, parties) and AccptncDtTm of a reject in MT199/299, OrgnlEndToEndId, OrgnlMsgNmId and an OrgnlMsgId other than :21: in a gpi status confirmation).", false},
	CodeCodeMapped:          {statement.SeverityWarning, true, "A code has no exact equivalent in the target and was mapped to the nearest (ChrgBr SLEV → :71A: SHA; a pacs.004 RtrChain debtor or creditor that is an agent (Agt) written as the MT103 party :50A:/:59A: with its BIC).", false},
	CodeAddressUnstructured: {statement.SeverityWarning, false, "A party's postal address has only unstructured lines (no town and country). From November 2026 CBPR+ refuses such addresses; the lines were kept as they are.", false},
	CodeAddressHybrid:       {statement.SeverityInfo, false, "Town and country were read from the last line of a party's D-option or :50K:/:59: address because it has the unambiguous form CC/Town with a known ISO country code (hybrid address); the other lines stay AdrLine.", false},
	CodeAgentDefaulted:      {statement.SeverityInfo, false, "A mandatory MX agent absent from the MT was set as CBPR+ translation does: DbtrAgt to the sender (no :52a:), CdtrAgt to the receiver (no :57a:), InstgAgt and InstdAgt to the sender and receiver; in pacs.009 Dbtr to the sender (no :52a:), and in UndrlygCstmrCdtTrf DbtrAgt and CdtrAgt to the cover's Dbtr and Cdtr (no :52a:/:57a: in sequence B).", false},
	CodeUETRGenerated:       {statement.SeverityWarning, false, "The MT had no UETR (block 3 field 121), which pacs.008 and pacs.009 under CBPR+ require: a new UUID v4 was generated. Match the payment on its references, not the UETR.", false},
	CodeHeaderDefaulted:     {statement.SeverityInfo, false, "The MX input had no business application header (or no BIC in it): the MT blocks 1 and 2 take the instructing and instructed agents, else the placeholder NOTPROVIDED; the MX output's header takes the MT's blocks or the agents.", false},
	CodeEndToEndDefaulted:   {statement.SeverityInfo, false, "The MT carried no end-to-end reference (:70: /ROC/ for MT103, :21: for MT202/205): EndToEndId is NOTPROVIDED, as CBPR+ translation writes it.", false},
	CodeValidationFlag:      {statement.SeverityInfo, false, "Block 3 field 119 (STP, REMIT) is a FIN validation profile with no MX element; the content it validated was converted.", false},
	CodeVersionUntested:     {statement.SeverityInfo, false, "The MX document's version (e.g. pacs.008.001.09 or .12, pacs.004.001.13) is not the one we checked element by element (.001.08; pacs.004 .001.09); it was read with the same element paths.", false},
	CodeFieldDefaulted:      {statement.SeverityInfo, false, "A mandatory field had no source value and was filled with a documented default that adds no information (:71F: zero in the settlement currency with :71A: BEN, :50F: party identifier /NOTPROVIDED, :23B: CRED, :71A: SHA; MT202/205 :21: NONREF for EndToEndId NOTPROVIDED; MT910 :52D:NOTPROVIDED without a debtor (rule C06), :25: NOTPROVIDED without an account; pacs.002 OrgnlMsgNmId NOTPROVIDED for /REJT/99, OrgnlMsgId from :21: without /MREF/; MT199 :79: /NARR/ without a reason code; an MT return's :72: /NARR/ without a reason code, pacs.004 OrgnlMsgId or OrgnlMsgNmId NOTPROVIDED when only the other is known).", false},
	CodeAddressFlattened:    {statement.SeverityWarning, false, "Structured address elements MT has no subfield for (StrtNm, BldgNb, PstCd, CtrySubDvsn and the like) were written as option F address lines 2/ (or option K/D lines); the text is kept, read back it becomes AdrLine.", false},
	CodeSplit:               {statement.SeverityInfo, false, "An MX message with several transactions became one MT message per transaction (pages of the result).", false},
	CodeNonstandard:         {statement.SeverityWarning, false, "A field does not follow its SWIFT or ISO format (e.g. a BIC of the wrong shape, an invalid IBAN check digit, an unknown country code) but was kept as given.", false},
	CodeUnknownField:        {statement.SeverityWarning, true, "A field the MT type does not define was skipped.", false},
	CodeDuplicateField:      {statement.SeverityWarning, true, "A non-repeatable field occurs again in one message; the last occurrence is used.", false},
	CodeMT101Multiple:       {statement.SeverityWarning, true, "An MT101 was written with several transactions (one sequence B each, from the CdtTrfTxInf of one PmtInf). From November 2026 FIN accepts one transaction per MT101, so strict refuses it (422); send one message per transaction. The message gives the number of transactions.", false},
	CodeRuleD75:             {statement.SeverityWarning, false, "Network rule D75: when :33B: is present with a currency other than :32A:'s, :36: must be present, and otherwise :36: is not allowed.", true},
	CodeRuleE13:             {statement.SeverityWarning, false, "Network rule E13: with :71A: OUR, :71F: is not allowed.", true},
	CodeRuleD50:             {statement.SeverityWarning, false, "Network rule D50: with :71A: SHA, :71G: is not allowed.", true},
	CodeRuleE15:             {statement.SeverityWarning, false, "Network rule E15: with :71A: BEN, at least one :71F: is mandatory and :71G: is not allowed.", true},
	CodeRuleE01:             {statement.SeverityWarning, false, "Network rule E01: with :23B: SPRI, :23E: may only be SDVA, TELB, PHOB or INTC.", true},
	CodeRuleE02:             {statement.SeverityWarning, false, "Network rule E02: with :23B: SSTD or SPAY, :23E: is not allowed.", true},
	CodeRuleE06:             {statement.SeverityWarning, false, "Network rule E06: when :55a: is present, :53a: and :54a: are mandatory.", true},
	CodeRuleC81:             {statement.SeverityWarning, false, "Network rule C81: when :56a: is present, :57a: is mandatory.", true},
	CodeRuleC06:             {statement.SeverityWarning, false, "Network rule C06 of MT910 and MT210: either :50a: (ordering customer) or :52a: (ordering institution) must be present, in each sequence of an MT210 one of them only.", true},
	CodeRuleT26:             {statement.SeverityWarning, false, "Network rule T26: a reference (:20:, :21:) must not start or end with '/' nor contain '//'.", true},
}

// Warner collects warnings with paths. Repeats of one code and path fold
// into one warning with a count; PAY_TRUNCATED never folds (one per cut).
// It is used through a pointer and not copied once used.
type Warner struct {
	list []statement.Warning
	// keys[i] and count[i] belong to list[i]. They start in the arrays
	// beside them, so the first few warnings allocate only the list.
	keys     []warnKey
	count    []int
	keysBuf  [8]warnKey
	countBuf [8]int
	// seen indexes keys once the list is longer than a scan is cheap; a
	// conversion has a handful of warnings, and a map per conversion was
	// a tenth of its allocations (issue 30).
	seen map[warnKey]int
}

// warnKey is what folds: code and path; a cut (PAY_TRUNCATED) is told apart
// by its place in the list, so it never folds; past maxWarnings the code
// alone (path "", n -1).
type warnKey struct {
	code, path string
	n          int
}

// maxWarnings bounds the list so that hostile input cannot grow it without end.
const maxWarnings = 200

// scanWarnings is the length of the list up to which Add looks for a repeat
// by scanning it rather than through seen.
const scanWarnings = 16

// AddText is Add with the message written out: a finding made for many
// elements of one message (each dropped element) skips the formatting.
func (w *Warner) AddText(code, path string, line int, msg string) {
	w.add(code, path, line, msg, nil, true)
}

// Add records a warning of code at path (and line when known).
func (w *Warner) Add(code, path string, line int, format string, args ...any) {
	w.add(code, path, line, format, args, false)
}

// add is Add; with raw, format is the message itself.
func (w *Warner) add(code, path string, line int, format string, args []any, raw bool) {
	key := warnKey{code: code, path: path}
	if code == CodeTruncated {
		key.n = len(w.list) + 1
	}
	if len(w.list) >= maxWarnings {
		key = warnKey{code: code, n: -1}
	}
	if i, ok := w.find(key); ok {
		w.count[i]++
		return
	}
	ci, ok := Codes[code]
	if !ok {
		panic("payment: unknown warning code " + code)
	}
	if w.list == nil {
		// Room for the handful of findings a typical message has.
		w.list, w.keys, w.count = make([]statement.Warning, 0, 8), w.keysBuf[:0], w.countBuf[:0]
	}
	if w.seen != nil {
		w.seen[key] = len(w.list)
	}
	w.list = append(w.list, statement.Warning{Code: code, Severity: ci.Severity, Lossy: ci.Lossy, Invalid: ci.Invalid,
		Path: path, Line: line, Message: message(format, args, raw)})
	w.keys = append(w.keys, key)
	w.count = append(w.count, 1)
	if w.seen == nil && len(w.list) > scanWarnings {
		w.seen = make(map[warnKey]int, 2*len(w.keys))
		for i, k := range w.keys {
			w.seen[k] = i
		}
	}
}

// message is format with args, or format itself when raw.
func message(format string, args []any, raw bool) string {
	if raw {
		return format
	}
	return fmt.Sprintf(format, args...)
}

// find is the index of the warning with key k.
func (w *Warner) find(k warnKey) (int, bool) {
	if w.seen != nil {
		i, ok := w.seen[k]
		return i, ok
	}
	for i := range w.keys {
		if w.keys[i] == k {
			return i, true
		}
	}
	return 0, false
}

// Result returns the warnings, folded repeats ending in "(N times)".
func (w *Warner) Result() []statement.Warning {
	for i, n := range w.count {
		if n > 1 {
			w.list[i].Message += " (" + strconv.Itoa(n) + " times)"
		}
	}
	return w.list
}

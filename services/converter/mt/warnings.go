package mt

import (
	"strconv"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// Warning codes this package emits. They are part of the API (clients match
// on them) and are listed in docs/conversion-warnings.md; a test keeps the
// two in step.
const (
	// Parsing: tolerated input. Nothing is lost, the reader is told what was bent.
	CodeHeaderLines      = "MT_HEADER_LINES"
	CodeMissingBlock5    = "MT_MISSING_BLOCK5"
	CodeMissingEnd       = "MT_MISSING_TERMINATOR"
	CodeDecimalPoint     = "MT_DECIMAL_POINT"
	CodeAmountNoComma    = "MT_AMOUNT_NO_COMMA"
	CodeLowerCase        = "MT_LOWER_CASE"
	CodeTrailingSpace    = "MT_TRAILING_SPACE"
	CodeBlankLine        = "MT_BLANK_LINE"
	CodeFieldWrapped     = "MT_FIELD_WRAPPED"
	CodeFieldTooLong     = "MT_FIELD_TOO_LONG"
	CodeLegacyTag        = "MT_LEGACY_TAG"
	CodeBlankEntryDate   = "MT_BLANK_ENTRY_DATE"
	CodeNonstandardType  = "MT_NONSTANDARD_TYPE"
	CodeNonstandardValue = "MT_NONSTANDARD_VALUE"
	CodeMissingField     = "MT_MISSING_FIELD"
	CodeUnstructured86   = "MT_86_UNSTRUCTURED"
	// Parsing: input that could only be read by changing or dropping something.
	CodeUnknownField   = "MT_UNKNOWN_FIELD"
	CodeDuplicateField = "MT_DUPLICATE_FIELD"
	CodeInvalidDate    = "MT_INVALID_DATE"
	CodeBalance        = "BALANCE_MISMATCH"
	// Rendering.
	CodeTransliterated = "TRANSLITERATED"
	CodeTruncated      = "TRUNCATED"
	CodePaged          = "PAGED_OUTPUT"
	CodeDropped        = "MT_FIELD_DROPPED"
	CodeBalanceDerived = "MT_BALANCE_DERIVED"
	CodeDefaulted      = "MT_FIELD_DEFAULTED"
	// CodeCurrencyDiffers is no longer emitted (several currencies are
	// refused, see oneCurrency); it stays in codes because clients match on
	// the listed codes.
	CodeCurrencyDiffers = "MT_CURRENCY_MISMATCH"
)

type codeInfo struct {
	severity string
	lossy    bool
	meaning  string
}

// codes is the one table of what each code means; docs and tests read it.
var codes = map[string]codeInfo{
	CodeHeaderLines:      {statement.SeverityInfo, false, "Lines before the first field or FIN block, or between fields where no field continues (bank file headers such as \"0000 01INGBNL2AXXXX00001\", \"940\" or \":940:\"), were skipped."},
	CodeMissingBlock5:    {statement.SeverityInfo, false, "A FIN message has no trailer block {5:}; it is optional for reading."},
	CodeMissingEnd:       {statement.SeverityInfo, false, "Block 4 was not closed with \"-}\" before the next message or the end of the input."},
	CodeDecimalPoint:     {statement.SeverityInfo, false, "An amount used '.' instead of the SWIFT decimal comma."},
	CodeAmountNoComma:    {statement.SeverityInfo, false, "An amount had no decimal comma; it was read as a whole number."},
	CodeLowerCase:        {statement.SeverityInfo, false, "A mark, currency or code was in lower case and was read as upper case."},
	CodeTrailingSpace:    {statement.SeverityInfo, false, "Trailing spaces or tabs after a line were removed as padding. With field86Profile german the lines of a structured :86: keep them (the lines are joined without a separator, so a space at a line's end separates words: ?32Mueller + GmbH); only its last line's and free-text lines' are removed."},
	CodeBlankLine:        {statement.SeverityInfo, false, "Blank lines inside block 4 were skipped."},
	CodeFieldWrapped:     {statement.SeverityInfo, false, "A field was broken over lines where SWIFT does not allow it (tag on its own line, :61: amount on the next line, a tag-like text inside :86:); the parts were joined."},
	CodeFieldTooLong:     {statement.SeverityInfo, false, "A field or subfield is longer than its SWIFT format allows; it was kept in full."},
	CodeLegacyTag:        {statement.SeverityInfo, false, "An older tag (:28:, :13:) was read as its current form (:28C:, :13D:). In MT941 :28: is the current tag and is read without this warning."},
	CodeBlankEntryDate:   {statement.SeverityInfo, false, "The :61: entry date was blank (spaces); the value date is used as booking date."},
	CodeNonstandardType:  {statement.SeverityInfo, false, "The :61: transaction type is missing or not of the form N/F/S + 3 characters; it was kept as given."},
	CodeNonstandardValue: {statement.SeverityInfo, false, "A field does not follow its SWIFT format (e.g. a non-numeric :28C:) but could be kept as text."},
	CodeMissingField:     {statement.SeverityWarning, false, "A mandatory field of the message type is missing (e.g. :20:, :25:, :60F:, :62F:)."},
	CodeUnstructured86:   {statement.SeverityInfo, false, "field86Profile german: a :86: is not in the structured GVC?nn form and was kept as free text (Info)."},
	CodeUnknownField:     {statement.SeverityWarning, true, "A field that MT940/941/942/950 does not define (e.g. :NS:) was skipped."},
	CodeDuplicateField:   {statement.SeverityWarning, true, "A non-repeatable field occurs again in one message; the last occurrence is used."},
	CodeInvalidDate:      {statement.SeverityWarning, true, "A date had a day beyond the end of its month (e.g. 160230) and was set to the month's last day, or an invalid :61: entry date was replaced by the value date."},
	CodeBalance:          {statement.SeverityWarning, true, "Opening balance plus the sum of the entries does not equal the closing balance. The camt reader checks the same (OPBD plus the booked entries against CLBD, pending entries aside) and reports it with this code. A balance report without entries (MT941, a camt.052 without Ntry) is not checked: its balances need not meet."},
	CodeTransliterated:   {statement.SeverityWarning, true, "Characters outside the SWIFT X character set were transliterated (translitProfile); the message gives the count of replaced characters."},
	CodeTruncated:        {statement.SeverityWarning, true, "A value was longer than its MT field allows (reference 16, :61: supplementary 34, :86: 6 x 65, ...) and was cut. A remittance line cut to fit a slash-coded :86: names its source element in the path (`:86: (BkToCstmrStmt/Stmt[1]/Ntry[2]/NtryDtls/TxDtls/RmtInf/Ustrd[1])`)."},
	CodePaged:            {statement.SeverityInfo, false, "The statement did not fit in one 2,000-character message and was split into several pages (:28C: sequence, :60M:/:62M: intermediate balances)."},
	CodeDropped:          {statement.SeverityWarning, true, "Information the target MT type or the statement model has no place for was left out (e.g. :86: in MT950, counterparty, end-to-end id, purpose or return reason with field86Profile plain when the 6 x 65 characters are full, purpose, return reason or creditor reference with field86Profile german, balances in MT942, floor limits and interim balances beside closing ones in MT941, a :25P: identifier code that is not a BIC)."},
	CodeBalanceDerived:   {statement.SeverityWarning, true, "A mandatory opening or closing balance was missing in the source and was computed from the other balance and the entries (or set to zero). In MT941 a camt.052 interim balance (ITBD, ITAV) is written as :62F: or :64: when the closing one is missing, or the opening balance as :62F: when no booked balance is left."},
	CodeDefaulted:        {statement.SeverityInfo, false, "A mandatory MT field had no source value and was filled with a documented default (reference NONREF, :28C: 1, :13D: from the statement date, :34F: zero), or block 1 or 2 has no BIC for the sender (the account servicer) or the receiver and carries the placeholder NOTPROVIDED (the path names `{1:}`, `{2:}` or both)."},
	CodeCurrencyDiffers:  {statement.SeverityWarning, true, "No longer emitted: it marked amounts of another currency written under the statement's currency. A statement whose balances or entries are in several currencies is now refused for every MT target (400 naming the first element in another currency, `BkToCstmrStmt/Stmt[1]/Ntry[3]/Amt/@Ccy` or the MT line and field, and both currencies; conversion-formats.md, \"Several currencies\"), since MT carries one currency per statement and amounts are never relabelled. The code stays listed for clients that match on it."},
}

// warner collects warnings, folding repeats of one code within one message
// into a single warning with a count so hostile input cannot produce an
// unbounded list.
type warner struct {
	list []statement.Warning
	meta []warnMeta // beside list: each warning's key and occurrences
	// seen indexes list by key once it is longer than seenScan; below that
	// a scan of meta finds a key.
	seen map[warnKey]int
}

type warnKey struct {
	code string
	msg  int
}

type warnMeta struct {
	key warnKey
	n   int
}

// maxWarnings bounds the list: past it, warnings fold per code for the
// whole input instead of per message.
const maxWarnings = 200

// seenScan is how many warnings are found by a scan rather than a map. A
// real file has a handful; a map for each parse or render was a tenth of
// the allocations of reading the shared bank files (issue 30).
const seenScan = 16

func (w *warner) find(k warnKey) (int, bool) {
	if w.seen != nil {
		i, ok := w.seen[k]
		return i, ok
	}
	for i := range w.meta {
		if w.meta[i].key == k {
			return i, true
		}
	}
	return 0, false
}

// add records a warning, or one more occurrence of it, and returns its index.
func (w *warner) add(code string, msg, line int, field, text string) int {
	k := warnKey{code, msg}
	if len(w.list) >= maxWarnings {
		k.msg = -1
	}
	if i, ok := w.find(k); ok {
		w.meta[i].n++
		return i
	}
	if w.list == nil {
		w.list = make([]statement.Warning, 0, 4)
		w.meta = make([]warnMeta, 0, 4)
	}
	ci := codes[code]
	w.list = append(w.list, statement.Warning{
		Code: code, Severity: ci.severity, Lossy: ci.lossy,
		Message: text, Path: path(msg, line, field), Line: line,
	})
	w.meta = append(w.meta, warnMeta{k, 1})
	switch {
	case w.seen != nil:
		w.seen[k] = len(w.meta) - 1
	case len(w.meta) > seenScan:
		w.seen = make(map[warnKey]int, 2*len(w.meta))
		for i, m := range w.meta {
			w.seen[m.key] = i
		}
	}
	return len(w.meta) - 1
}

// addN records one warning that stands for n occurrences (transliteration).
func (w *warner) addN(code string, n int, field, text string) {
	if n <= 0 {
		return
	}
	i := w.add(code, 0, 0, field, text)
	w.meta[i].n += n - 1
}

func (w *warner) result() []statement.Warning {
	for i, m := range w.meta {
		if m.n > 1 {
			w.list[i].Message += " (" + strconv.Itoa(m.n) + " times)"
		}
	}
	return w.list
}

func path(msg, line int, field string) string {
	// Built on the stack: only the string returned is allocated.
	var buf [64]byte
	b := buf[:0]
	if msg > 0 {
		b = append(b, "message "...)
		b = strconv.AppendInt(b, int64(msg), 10)
	}
	if line > 0 {
		if len(b) > 0 {
			b = append(b, ", "...)
		}
		b = append(b, "line "...)
		b = strconv.AppendInt(b, int64(line), 10)
	}
	if field != "" {
		if len(b) > 0 {
			b = append(b, ", "...)
		}
		b = append(b, "field "...)
		b = append(b, field...)
	}
	return string(b)
}

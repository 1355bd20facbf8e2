package mx

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/converter/bankid"
	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// now is the clock for CreDtTm when the source has no creation time.
var now = time.Now

// renderer writes one camt.053 or camt.052 document of a given version. v8
// selects the 2019 structures (.001.08); otherwise the 2009 ones (.001.02).
type renderer struct {
	w       xmlWriter
	typ     string
	version string
	v8      bool
	warns   []statement.Warning
	// seen holds the code and path of every warning once there are more
	// than a few; until then warns is searched (see repeated).
	seen map[warnKey]bool
	// stmt, bal and ntry are the 1-based positions being written (0: none).
	// Warning paths are built from them only when a warning is raised, which
	// is rare, rather than for every element.
	stmt, bal, ntry int
	// num is scratch space for formatting dates and amounts.
	num [64]byte
	// cur is the statement being written; srcLine and srcField the source
	// line and MT field of the balance or entry being written, for refusals.
	cur      *statement.Statement
	srcLine  int
	srcField string
	// msgPg is the GrpHdr/MsgPgntn page number written (.001.02 with one
	// statement), when msgPaged.
	msgPg    string
	msgPaged bool
}

// refuse is the error for a value of the current statement that cannot be
// written at target (see statement.Statement.Refuse).
func (r *renderer) refuse(target, reason string) error {
	field := r.srcField
	if field == "" {
		field = ":20:"
	}
	if r.cur == nil {
		return &statement.ParseError{Field: target, Reason: reason}
	}
	return r.cur.Refuse(r.srcLine, field, target, reason)
}

// Render writes all statements into one document: camt's group header holds
// any number of statements, so several MT messages become one file.
func Render(stmts []*statement.Statement, typ, version string) (string, []statement.Warning, error) {
	if len(stmts) == 0 {
		return "", nil, errors.New("nothing to render: no statements")
	}
	var v8 bool
	switch version {
	case typ + ".001.08":
		v8 = true
	case typ + ".001.02":
	default:
		return "", nil, fmt.Errorf("unsupported %s version %q", typ, version)
	}
	r := &renderer{typ: typ, version: version, v8: v8}
	// The staging buffer is flushed into the result as the document is
	// written, so it is reused across conversions: one 4 KiB garbage
	// object less per request on the convert route.
	if err := r.w.withStaging(func() error { return r.document(stmts) }); err != nil {
		return "", nil, err
	}
	return r.w.out.String(), r.warns, nil
}

// path is the warning path of rel's parts below the element being written:
// GrpHdr, a statement, or one of its balances or entries.
// It is built in one buffer: an entry's warning (a dropped funds code is
// common) paid one string per part otherwise.
func (r *renderer) path(rel ...string) string {
	var buf [64]byte
	p := buf[:0]
	if r.stmt > 0 {
		p = append(p, r.stmtName()...)
		p = append(p, '[')
		p = strconv.AppendInt(p, int64(r.stmt), 10)
		p = append(p, ']')
		switch {
		case r.ntry > 0:
			p = append(p, "/Ntry["...)
			p = strconv.AppendInt(p, int64(r.ntry), 10)
			p = append(p, ']')
		case r.bal > 0:
			p = append(p, "/Bal["...)
			p = strconv.AppendInt(p, int64(r.bal), 10)
			p = append(p, ']')
		}
	}
	for _, s := range rel {
		if len(p) > 0 {
			p = append(p, '/')
		}
		p = append(p, s...)
	}
	return string(p)
}

func (r *renderer) warn(code string, lossy bool, path, format string, args ...any) {
	if r.repeated(code, path) {
		return
	}
	r.addWarning(code, lossy, path, fmt.Sprintf(format, args...))
}

// warnText is warn with the message written out.
func (r *renderer) warnText(code string, lossy bool, path, msg string) {
	if r.repeated(code, path) {
		return
	}
	r.addWarning(code, lossy, path, msg)
}

func (r *renderer) addWarning(code string, lossy bool, path, msg string) {
	sev := statement.SeverityInfo
	if lossy {
		sev = statement.SeverityWarning
	}
	r.warns = append(r.warns, statement.Warning{Code: code, Severity: sev, Lossy: lossy, Path: path, Message: msg})
}

type warnKey struct{ code, path string }

// repeated reports whether a warning of code at path was given already.
// A document has few warnings, and searching them costs less than keying
// a map by each; past manyWarnings they are kept in the map.
func (r *renderer) repeated(code, path string) bool {
	if r.seen != nil {
		if r.seen[warnKey{code, path}] {
			return true
		}
		r.seen[warnKey{code, path}] = true
		return false
	}
	for i := range r.warns {
		if r.warns[i].Path == path && r.warns[i].Code == code {
			return true
		}
	}
	if len(r.warns) >= manyWarnings {
		r.seen = make(map[warnKey]bool, 2*len(r.warns))
		for _, w := range r.warns {
			r.seen[warnKey{w.Code, w.Path}] = true
		}
		r.seen[warnKey{code, path}] = true
	}
	return false
}

const manyWarnings = 16

// text fits s into a MaxNText element, warning when it had to be cut; rel is
// the element's path (see path).
func (r *renderer) text(s string, max int, rel ...string) string {
	s = strings.TrimSpace(s)
	// No more bytes than max means no more characters either.
	if len(s) <= max || utf8.RuneCountInString(s) <= max {
		return s
	}
	r.warn(CodeTruncated, true, r.path(rel...), "text longer than %d characters was truncated", max)
	n := 0
	for i := range s {
		if n == max {
			return s[:i]
		}
		n++
	}
	return s
}

func (r *renderer) leaf(name, s string, max int, rel ...string) {
	if s = r.text(s, max, rel...); s != "" {
		r.w.leaf(name, s)
	}
}

func (r *renderer) root() string {
	if r.typ == typeCamt2 {
		return rootRpt
	}
	return rootStmt
}

func (r *renderer) stmtName() string {
	if r.typ == typeCamt2 {
		return "Rpt"
	}
	return "Stmt"
}

func (r *renderer) document(stmts []*statement.Statement) error {
	w := &r.w
	size := sizeHint(stmts)
	w.out.Grow(size)
	first := stmts[0]
	msgID := first.MessageID
	if msgID == "" {
		msgID = first.Reference
	}
	if msgID == "" {
		msgID = "NONREF"
	}
	w.b = append(w.b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"...)
	// A statement that travelled with a network header (an MT's blocks 1/2,
	// a camt's AppHdr) keeps one, as CBPR+ exchanges it: the SWIFT envelope
	// holding the AppHdr and the Document, as for payments. A bare file
	// (block 4 text, a Document alone) stays a bare Document: it has no
	// sender or receiver to state.
	envelope := first.Header.Set
	if envelope {
		w.b = append(w.b, "<Envelope xmlns=\""+nsEnvelope+"\">"...)
		r.appHdr(first, msgID)
		w.set(appendIndent(w.b, 1))
		w.depth = 2
	} else {
		w.depth = 1
	}
	w.b = append(w.b, "<Document xmlns=\""+nsPrefix...)
	w.b = append(w.b, r.version...)
	w.b = append(w.b, "\">"...)
	w.open(r.root())
	w.open("GrpHdr")
	r.leaf("MsgId", msgID, 35, "GrpHdr/MsgId")
	w.rawLeaf("CreDtTm", appendDateTime(r.num[:0], createdAt(first)))
	// .001.02 has no statement pagination; with one statement per document
	// the message pagination says the same thing.
	if !r.v8 && len(stmts) == 1 {
		if pg, ok := r.pagination(first, "GrpHdr/MsgPgntn"); ok {
			w.open("MsgPgntn")
			w.leaf("PgNb", pg)
			w.leaf("LastPgInd", boolText(lastPage(first)))
			w.close("MsgPgntn")
			r.msgPg, r.msgPaged = pg, true
		}
	}
	w.close("GrpHdr")
	for i, s := range stmts {
		r.stmt = i + 1
		if err := r.statement(s, len(stmts)); err != nil {
			return err
		}
	}
	w.close(r.root())
	if envelope {
		w.close("Document")
		w.depth = 0
		w.b = append(w.b, "\n</Envelope>\n"...)
	} else {
		w.depth = 0
		w.b = append(w.b, "\n</Document>\n"...)
	}
	w.flush()
	return nil
}

// appHdr writes the business application header (head.001.001.02) of a
// statement that travelled with one: Fr the sender (MT block 1/2, the
// source's AppHdr, else the account servicer), To the receiver, BizMsgIdr
// the source's own, else the message id (MT :20:), MsgDefIdr the version
// written, BizSvc swift.cbprplus.02 for the .001.08 versions CBPR+ uses,
// CreDt the document's creation time with its offset, as CBPR+ requires.
func (r *renderer) appHdr(s *statement.Statement, msgID string) {
	w := &r.w
	w.set(append(appendIndent(w.b, 1), "<AppHdr xmlns=\""+nsPrefix+headVersion+"\">"...))
	w.depth = 2
	from := s.Header.From
	if from == "" {
		from = s.Account.Servicer
	}
	r.headerParty("Fr", from)
	r.headerParty("To", s.Header.To)
	ref := s.Header.BizMsgIdr
	if ref == "" {
		ref = msgID
	}
	r.leaf("BizMsgIdr", ref, 35, "AppHdr/BizMsgIdr")
	w.leaf("MsgDefIdr", r.version)
	if r.v8 {
		w.leaf("BizSvc", bizSvc)
	}
	w.rawLeaf("CreDt", appendOffsetTime(r.num[:0], createdAt(s)))
	w.close("AppHdr")
}

// headerParty writes AppHdr Fr or To: the BIC, or the name NOTPROVIDED
// when the source does not say who (a camt AppHdr requires both).
func (r *renderer) headerParty(name, bic string) {
	w := &r.w
	w.open(name)
	w.open("FIId")
	w.open("FinInstnId")
	if bic = strings.ToUpper(strings.TrimSpace(bic)); payment.IsBIC(bic) {
		w.leaf("BICFI", bic)
	} else {
		r.warn(CodeHeaderDefaulted, false, "AppHdr/"+name, "the source names no BIC for AppHdr/%s: FinInstnId/Nm NOTPROVIDED", name)
		w.leaf("Nm", "NOTPROVIDED")
	}
	w.close("FinInstnId")
	w.close("FIId")
	w.close(name)
}

// sizeHint estimates the document's length from the fixed markup per
// statement and entry and the text they carry, so that the buffer is
// allocated once rather than copied as it grows.
func sizeHint(stmts []*statement.Statement) int {
	n := 512
	for _, s := range stmts {
		n += 1400 + len(s.Reference) + len(s.MessageID) + len(s.Account.Owner) + len(s.Info)
		for i := range s.Entries {
			e := &s.Entries[i]
			t := len(e.Info) + len(e.CustomerReference) + len(e.BankReference) + len(e.Supplementary) +
				len(e.EndToEndID) + len(e.MandateID) + len(e.CreditorID) + len(e.UltimateDebtor) + len(e.UltimateCreditor) +
				len(e.Counterparty.Name) + len(e.Counterparty.IBAN) + len(e.Counterparty.Account) + len(e.Counterparty.BankCode) +
				len(e.Purpose) + len(e.ReturnReason) + len(e.CreditorReference)
			for _, l := range e.Remittance {
				t += 40 + len(l)
			}
			// Escaped markup characters take a few bytes more.
			n += 600 + t + t/4
		}
	}
	return n
}

func createdAt(s *statement.Statement) time.Time {
	switch {
	case !s.CreatedAt.IsZero():
		return s.CreatedAt
	case !s.DateTimeIndicator.IsZero():
		return s.DateTimeIndicator
	}
	return now()
}

func appendDateTime(b []byte, t time.Time) []byte {
	return t.Truncate(time.Second).AppendFormat(b, time.RFC3339)
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// lastPage is LastPgInd. An MT statement says it through its closing balance:
// :62F: ends the statement, :62M: continues it on the next page.
func lastPage(s *statement.Statement) bool {
	if s.LastPage {
		return true
	}
	if b, ok := s.Balance(statement.ClosingBooked); ok {
		return !b.Intermediate
	}
	return false
}

// checkMarks warns for each opening or closing booked balance whose
// first/intermediate marking (:60F:/:60M:, :62F:/:62M:) a reader of the
// written document will not see as the model has it: camt has no marking of
// its own and states it only through the pagination written (pg, when paged).
func (r *renderer) checkMarks(s *statement.Statement, pg string, paged bool) {
	openM, closeM := pageMarks(pg, paged, lastPage(s))
	for i, b := range s.Balances {
		var got bool
		switch b.Type {
		case statement.OpeningBooked:
			got = openM
		case statement.ClosingBooked:
			got = closeM
		default:
			continue
		}
		if got == b.Intermediate {
			continue
		}
		was, is := b.MTTag(), b
		is.Intermediate = got
		how := "the document has no page number"
		if paged {
			how = fmt.Sprintf("PgNb %s, LastPgInd %t", pg, lastPage(s))
		}
		r.bal = i + 1
		r.warn(CodeBalanceMarking, true, r.path(), "the %s balance %s reads back as %s: camt marks first and intermediate balances only by pagination (%s)",
			markName(b.Intermediate), was, is.MTTag(), how)
	}
	r.bal = 0
}

func markName(intermediate bool) string {
	if intermediate {
		return "intermediate"
	}
	return "first"
}

func (r *renderer) pagination(s *statement.Statement, rel string) (string, bool) {
	pg := strings.TrimLeft(s.SequenceNumber, "0")
	if s.SequenceNumber == "" {
		return "", false
	}
	if pg == "" {
		pg = "0"
	}
	if len(pg) > 5 || strings.Trim(pg, "0123456789") != "" {
		r.warn(CodePaginationDropped, true, r.path(rel), "page number %q is not 1 to 5 digits", clip(s.SequenceNumber))
		return "", false
	}
	return pg, true
}

func (r *renderer) statement(s *statement.Statement, count int) error {
	w := &r.w
	name, pgntn, addtlInf := "Stmt", "StmtPgntn", "AddtlStmtInf"
	if r.typ == typeCamt2 {
		name, pgntn, addtlInf = "Rpt", "RptPgntn", "AddtlRptInf"
	}
	w.open(name)
	r.cur = s
	ref := s.Reference
	if ref == "" {
		ref = "NONREF"
	}
	r.leaf("Id", ref, 35, "Id")
	pg, paged := r.msgPg, r.msgPaged
	if r.v8 {
		if pg, paged = r.pagination(s, pgntn); paged {
			w.open(pgntn)
			w.leaf("PgNb", pg)
			w.leaf("LastPgInd", boolText(lastPage(s)))
			w.close(pgntn)
		}
	} else if count > 1 && s.SequenceNumber != "" {
		r.warn(CodePaginationDropped, true, r.path(), ".001.02 has no statement pagination and the document holds several statements")
	}
	r.checkMarks(s, pg, paged)
	if n := s.StatementNumber; n != "" {
		if len(n) <= 18 && strings.Trim(n, "0123456789") == "" {
			w.leaf("ElctrncSeqNb", n)
		} else {
			r.warn(CodeSequenceDropped, true, r.path("ElctrncSeqNb"), "statement number %q is not numeric", clip(n))
		}
	}
	w.rawLeaf("CreDtTm", appendDateTime(r.num[:0], createdAt(s)))
	if !s.FromDate.IsZero() && !s.ToDate.IsZero() {
		w.open("FrToDt")
		w.rawLeaf("FrDtTm", append(s.FromDate.AppendISO(r.num[:0]), "T00:00:00"...))
		w.rawLeaf("ToDtTm", append(s.ToDate.AppendISO(r.num[:0]), "T23:59:59"...))
		w.close("FrToDt")
	}
	r.account(s)
	if s.RelatedReference != "" {
		r.warn(CodeRelatedRefDropped, true, r.path(), "related reference (:21:) has no place in %s", r.typ)
	}
	if s.FloorLimitDebit != nil || s.FloorLimitCredit != nil {
		r.warn(CodeFloorLimitDropped, true, r.path(), "floor limits (:34F:) have no place in %s", r.typ)
	}
	if len(s.Balances) == 0 && r.typ == typeCamt3 {
		return s.Refuse(0, ":60a:", r.path("Bal"), "the statement has no balance (MT :60F:/:62F:) and camt.053 requires at least one")
	}
	for i, b := range s.Balances {
		if b.Currency == "" {
			b.Currency = s.Account.Currency
		}
		r.bal = i + 1
		r.srcLine, r.srcField = b.Line, b.MTTag()
		if err := r.balance(b); err != nil {
			return err
		}
	}
	r.bal, r.srcLine, r.srcField = 0, 0, ""
	r.summary(s)
	for i := range s.Entries {
		r.ntry = i + 1
		r.srcLine, r.srcField = s.Entries[i].Line, ":61:"
		if err := r.entry(&s.Entries[i], s.Account.Currency); err != nil {
			return err
		}
		w.flush()
	}
	r.ntry, r.srcLine, r.srcField = 0, 0, ""
	r.leaf(addtlInf, s.Info, 500, addtlInf)
	w.close(name)
	return nil
}

func (r *renderer) account(s *statement.Statement) {
	w := &r.w
	a := s.Account
	w.open("Acct")
	w.open("Id")
	iban := strings.ToUpper(strings.ReplaceAll(a.IBAN, " ", ""))
	switch {
	case iban != "" && bankid.ValidIBAN(iban):
		w.leaf("IBAN", iban)
	case bankid.ValidIBAN(strings.ToUpper(strings.ReplaceAll(a.Other, " ", ""))):
		w.leaf("IBAN", strings.ToUpper(strings.ReplaceAll(a.Other, " ", "")))
	default:
		id := a.Other
		if id == "" {
			id = a.IBAN
		}
		if id == "" {
			id = "NOTPROVIDED"
			r.warn(CodeAccountMissing, false, r.path("Acct"), "statement without account identification")
		}
		w.open("Othr")
		r.leaf("Id", id, 34, "Acct/Id/Othr/Id")
		w.close("Othr")
	}
	w.close("Id")
	ccy := a.Currency
	if ccy == "" && len(s.Balances) > 0 {
		ccy = s.Balances[0].Currency
	}
	if isCurrency(ccy) {
		w.leaf("Ccy", ccy)
	}
	ownerBIC := strings.ToUpper(strings.TrimSpace(a.OwnerBIC))
	if ownerBIC != "" && !r.validBIC(ownerBIC) {
		r.warn(CodeBICDropped, true, r.path("Acct/Ownr/Id"), "account owner BIC %q does not match the %s BIC pattern", clip(a.OwnerBIC), r.version)
		ownerBIC = ""
	}
	if a.Owner != "" || ownerBIC != "" {
		w.open("Ownr")
		if a.Owner != "" {
			r.leaf("Nm", a.Owner, 140, "Acct/Ownr/Nm")
		}
		if ownerBIC != "" {
			// .001.08 names it AnyBIC, .001.02 BICOrBEI; same pattern.
			name := "BICOrBEI"
			if r.v8 {
				name = "AnyBIC"
			}
			w.open("Id")
			w.open("OrgId")
			w.leaf(name, ownerBIC)
			w.close("OrgId")
			w.close("Id")
		}
		w.close("Ownr")
	}
	if svcr := strings.ToUpper(strings.TrimSpace(a.Servicer)); svcr != "" {
		if r.validBIC(svcr) {
			w.open("Svcr")
			w.open("FinInstnId")
			w.leaf(r.bicName(), svcr)
			w.close("FinInstnId")
			w.close("Svcr")
		} else {
			r.warn(CodeBICDropped, true, r.path("Acct/Svcr"), "servicer BIC %q does not match the %s BIC pattern", clip(a.Servicer), r.version)
		}
	}
	w.close("Acct")
}

func (r *renderer) bicName() string {
	if r.v8 {
		return "BICFI"
	}
	return "BIC"
}

// validBIC checks the version's BIC pattern; .001.02's is stricter (no digit
// in the country code, no 'O' as second location character).
func (r *renderer) validBIC(s string) bool {
	if len(s) != 8 && len(s) != 11 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		upper, digit := c >= 'A' && c <= 'Z', c >= '0' && c <= '9'
		switch {
		case i >= 4 && i < 6:
			if !upper {
				return false
			}
		case r.v8 && !upper && !digit:
			return false
		case !r.v8 && i < 4 && !upper:
			return false
		case !r.v8 && i == 6 && !(upper || c >= '2' && c <= '9'):
			return false
		case !r.v8 && i == 7 && !(upper && c != 'O' || digit):
			return false
		case !r.v8 && i > 7 && !upper && !digit:
			return false
		}
	}
	return true
}

// amount returns the upper-case currency and |a| with at most 5 decimals,
// formatted into r.num; rel is the amount's path.
func (r *renderer) amount(a statement.Amount, rel string) (string, []byte, error) {
	ccy := strings.ToUpper(a.Currency)
	if !isCurrency(ccy) {
		return "", nil, r.refuse(r.path(rel), fmt.Sprintf("currency %q is not an ISO 4217 code", clip(a.Currency)))
	}
	s, rounded := appendAmount(r.num[:0], a.Value)
	if rounded {
		r.warn(CodeAmountRounded, true, r.path(rel), "amount has more than 5 decimals and was rounded")
	}
	digits := len(s)
	if bytes.IndexByte(s, '.') >= 0 {
		digits--
	}
	if digits > 18 {
		return "", nil, r.refuse(r.path(rel), "amount has more than 18 digits")
	}
	return ccy, s, nil
}

var powersOf10 = [...]int64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}

// appendAmount appends |v|.String(), rounded half up to 5 decimals when it
// has more (and then says so). Amounts whose coefficient fits an int64 are
// formatted here without decimal's math/big allocations; the output is the
// same as decimal's.
func appendAmount(b []byte, v decimal.Decimal) ([]byte, bool) {
	if v.NumDigits() > 18 || v.Exponent() > 0 || v.Exponent() < -18 {
		return appendAmountBig(b, v)
	}
	c, e := v.CoefficientInt64(), int(v.Exponent())
	if c < 0 {
		c = -c
	}
	rounded := false
	if e < -5 {
		unit := powersOf10[-5-e]
		if rem := c % unit; rem != 0 {
			rounded = true
			c /= unit
			if rem >= unit/2 {
				c++
			}
			e = -5
		}
	}
	// The digits of c, with leading zeros up to one integer digit.
	var digits [24]byte
	i := len(digits)
	for c > 0 || i > len(digits)-1+e {
		i--
		digits[i] = byte('0' + c%10)
		c /= 10
	}
	ds := digits[i:]
	intPart, frac := ds[:len(ds)+e], ds[len(ds)+e:]
	if decimal.TrimTrailingZeros {
		for len(frac) > 0 && frac[len(frac)-1] == '0' {
			frac = frac[:len(frac)-1]
		}
	}
	b = append(b, intPart...)
	if len(frac) > 0 {
		b = append(append(b, '.'), frac...)
	}
	return b, rounded
}

func appendAmountBig(b []byte, v decimal.Decimal) ([]byte, bool) {
	v = v.Abs()
	rounded := false
	if v.Exponent() < -5 && !v.Equal(v.Truncate(5)) {
		rounded = true
		v = v.Round(5)
	}
	return append(b, v.String()...), rounded
}

func (r *renderer) balance(b statement.Balance) error {
	w := &r.w
	switch b.Type {
	case statement.OpeningBooked, statement.ClosingBooked, statement.ClosingAvailable,
		statement.ForwardAvailable, statement.InterimBooked, statement.InterimAvailable:
	default:
		r.warn(CodeBalanceDropped, true, r.path(), "balance type %q is not rendered", clip(string(b.Type)))
		return nil
	}
	ccy, v, err := r.amount(b.Amount, "Amt")
	if err != nil {
		return err
	}
	if b.Date.IsZero() {
		return r.refuse(r.path("Dt"), "balance without date")
	}
	w.open("Bal")
	w.open("Tp")
	w.open("CdOrPrtry")
	w.leaf("Cd", string(b.Type))
	w.close("CdOrPrtry")
	w.close("Tp")
	w.amt("Amt", ccy, v)
	w.leaf("CdtDbtInd", cdtDbt(b.Mark, b.Amount.Value))
	w.open("Dt")
	w.rawLeaf("Dt", b.Date.AppendISO(r.num[:0]))
	w.close("Dt")
	w.close("Bal")
	return nil
}

// cdtDbt maps a mark to CRDT/DBIT. A negative amount, which the model should
// never hold, flips the direction so that the sign is not lost with Abs.
func cdtDbt(m statement.Mark, v decimal.Decimal) string {
	credit := m == statement.Credit
	if v.IsNegative() {
		credit = !credit
	}
	if credit {
		return "CRDT"
	}
	return "DBIT"
}

func (r *renderer) summary(s *statement.Statement) {
	if !s.Summary.Set {
		return
	}
	w := &r.w
	w.open("TxsSummry")
	part := func(name string, n int, sum decimal.Decimal) {
		w.open(name)
		w.rawLeaf("NbOfNtries", strconv.AppendInt(r.num[:0], int64(n), 10))
		w.leaf("Sum", sum.Abs().String())
		w.close(name)
	}
	part("TtlCdtNtries", s.Summary.CreditCount, s.Summary.CreditTotal)
	part("TtlDbtNtries", s.Summary.DebitCount, s.Summary.DebitTotal)
	w.close("TxsSummry")
}

// entry writes e; ccy is the account's currency, which is the entry's when it
// has none of its own.
func (r *renderer) entry(e *statement.Entry, ccy string) error {
	w := &r.w
	a := e.Amount
	if a.Currency == "" {
		a.Currency = ccy
	}
	ccy, v, err := r.amount(a, "Amt")
	if err != nil {
		return err
	}
	w.open("Ntry")
	w.amt("Amt", ccy, v)
	w.leaf("CdtDbtInd", cdtDbt(e.Mark, e.Amount.Value))
	if e.Reversal {
		w.leaf("RvslInd", "true")
	}
	status := "BOOK"
	if e.Pending {
		status = "PDNG"
	}
	if r.v8 {
		w.open("Sts")
		w.leaf("Cd", status)
		w.close("Sts")
	} else {
		w.leaf("Sts", status)
	}
	if !e.BookingDate.IsZero() {
		w.open("BookgDt")
		w.rawLeaf("Dt", e.BookingDate.AppendISO(r.num[:0]))
		w.close("BookgDt")
	}
	if !e.ValueDate.IsZero() {
		w.open("ValDt")
		w.rawLeaf("Dt", e.ValueDate.AppendISO(r.num[:0]))
		w.close("ValDt")
	}
	r.leaf("AcctSvcrRef", e.BankReference, 35, "AcctSvcrRef")
	r.bankTxCode(e)
	if e.FundsCode != "" {
		r.warnText(CodeFundsCodeDropped, true, r.path(), "funds code of :61: has no place in "+r.typ)
	}
	r.details(e)
	info := e.Info
	if info == "" {
		// The German posting text (Buchungstext) is what banks put in
		// AddtlNtryInf.
		info = e.PostingText
	} else if e.PostingText != "" && !strings.Contains(info, e.PostingText) {
		r.warn(CodeGermanDropped, true, r.path(), "posting text (?00) dropped beside other entry information")
	}
	r.leaf("AddtlNtryInf", info, 500, "AddtlNtryInf")
	w.close("Ntry")
	return nil
}

// bankTxCode writes BkTxCd, which both versions require. The MT transaction
// type goes to Prtry/Cd issued by SWIFT; with a German GVC it follows the
// German banks' (DK) convention TYPE+GVC+PRIMANOTA+TEXTKEY issued by DK.
func (r *renderer) bankTxCode(e *statement.Entry) {
	w := &r.w
	w.open("BkTxCd")
	if code4(e.BankTxDomain) && code4(e.BankTxFamily) && code4(e.BankTxSubFamily) {
		w.open("Domn")
		w.leaf("Cd", e.BankTxDomain)
		w.open("Fmly")
		w.leaf("Cd", e.BankTxFamily)
		w.leaf("SubFmlyCd", e.BankTxSubFamily)
		w.close("Fmly")
		w.close("Domn")
	}
	code, issuer := e.TransactionType, ""
	if isMTType(code) {
		issuer = "SWIFT"
	}
	if e.GVC != "" {
		if code == "" {
			code = "NMSC"
		}
		code += "+" + e.GVC
		if e.Primanota != "" || e.TextKeyAddition != "" {
			code += "+" + e.Primanota
		}
		if e.TextKeyAddition != "" {
			code += "+" + e.TextKeyAddition
		}
		issuer = "DK"
	}
	if code != "" {
		w.open("Prtry")
		r.leaf("Cd", code, 35, "BkTxCd/Prtry/Cd")
		if issuer != "" {
			w.leaf("Issr", issuer)
		}
		w.close("Prtry")
	}
	w.close("BkTxCd")
}

func code4(s string) bool { return s != "" && len(s) <= 4 }

// isMTType is the :61: transaction type identification: N, S or F and a
// three-character code.
func isMTType(s string) bool {
	return len(s) == 4 && (s[0] == 'N' || s[0] == 'S' || s[0] == 'F')
}

// txDtls is the path of an entry's transaction details.
const txDtls = "NtryDtls/TxDtls"

func (r *renderer) details(e *statement.Entry) {
	cust := e.CustomerReference
	if cust == "NONREF" {
		cust = ""
	}
	// The account owner's reference is InstrId; without an end-to-end id it
	// also fills EndToEndId, where MT-to-MX translations put it. The parser
	// reads an EndToEndId equal to InstrId as no end-to-end id.
	e2e, instr := e.EndToEndID, ""
	if cust != "" && cust != e2e {
		instr = cust
		if e2e == "" {
			e2e = cust
		}
	}
	cp := e.Counterparty
	hasParties := cp.Name != "" || cp.IBAN != "" || cp.Account != "" || e.UltimateDebtor != "" || e.UltimateCreditor != "" || e.CreditorID != ""
	hasRefs := e2e != "" || instr != "" || e.MandateID != ""
	if !hasRefs && !hasParties && len(e.Remittance) == 0 && e.Supplementary == "" &&
		e.Purpose == "" && e.ReturnReason == "" && e.CreditorReference == "" && cp.BIC == "" && cp.BankCode == "" {
		return
	}
	w := &r.w
	w.open("NtryDtls")
	w.open("TxDtls")
	if hasRefs {
		w.open("Refs")
		r.leaf("InstrId", instr, 35, txDtls+"/Refs/InstrId")
		r.leaf("EndToEndId", e2e, 35, txDtls+"/Refs/EndToEndId")
		r.leaf("MndtId", e.MandateID, 35, txDtls+"/Refs/MndtId")
		w.close("Refs")
	}
	if hasParties {
		r.parties(e)
	}
	if cp.BIC != "" || cp.BankCode != "" {
		r.agents(e)
	}
	r.codeOrPrtry("Purp", e.Purpose, txDtls+"/Purp")
	r.remittance(e.Remittance, e.CreditorReference)
	if e.ReturnReason != "" {
		w.open("RtrInf")
		r.codeOrPrtry("Rsn", e.ReturnReason, txDtls+"/RtrInf/Rsn")
		w.close("RtrInf")
	}
	r.leaf("AddtlTxInf", e.Supplementary, 500, txDtls+"/AddtlTxInf")
	w.close("TxDtls")
	w.close("NtryDtls")
}

// counterpartyIsDebtor: the other side of a credit is its payer; a reversal
// books opposite to the payment it reverses.
func counterpartyIsDebtor(e *statement.Entry) bool {
	return (e.Mark == statement.Credit) != e.Reversal
}

func (r *renderer) parties(e *statement.Entry) {
	w := &r.w
	cp := e.Counterparty
	w.open("RltdPties")
	const dir = txDtls + "/RltdPties/"
	debtor := counterpartyIsDebtor(e)
	if debtor {
		r.party("Dbtr", cp.Name, "", dir+"Dbtr")
		r.cashAccount("DbtrAcct", cp, dir+"DbtrAcct")
	}
	r.party("UltmtDbtr", e.UltimateDebtor, "", dir+"UltmtDbtr")
	if !debtor {
		r.party("Cdtr", cp.Name, e.CreditorID, dir+"Cdtr")
		r.cashAccount("CdtrAcct", cp, dir+"CdtrAcct")
	} else {
		r.party("Cdtr", "", e.CreditorID, dir+"Cdtr")
	}
	r.party("UltmtCdtr", e.UltimateCreditor, "", dir+"UltmtCdtr")
	w.close("RltdPties")
}

// party writes a party with a name and optionally a SEPA creditor id; .001.08
// wraps the party in Party40Choice/Pty. rel is the party's path.
func (r *renderer) party(name, nm, sepaID, rel string) {
	nm = r.text(nm, 140, rel, "Nm")
	sepaID = r.text(sepaID, 35, rel, "Id")
	if nm == "" && sepaID == "" {
		return
	}
	w := &r.w
	w.open(name)
	if r.v8 {
		w.open("Pty")
	}
	if nm != "" {
		w.leaf("Nm", nm)
	}
	if sepaID != "" {
		w.open("Id")
		w.open("PrvtId")
		w.open("Othr")
		w.leaf("Id", sepaID)
		w.open("SchmeNm")
		w.leaf("Prtry", "SEPA")
		w.close("SchmeNm")
		w.close("Othr")
		w.close("PrvtId")
		w.close("Id")
	}
	if r.v8 {
		w.close("Pty")
	}
	w.close(name)
}

func (r *renderer) cashAccount(name string, cp statement.Counterparty, rel string) {
	iban := strings.ToUpper(strings.ReplaceAll(cp.IBAN, " ", ""))
	other := cp.Account
	if iban != "" && !ibanPattern(iban) {
		if other == "" {
			other = cp.IBAN
		}
		iban = ""
	}
	if iban == "" && other == "" {
		return
	}
	w := &r.w
	w.open(name)
	w.open("Id")
	if iban != "" {
		w.leaf("IBAN", iban)
	} else {
		w.open("Othr")
		r.leaf("Id", other, 34, rel, "Id/Othr/Id")
		w.close("Othr")
	}
	w.close("Id")
	w.close(name)
	if iban != "" && cp.Account != "" && cp.Account != iban {
		r.warn(CodeCounterpartyAccount, true, r.path(rel), "counterparty has both an IBAN and another account number; the other number was dropped")
	}
}

func (r *renderer) agents(e *statement.Entry) {
	const rel = txDtls + "/RltdAgts"
	cp := e.Counterparty
	name := "CdtrAgt"
	if counterpartyIsDebtor(e) {
		name = "DbtrAgt"
	}
	bic := strings.ToUpper(strings.TrimSpace(cp.BIC))
	if bic != "" && !r.validBIC(bic) {
		r.warn(CodeBICDropped, true, r.path(rel), "counterparty BIC %q does not match the %s BIC pattern", clip(bic), r.version)
		bic = ""
	}
	if bic == "" && cp.BankCode == "" {
		return
	}
	w := &r.w
	w.open("RltdAgts")
	w.open(name)
	w.open("FinInstnId")
	if bic != "" {
		w.leaf(r.bicName(), bic)
	}
	if cp.BankCode != "" {
		w.open("ClrSysMmbId")
		r.leaf("MmbId", cp.BankCode, 35, rel, name, "FinInstnId/ClrSysMmbId/MmbId")
		w.close("ClrSysMmbId")
	}
	w.close("FinInstnId")
	w.close(name)
	w.close("RltdAgts")
}

// codeOrPrtry writes a Purpose2Choice or ReturnReason5Choice: Cd for an
// external code (1 to 4 letters or digits), else Prtry (Max35Text).
func (r *renderer) codeOrPrtry(name, v, rel string) {
	if v = strings.TrimSpace(v); v == "" {
		return
	}
	w := &r.w
	w.open(name)
	if code4(v) && strings.Trim(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == "" {
		w.leaf("Cd", v)
	} else {
		r.leaf("Prtry", v, 35, rel, "Prtry")
	}
	w.close(name)
}

// remittance writes RmtInf with the lines split into Max140Text pieces; the
// text survives whole, only its line breaks move. A Currence payment
// reference (cur) is the structured creditor reference, SCOR issued by CUR.
func (r *renderer) remittance(lines []string, cur string) {
	w := &r.w
	opened := false
	piece := func(s string) {
		if !opened {
			w.open("RmtInf")
			opened = true
		}
		w.leaf("Ustrd", s)
	}
	for _, l := range lines {
		l = strings.TrimSpace(l)
		for len(l) > 140 && utf8.RuneCountInString(l) > 140 {
			n, cut := 0, 0
			for i := range l {
				if n == 140 {
					cut = i
					break
				}
				n++
			}
			piece(l[:cut])
			l = strings.TrimSpace(l[cut:])
		}
		if l != "" {
			piece(l)
		}
	}
	if cur = r.text(cur, 35, txDtls+"/RmtInf/Strd/CdtrRefInf/Ref"); cur != "" {
		if !opened {
			w.open("RmtInf")
			opened = true
		}
		w.open("Strd")
		w.open("CdtrRefInf")
		w.open("Tp")
		w.open("CdOrPrtry")
		w.leaf("Cd", "SCOR")
		w.close("CdOrPrtry")
		w.leaf("Issr", "CUR")
		w.close("Tp")
		w.leaf("Ref", cur)
		w.close("CdtrRefInf")
		w.close("Strd")
	}
	if opened {
		w.close("RmtInf")
	}
}

// ibanPattern is the schema's IBAN2007Identifier pattern.
func ibanPattern(s string) bool {
	if len(s) < 5 || len(s) > 34 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i < 2:
			if c < 'A' || c > 'Z' {
				return false
			}
		case i < 4:
			if c < '0' || c > '9' {
				return false
			}
		default:
			if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
				return false
			}
		}
	}
	return true
}

package mx

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/converter/bankid"
	"github.com/ledgerlane/platform/services/converter/statement"
)

const (
	nsPrefix  = "urn:iso:std:iso:20022:tech:xsd:"
	nsHead    = nsPrefix + "head.001"
	maxDepth  = 64      // deeper than any camt element we know; stops pathological nesting
	maxText   = 1 << 16 // longest element text we keep; camt's longest type is Max2048Text
	rootStmt  = "BkToCstmrStmt"
	rootRpt   = "BkToCstmrAcctRpt"
	typeCamt3 = "camt.053"
	typeCamt2 = "camt.052"
)

// statementTypes are the types versionOf knows.
var statementTypes = []string{typeCamt3, typeCamt2}

// versionOf returns "camt.053.001.08" for a camt.053/camt.052 namespace URI.
func versionOf(ns string) (typ, version string, ok bool) {
	v, found := strings.CutPrefix(ns, nsPrefix)
	if !found {
		return "", "", false
	}
	switch {
	case strings.HasPrefix(v, typeCamt3+".001."):
		typ = typeCamt3
	case strings.HasPrefix(v, typeCamt2+".001."):
		typ = typeCamt2
	default:
		return "", "", false
	}
	n := v[len(typ)+5:]
	if len(n) != 2 || n[0] < '0' || n[0] > '9' || n[1] < '0' || n[1] > '9' {
		return "", "", false
	}
	return typ, v, true
}

// Detect recognises camt.053 and camt.052 from the Document namespace. It
// only looks at XML input, so MT text that happens to quote a namespace is
// not mistaken for MX.
func Detect(input []byte) (string, string, bool) {
	return scanHead(input).statement()
}

// detectStatement is Detect on in, the XML input without BOM and leading
// space.
func detectStatement(in []byte) (string, string, bool) {
	rest := in
	for {
		i := bytes.Index(rest, []byte(nsPrefix))
		if i < 0 {
			return "", "", false
		}
		rest = rest[i:]
		end := namespaceEnd(rest)
		if typ, ok := typeIn(rest[:end], statementTypes); ok {
			return typ, string(rest[len(nsPrefix):end]), true
		}
		rest = rest[len(nsPrefix):]
	}
}

// parser reads one camt document from the scanner's tokens. It keeps a
// stack of element names and acts when an element ends, so memory grows with
// the statements read, never with the nesting or size of what it skips.
type parser struct {
	sc       scanner
	wantType string // "camt.053", "camt.052" or "" for either

	typ, version string
	// stack is the local names from the document root, as spans of the
	// input (p.src): pushing a string was a pointer write, which costs a
	// GC write barrier while the collector runs.
	stack []span
	// qnames are the qualified names beside stack, to match end tags: spans
	// of the input, so that pushing one is no pointer write.
	qnames []span
	// path is stack joined with '/', and pathOff[i] where stack[i] starts in
	// it, so that the path below any element is a slice to switch on.
	path     []byte
	pathOff  []int
	nsDecls  []nsDecl // namespace declarations in scope outside the Document
	docDepth int      // stack index of Document, -1 before it
	// The current element's text: one piece of the input when it came in
	// one plain piece (nearly always), else decoded into text. The piece is
	// kept as offsets: storing a string (a pointer) for every element cost
	// a GC write barrier each while the collector runs.
	textSpan span
	text     []byte
	ccy      string       // Ccy attribute of the last Amt start tag
	badChar  *syntaxError // the input's first illegal character, if any
	plain    bool         // the input has no '&' and no CR: no text needs decoding

	hdr struct {
		msgID   string
		created time.Time
		from    string // AppHdr sender BIC
		to      string // AppHdr receiver BIC
		seen    bool   // the input has an AppHdr
		bizID   string
		appDate time.Time
		pgNb    string
		lastPg  string
	}

	stmts []*statement.Statement
	warns []statement.Warning
	seen  map[string]bool // warning codes already reported once per document

	cur    *statement.Statement
	curIdx int
	pgNb   string
	lastPg string
	prcd   *statement.Balance
	bal    balState
	ent    *entState // &entBuf inside an entry, nil outside
	entBuf entState
	entIdx int
	// entries holds the entries of all statements in one array, sized up
	// front from a count of Ntry tags; entries[stmtEntries:] are the current
	// statement's.
	entries     []statement.Entry
	stmtEntries int
	// lnPos and lnNo: the line breaks before lnPos, for lineAt.
	lnPos, lnNo int

	// The stacks start in these arrays (a camt element is rarely deeper
	// than 12): growing them from nil was a third of a statement's
	// allocations (issue 30).
	stackBuf   [16]span
	qnamesBuf  [16]span
	pathOffBuf [16]int
	pathBuf    [256]byte
}

// nsDecl is an xmlns or xmlns:prefix attribute of the element at depth.
type nsDecl struct {
	depth       int
	prefix, uri string
}

type balState struct {
	code, mark, date string
	amt              statement.Amount
	amtSet           bool
}

type entState struct {
	e          statement.Entry
	amtSet     bool
	mark       string
	status     string
	bookg, val string
	txCount    int
	// counterparty candidates: the role used depends on the direction, which
	// is only known at the end of the entry.
	dbtr, cdtr      statement.Counterparty
	ultDbtr, ultCdt string
	cdtrID          string
	instrID         string
	// refIssr is the issuer of the structured creditor reference being read.
	refIssr string
}

// Parse reads every statement (camt.053) or report (camt.052) in input.
// want is the expected message type ("camt.053", "camt.052"); a document of
// the other family is refused so that `from` means what it says.
func Parse(input []byte, want string, opts statement.Options) ([]*statement.Statement, []statement.Warning, error) {
	src, err := prepare(input)
	if err != nil {
		return nil, nil, &statement.ParseError{Line: 1, Reason: "malformed XML: " + err.Error()}
	}
	p := &parser{wantType: want, docDepth: -1}
	p.stack, p.qnames, p.pathOff, p.path = p.stackBuf[:0], p.qnamesBuf[:0], p.pathOffBuf[:0], p.pathBuf[:0]
	p.sc.src = src
	// Ntry start and end tags, prefixed or not, all end in "Ntry>".
	p.entries = make([]statement.Entry, 0, strings.Count(src, "Ntry>")/2)
	// One pass checks the characters of the whole input; an illegal one is
	// reported when the scanner reaches it, so the error can name the element.
	p.badChar, _ = checkChars(src).(*syntaxError)
	// Without any '&' or CR in the input no text needs decoding: two fast
	// scans of the whole instead of two per text.
	p.plain = strings.IndexByte(src, '&') < 0 && strings.IndexByte(src, '\r') < 0
	if err := p.run(); err != nil {
		return nil, nil, err
	}
	return p.stmts, p.warns, nil
}

// src is the text of s in the input.
func (p *parser) src(s span) string { return p.sc.src[s.off:s.end] }

// lineAt is the 1-based line of byte offset pos, counted on from the last
// offset asked for, so that naming every statement's line costs one pass
// over the input rather than one per statement.
func (p *parser) lineAt(pos int) int {
	if pos < p.lnPos {
		p.lnPos, p.lnNo = 0, 0
	}
	pos = min(pos, len(p.sc.src))
	p.lnNo += strings.Count(p.sc.src[p.lnPos:pos], "\n")
	p.lnPos = pos
	return p.lnNo + 1
}

func (p *parser) fail(field, format string, args ...any) error {
	return &statement.ParseError{Line: p.sc.line(p.sc.pos), Field: field, Reason: fmt.Sprintf(format, args...)}
}

func (p *parser) warn(code string, lossy bool, path, format string, args ...any) {
	sev := statement.SeverityInfo
	if lossy {
		sev = statement.SeverityWarning
	}
	p.warns = append(p.warns, statement.Warning{Code: code, Severity: sev, Lossy: lossy, Path: path, Message: fmt.Sprintf(format, args...)})
}

// warnOnce reports a code once per document: a 10,000-entry file should not
// produce 10,000 copies of the same finding.
func (p *parser) warnOnce(code string, lossy bool, path, format string, args ...any) {
	if p.seen[code] {
		return
	}
	if p.seen == nil {
		p.seen = map[string]bool{} // made on the first finding: most documents have none
	}
	p.seen[code] = true
	p.warn(code, lossy, path, format, args...)
}

// syntax reports malformed XML at the place the scanner found it.
func (p *parser) syntax(err error) error {
	var se *syntaxError
	if errors.As(err, &se) {
		return &statement.ParseError{Line: p.sc.line(se.pos), Field: p.pathString(), Reason: "malformed XML: " + se.msg}
	}
	return p.fail(p.pathString(), "malformed XML: %v", err)
}

func (p *parser) run() error {
	for {
		if err := p.sc.next(); err != nil {
			return p.syntax(err)
		}
		if p.badChar != nil && p.sc.pos > p.badChar.pos {
			return p.syntax(p.badChar)
		}
		switch p.sc.kind {
		case tokEOF:
			if len(p.stack) > 0 {
				return p.fail(p.pathString(), "malformed XML: unexpected EOF inside <%s>", clip(p.src(p.stack[len(p.stack)-1])))
			}
			if p.docDepth < 0 && p.typ == "" {
				return &statement.ParseError{Field: "Document", Reason: "no camt.053 or camt.052 Document element found"}
			}
			if len(p.stmts) == 0 {
				return &statement.ParseError{Field: p.rootName() + "/" + p.stmtName(), Reason: "document has no statement or report"}
			}
			return nil
		case tokStart:
			if err := p.start(); err != nil {
				return err
			}
		case tokEnd:
			if n := len(p.stack); n == 0 || p.src(p.qnames[n-1]) != p.sc.name() {
				return p.fail(p.pathString(), "malformed XML: unexpected end tag </%s>", clip(p.sc.name()))
			}
			if err := p.end(); err != nil {
				return err
			}
		case tokText:
			if err := p.charData(); err != nil {
				return err
			}
		}
	}
}

// charData collects the current element's text where the parser reads it
// (in the Document and the AppHdr); elsewhere references are only checked.
func (p *parser) charData() error {
	t, cdata := p.sc.text(), p.sc.cdata
	keep := p.docDepth >= 0 || p.inAppHdr()
	pos := p.sc.pos - len(t)
	if p.plain || !needsDecoding(t, cdata) {
		switch {
		case !keep:
			return nil
		case p.textSpan.off == p.textSpan.end && len(p.text) == 0:
			p.textSpan = span{p.sc.textOff, p.sc.textEnd}
		default:
			p.text = append(append(p.text, p.src(p.textSpan)...), t...)
			p.textSpan = span{}
		}
	} else {
		var err error
		if !keep {
			if _, err = decodeText(p.text[len(p.text):], t, pos, !cdata); err != nil {
				return p.syntax(err)
			}
			return nil
		}
		p.text = append(p.text, p.src(p.textSpan)...)
		p.textSpan = span{}
		if p.text, err = decodeText(p.text, t, pos, !cdata); err != nil {
			return p.syntax(err)
		}
	}
	if p.textSpan.end-p.textSpan.off+len(p.text) > maxText {
		return p.fail(p.pathString(), "element text longer than %d bytes", maxText)
	}
	return nil
}

// elementText is the current element's text without surrounding space.
func (p *parser) elementText() string {
	if len(p.text) > 0 {
		return string(bytes.TrimSpace(p.text))
	}
	return strings.TrimSpace(p.src(p.textSpan))
}

func (p *parser) resetText() {
	p.textSpan, p.text = span{}, p.text[:0]
}

// below is the path of the elements from stack index i down, "" when the
// stack is not that deep.
func (p *parser) below(i int) []byte {
	if i >= len(p.stack) {
		return nil
	}
	return p.path[p.pathOff[i] : len(p.path)-1] // without the trailing '/'
}

// namespace resolves a prefix ("" for the default namespace) against the
// declarations in scope.
func (p *parser) namespace(prefix string) string {
	for i := len(p.nsDecls) - 1; i >= 0; i-- {
		if p.nsDecls[i].prefix == prefix {
			return p.nsDecls[i].uri
		}
	}
	return ""
}

func (p *parser) inAppHdr() bool { return p.containsName("AppHdr") }

func (p *parser) rootName() string {
	if p.typ == typeCamt2 {
		return rootRpt
	}
	return rootStmt
}

// stmtPath is the statement element's path below the Document.
func (p *parser) stmtPath() string {
	if p.typ == typeCamt2 {
		return rootRpt + "/Rpt"
	}
	return rootStmt + "/Stmt"
}

func (p *parser) stmtName() string {
	if p.typ == typeCamt2 {
		return "Rpt"
	}
	return "Stmt"
}

// pathString names the current element for error messages, with the
// statement and entry ordinals so that a user can find it in a large file.
func (p *parser) pathString() string {
	var b strings.Builder
	if p.docDepth < 0 {
		for i, n := range p.stack {
			if i > 0 {
				b.WriteByte('/')
			}
			b.WriteString(p.src(n))
		}
		return b.String()
	}
	for i, sp := range p.stack[p.docDepth+1:] {
		n := p.src(sp)
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(n)
		switch {
		case i == 1 && (n == "Stmt" || n == "Rpt"):
			fmt.Fprintf(&b, "[%d]", p.curIdx)
		case i == 2 && n == "Ntry":
			fmt.Fprintf(&b, "[%d]", p.entIdx)
		}
	}
	return b.String()
}

// attrValue resolves references in an attribute value, which the scanner
// has checked; nearly all values have none.
func attrValue(v string) string {
	if !needsDecoding(v, false) {
		return v
	}
	b, err := decodeText(nil, v, 0, true)
	if err != nil {
		return v
	}
	return string(b)
}

func (p *parser) start() error {
	if len(p.stack) >= maxDepth {
		return p.fail(p.pathString(), "elements nested deeper than %d", maxDepth)
	}
	qname := p.sc.name()
	prefix, name := "", qname
	local := span{p.sc.nameOff, p.sc.nameEnd}
	if c := p.sc.colon; c >= 0 { // the scanner found it reading the name
		prefix, name = qname[:c], qname[c+1:]
		local.off += c + 1
	}
	p.stack = append(p.stack, local)
	p.qnames = append(p.qnames, span{p.sc.nameOff, p.sc.nameEnd})
	p.pathOff = append(p.pathOff, len(p.path))
	p.path = append(p.path, name...)
	p.path = append(p.path, '/')
	p.resetText()
	if p.docDepth < 0 {
		for rest := p.sc.attrs(); ; {
			an, av, r, ok := nextAttr(rest)
			if !ok {
				break
			}
			rest = r
			switch {
			case an == "xmlns":
				p.nsDecls = append(p.nsDecls, nsDecl{len(p.stack), "", attrValue(av)})
			case strings.HasPrefix(an, "xmlns:"):
				p.nsDecls = append(p.nsDecls, nsDecl{len(p.stack), an[len("xmlns:"):], attrValue(av)})
			}
		}
		if name == "Document" {
			ns := p.namespace(prefix)
			typ, v, ok := versionOf(ns)
			if !ok {
				if strings.HasPrefix(ns, nsPrefix) {
					return p.fail("Document", "namespace %s is not camt.053 or camt.052", clip(ns))
				}
				// A Document of some other vocabulary: keep looking, an
				// envelope may hold ours further on.
				return nil
			}
			if p.wantType != "" && !strings.EqualFold(p.wantType, typ) {
				return p.fail("Document", "document is %s, not %s", v, p.wantType)
			}
			if p.typ != "" {
				return p.fail("Document", "more than one Document in the input")
			}
			p.typ, p.version, p.docDepth = typ, v, len(p.stack)-1
		}
		return nil
	}
	rel := p.stack[p.docDepth+1:]
	if len(rel) == 1 && name != p.rootName() {
		return p.fail(p.pathString(), "expected %s", p.rootName())
	}
	if len(rel) == 2 && name == p.stmtName() {
		p.curIdx++
		p.entIdx = 0
		// Opening, closing and the two available balances: one array.
		p.cur = &statement.Statement{Kind: statement.KindStatement, Balances: make([]statement.Balance, 0, 4)}
		if p.typ == typeCamt2 {
			p.cur.Kind = statement.KindReport
		}
		p.cur.Origin = statement.Origin{Line: p.lineAt(p.sc.pos), Element: p.stmtPath(), Index: p.curIdx}
		p.pgNb, p.lastPg, p.prcd = "", "", nil
	}
	if p.cur != nil && len(rel) == 3 {
		switch name {
		case "Bal":
			p.bal = balState{}
		case "Ntry":
			p.entIdx++
			p.entBuf = entState{}
			p.ent = &p.entBuf
		}
	}
	if name == "Amt" {
		p.ccy = ""
		for rest := p.sc.attrs(); ; {
			an, av, r, ok := nextAttr(rest)
			if !ok {
				break
			}
			rest = r
			if _, local := splitName(an); local == "Ccy" {
				p.ccy = strings.TrimSpace(attrValue(av))
			}
		}
	}
	if p.ent != nil && len(rel) == 5 && name == "TxDtls" {
		p.ent.txCount++
	}
	return nil
}

func (p *parser) end() error {
	defer func() {
		depth := len(p.stack)
		for len(p.nsDecls) > 0 && p.nsDecls[len(p.nsDecls)-1].depth >= depth {
			p.nsDecls = p.nsDecls[:len(p.nsDecls)-1]
		}
		p.path = p.path[:p.pathOff[depth-1]]
		p.stack = p.stack[:depth-1]
		p.qnames = p.qnames[:depth-1]
		p.pathOff = p.pathOff[:depth-1]
		p.resetText()
	}()
	txt := p.elementText()
	if p.docDepth < 0 {
		p.appHdr(txt)
		return nil
	}
	if len(p.stack)-1 < p.docDepth {
		return nil
	}
	if len(p.stack)-1 == p.docDepth {
		// Document ended; anything after it (envelope tail) is ignored.
		p.docDepth = -1
		return nil
	}
	rel := p.stack[p.docDepth+1:]
	if len(rel) >= 2 && p.src(rel[1]) == "GrpHdr" {
		p.grpHdr(p.below(p.docDepth+3), txt)
		return nil
	}
	if p.cur == nil || len(rel) < 2 || p.src(rel[1]) != p.stmtName() {
		return nil
	}
	if len(rel) == 2 {
		return p.finishStatement()
	}
	switch p.src(rel[2]) {
	case "Bal":
		return p.balance(p.below(p.docDepth+4), txt)
	case "Ntry":
		if p.ent == nil {
			return nil
		}
		return p.entry(rel[2:], txt)
	}
	return p.stmtField(p.below(p.docDepth+3), txt)
}

func (p *parser) appHdr(txt string) {
	if !p.inAppHdr() {
		return
	}
	p.hdr.seen = true
	switch p.src(p.stack[len(p.stack)-1]) {
	case "BizMsgIdr":
		p.hdr.bizID = txt
	case "CreDt":
		if t, ok := parseDateTime(txt); ok {
			p.hdr.appDate = t
		}
	case "BICFI", "BIC":
		// Fr/FIId/FinInstnId/BICFI is the sender, the account servicer.
		if p.containsName("Fr") {
			p.hdr.from = txt
		} else if p.containsName("To") {
			p.hdr.to = txt
		}
	}
}

func (p *parser) containsName(n string) bool {
	for _, s := range p.stack {
		if p.src(s) == n {
			return true
		}
	}
	return false
}

func (p *parser) grpHdr(path []byte, txt string) {
	switch string(path) {
	case "MsgId":
		p.hdr.msgID = txt
	case "CreDtTm":
		if t, ok := parseDateTime(txt); ok {
			p.hdr.created = t
		}
	case "MsgPgntn/PgNb":
		p.hdr.pgNb = txt
	case "MsgPgntn/LastPgInd":
		p.hdr.lastPg = txt
	}
}

func (p *parser) stmtField(path []byte, txt string) error {
	s := p.cur
	switch string(path) {
	case "Id":
		s.Reference = txt
	case "StmtPgntn/PgNb", "RptPgntn/PgNb":
		p.pgNb = txt
	case "StmtPgntn/LastPgInd", "RptPgntn/LastPgInd":
		p.lastPg = txt
	case "ElctrncSeqNb":
		s.StatementNumber = txt
	case "LglSeqNb":
		if s.StatementNumber == "" {
			s.StatementNumber = txt
		}
	case "CreDtTm":
		t, ok := parseDateTime(txt)
		if !ok {
			return p.fail(p.pathString(), "invalid date-time %q", clip(txt))
		}
		s.CreatedAt = t
	case "FrToDt/FrDtTm", "FrToDt/ToDtTm":
		d, ok := parseDateOrDateTime(txt)
		if !ok {
			return p.fail(p.pathString(), "invalid date-time %q", clip(txt))
		}
		if bytes.HasSuffix(path, []byte("FrDtTm")) {
			s.FromDate = d
		} else {
			s.ToDate = d
		}
	case "Acct/Id/IBAN":
		s.Account.IBAN = strings.ToUpper(strings.ReplaceAll(txt, " ", ""))
	case "Acct/Id/Othr/Id":
		// The model keeps a valid IBAN as IBAN wherever the bank put it.
		if id := strings.ToUpper(strings.ReplaceAll(txt, " ", "")); bankid.ValidIBAN(id) {
			s.Account.IBAN = id
		} else {
			s.Account.Other = txt
		}
	case "Acct/Ccy":
		s.Account.Currency = strings.ToUpper(txt)
	case "Acct/Ownr/Nm":
		s.Account.Owner = txt
	case "Acct/Ownr/Id/OrgId/AnyBIC", "Acct/Ownr/Id/OrgId/BICOrBEI":
		s.Account.OwnerBIC = strings.ToUpper(txt)
	case "Acct/Svcr/FinInstnId/BICFI", "Acct/Svcr/FinInstnId/BIC":
		s.Account.Servicer = txt
	case "TxsSummry/TtlCdtNtries/NbOfNtries", "TxsSummry/TtlDbtNtries/NbOfNtries":
		n, err := strconv.Atoi(txt)
		if err != nil || n < 0 {
			return p.fail(p.pathString(), "invalid count %q", clip(txt))
		}
		if bytes.Contains(path, []byte("Cdt")) {
			s.Summary.CreditCount = n
		} else {
			s.Summary.DebitCount = n
		}
		s.Summary.Set = true
	case "TxsSummry/TtlCdtNtries/Sum", "TxsSummry/TtlDbtNtries/Sum":
		v, err := parseDecimal(txt)
		if err != nil {
			return p.fail(p.pathString(), "invalid sum %q", clip(txt))
		}
		if bytes.Contains(path, []byte("Cdt")) {
			s.Summary.CreditTotal = v
		} else {
			s.Summary.DebitTotal = v
		}
		s.Summary.Set = true
	case "AddtlStmtInf", "AddtlRptInf":
		s.Info = txt
	}
	return nil
}

func (p *parser) balance(path []byte, txt string) error {
	b := &p.bal
	switch string(path) {
	case "Tp/CdOrPrtry/Cd", "Tp/Cd":
		b.code = txt
	case "Tp/CdOrPrtry/Prtry", "Tp/Prtry":
		if b.code == "" {
			b.code = "PRTRY:" + txt
		}
	case "Amt":
		a, err := p.amount(txt)
		if err != nil {
			return err
		}
		b.amt, b.amtSet = a, true
	case "CdtDbtInd":
		b.mark = txt
	case "Dt/Dt", "Dt/DtTm":
		b.date = txt
	case "":
		return p.finishBalance()
	}
	return nil
}

func (p *parser) finishBalance() error {
	b := p.bal
	if !b.amtSet {
		return p.fail(p.pathString()+"/Amt", "balance without amount")
	}
	mark, ok := markOf(b.mark)
	if !ok {
		return p.fail(p.pathString()+"/CdtDbtInd", "invalid credit/debit indicator %q", clip(b.mark))
	}
	d, ok := parseDateOrDateTime(b.date)
	if !ok {
		return p.fail(p.pathString()+"/Dt", "invalid or missing balance date %q", clip(b.date))
	}
	bal := statement.Balance{Mark: mark, Date: d, Amount: b.amt}
	switch b.code {
	case "OPBD", "CLBD", "CLAV", "FWAV", "ITBD", "ITAV":
		bal.Type = statement.BalanceType(b.code)
	case "PRCD":
		// The previously closed booked balance is the opening balance when the
		// bank sends no OPBD (it means the same amount on the day before).
		bal.Type = statement.OpeningBooked
		p.prcd = &bal
		return nil
	default:
		p.warn(CodeBalanceDropped, true, p.pathString(), "balance type %s has no place in the model and was dropped", clip(b.code))
		return nil
	}
	p.cur.Balances = append(p.cur.Balances, bal)
	return nil
}

func (p *parser) entry(sub []span, txt string) error {
	en := p.ent
	e := &en.e
	if len(sub) >= 4 && p.src(sub[1]) == "NtryDtls" && p.src(sub[2]) == "TxDtls" {
		// Only the first transaction's details describe the entry; later
		// ones of a batch contribute remittance text only.
		path := p.below(p.docDepth + 6)
		if en.txCount > 1 {
			if bytes.HasPrefix(path, []byte("RmtInf/Ustrd")) {
				e.Remittance = append(e.Remittance, txt)
			}
			return nil
		}
		return p.txDetail(path, txt)
	}
	switch string(p.below(p.docDepth + 4)) {
	case "Amt":
		a, err := p.amount(txt)
		if err != nil {
			return err
		}
		e.Amount, en.amtSet = a, true
	case "CdtDbtInd":
		en.mark = txt
	case "RvslInd":
		e.Reversal = txt == "true" || txt == "1"
	case "Sts", "Sts/Cd", "Sts/Prtry":
		// .001.02 writes the code as Sts's text, later versions inside Sts/Cd;
		// the closing Sts of the latter has only whitespace.
		if txt != "" {
			en.status = txt
		}
	case "BookgDt/Dt", "BookgDt/DtTm":
		en.bookg = txt
	case "ValDt/Dt", "ValDt/DtTm":
		en.val = txt
	case "AcctSvcrRef":
		e.BankReference = txt
	case "BkTxCd/Domn/Cd":
		e.BankTxDomain = txt
	case "BkTxCd/Domn/Fmly/Cd":
		e.BankTxFamily = txt
	case "BkTxCd/Domn/Fmly/SubFmlyCd":
		e.BankTxSubFamily = txt
	case "BkTxCd/Prtry/Cd":
		e.TransactionType = txt
	case "AddtlNtryInf":
		e.Info = txt
	case "":
		return p.finishEntry()
	}
	return nil
}

func (p *parser) txDetail(path []byte, txt string) error {
	en := p.ent
	e := &en.e
	switch string(path) {
	case "Refs/EndToEndId":
		if txt != "NOTPROVIDED" {
			e.EndToEndID = txt
		}
	case "Refs/MndtId":
		e.MandateID = txt
	case "Refs/InstrId":
		en.instrID = txt
	case "Refs/AcctSvcrRef":
		if e.BankReference == "" {
			e.BankReference = txt
		}
	case "RltdPties/Dbtr/Nm", "RltdPties/Dbtr/Pty/Nm":
		en.dbtr.Name = txt
	case "RltdPties/Cdtr/Nm", "RltdPties/Cdtr/Pty/Nm":
		en.cdtr.Name = txt
	case "RltdPties/DbtrAcct/Id/IBAN":
		en.dbtr.IBAN = txt
	case "RltdPties/DbtrAcct/Id/Othr/Id":
		en.dbtr.Account = txt
	case "RltdPties/CdtrAcct/Id/IBAN":
		en.cdtr.IBAN = txt
	case "RltdPties/CdtrAcct/Id/Othr/Id":
		en.cdtr.Account = txt
	case "RltdPties/UltmtDbtr/Nm", "RltdPties/UltmtDbtr/Pty/Nm":
		en.ultDbtr = txt
	case "RltdPties/UltmtCdtr/Nm", "RltdPties/UltmtCdtr/Pty/Nm":
		en.ultCdt = txt
	case "RltdPties/Cdtr/Id/PrvtId/Othr/Id", "RltdPties/Cdtr/Pty/Id/PrvtId/Othr/Id":
		en.cdtrID = txt
	case "RltdAgts/DbtrAgt/FinInstnId/BICFI", "RltdAgts/DbtrAgt/FinInstnId/BIC":
		en.dbtr.BIC = txt
	case "RltdAgts/CdtrAgt/FinInstnId/BICFI", "RltdAgts/CdtrAgt/FinInstnId/BIC":
		en.cdtr.BIC = txt
	case "RltdAgts/DbtrAgt/FinInstnId/ClrSysMmbId/MmbId":
		en.dbtr.BankCode = txt
	case "RltdAgts/CdtrAgt/FinInstnId/ClrSysMmbId/MmbId":
		en.cdtr.BankCode = txt
	case "RmtInf/Ustrd":
		if txt != "" {
			e.Remittance = append(e.Remittance, txt)
		}
	case "Purp/Cd", "Purp/Prtry":
		e.Purpose = txt
	case "RtrInf/Rsn/Cd", "RtrInf/Rsn/Prtry":
		e.ReturnReason = txt
	case "RmtInf/Strd/CdtrRefInf/Tp/Issr":
		en.refIssr = txt
	case "RmtInf/Strd/CdtrRefInf/Ref":
		// A Currence payment reference is the Dutch banks' /REMI/STRD/CUR/.
		// Any other structured creditor reference (RF, QR, ISR) is the part
		// of the remittance a payee reconciles on; carry it as a line.
		if en.refIssr == "CUR" && e.CreditorReference == "" {
			e.CreditorReference = txt
			en.refIssr = ""
			return nil
		}
		if txt != "" {
			e.Remittance = append(e.Remittance, txt)
			p.warnOnce(CodeStructuredRemittance, false, p.pathString(), "structured creditor reference carried as an unstructured remittance line")
		}
	case "AddtlTxInf":
		e.Supplementary = txt
	}
	return nil
}

func (p *parser) finishEntry() error {
	en := p.ent
	p.ent = nil
	e := en.e
	path := p.pathString // only needed for errors and warnings
	if !en.amtSet {
		return p.fail(path()+"/Amt", "entry without amount")
	}
	mark, ok := markOf(en.mark)
	if !ok {
		return p.fail(path()+"/CdtDbtInd", "invalid credit/debit indicator %q", clip(en.mark))
	}
	e.Mark = mark
	switch en.status {
	case "BOOK", "":
	case "PDNG":
		e.Pending = true
	default:
		p.warnOnce(CodeEntryStatus, false, path()+"/Sts", "entry status %s read as booked", clip(en.status))
	}
	if en.bookg != "" {
		d, ok := parseDateOrDateTime(en.bookg)
		if !ok {
			return p.fail(path()+"/BookgDt", "invalid date %q", clip(en.bookg))
		}
		e.BookingDate = d
	}
	if en.val != "" {
		d, ok := parseDateOrDateTime(en.val)
		if !ok {
			return p.fail(path()+"/ValDt", "invalid date %q", clip(en.val))
		}
		e.ValueDate = d
	}
	switch {
	case e.ValueDate.IsZero() && e.BookingDate.IsZero():
		// Pending entries of an intraday report may carry no date at all;
		// every target needs one, and the report's own date is what a
		// reader would assume.
		d := p.fallbackDate()
		if d.IsZero() {
			return p.fail(path(), "entry has neither BookgDt nor ValDt")
		}
		e.ValueDate, e.BookingDate = d, d
		p.warnOnce(CodeEntryDateDefaulted, false, path(), "entry without dates dated from the statement")
	case e.ValueDate.IsZero():
		e.ValueDate = e.BookingDate
	case e.BookingDate.IsZero():
		e.BookingDate = e.ValueDate
	}
	// The counterparty is the payer of a credit and the payee of a debit;
	// a reversal books in the opposite direction of the original payment.
	payer := (e.Mark == statement.Credit) != e.Reversal
	if payer {
		e.Counterparty = pick(en.dbtr, en.cdtr)
	} else {
		e.Counterparty = pick(en.cdtr, en.dbtr)
	}
	e.UltimateDebtor, e.UltimateCreditor, e.CreditorID = en.ultDbtr, en.ultCdt, en.cdtrID
	// InstrId is the account owner's reference; without one, the end-to-end
	// id is what MT :61: carries there.
	e.CustomerReference = en.instrID
	switch {
	case e.CustomerReference == "":
		e.CustomerReference = e.EndToEndID
	case e.EndToEndID == en.instrID:
		// The renderer repeats a lone customer reference as EndToEndId;
		// it is not a separate end-to-end id.
		e.EndToEndID = ""
	}
	splitDK(&e)
	if en.txCount > 1 {
		p.warnOnce(CodeBatchDetails, true, path()+"/NtryDtls", "entry with %d transaction details: only the first transaction's references and parties are kept", en.txCount)
	}
	p.entries = append(p.entries, e)
	return nil
}

func pick(primary, other statement.Counterparty) statement.Counterparty {
	if primary != (statement.Counterparty{}) {
		return primary
	}
	return other
}

func (p *parser) fallbackDate() statement.Date {
	s := p.cur
	switch {
	case !s.CreatedAt.IsZero():
		return statement.DateOf(s.CreatedAt)
	case !s.ToDate.IsZero():
		return s.ToDate
	case !p.hdr.created.IsZero():
		return statement.DateOf(p.hdr.created)
	}
	return statement.Date{}
}

func (p *parser) finishStatement() error {
	s := p.cur
	p.cur = nil
	if n := len(p.entries); n > p.stmtEntries {
		// The statement's entries are its window on the shared array,
		// capped so that appending to them cannot reach the next statement's.
		s.Entries = p.entries[p.stmtEntries:n:n]
	}
	p.stmtEntries = len(p.entries)
	if s.Account.IBAN == "" && s.Account.Other == "" {
		return p.fail(p.pathString()+"/Acct/Id", "statement without account identification")
	}
	if _, ok := s.Balance(statement.OpeningBooked); !ok && p.prcd != nil {
		s.Balances = append([]statement.Balance{*p.prcd}, s.Balances...)
	} else if p.prcd != nil {
		p.warn(CodeBalanceDropped, true, p.pathString()+"/Bal", "PRCD balance dropped beside an OPBD balance")
	}
	if s.Account.Currency == "" {
		switch {
		case len(s.Balances) > 0:
			s.Account.Currency = s.Balances[0].Currency
		case len(s.Entries) > 0:
			s.Account.Currency = s.Entries[0].Currency
		}
	}
	if s.Account.Servicer == "" {
		s.Account.Servicer = p.hdr.from
	}
	if p.hdr.seen {
		s.Header = statement.Header{Set: true, From: p.hdr.from, To: p.hdr.to, BizMsgIdr: p.hdr.bizID}
	}
	s.MessageID = p.hdr.msgID
	if s.MessageID == "" {
		s.MessageID = p.hdr.bizID
	}
	if s.CreatedAt.IsZero() {
		s.CreatedAt = p.hdr.created
		if s.CreatedAt.IsZero() {
			s.CreatedAt = p.hdr.appDate
		}
	}
	// camt.053.001.02 has no statement pagination; the message pagination of
	// the group header stands in for it.
	pg, last := p.pgNb, p.lastPg
	if pg == "" {
		pg, last = p.hdr.pgNb, p.hdr.lastPg
	}
	if pg != "" {
		s.SequenceNumber = pg
		s.LastPage = last == "true" || last == "1"
		if n, err := strconv.Atoi(pg); err == nil && n == 0 {
			// Pages count from 1; a bank that numbers from 0 means its first page.
			p.warn(CodePageZero, false, s.Origin.Path()+"/"+stmtPgntnName(p.typ, p.pgNb == "")+"/PgNb", "page number 0 read as the first page")
		}
		// An MT statement split over pages has :60M:/:62M: at the page
		// boundaries; pagination is how camt says the same thing.
		openM, closeM := pageMarks(pg, true, s.LastPage)
		for i := range s.Balances {
			b := &s.Balances[i]
			switch b.Type {
			case statement.OpeningBooked:
				b.Intermediate = openM
			case statement.ClosingBooked:
				b.Intermediate = closeM
			}
		}
	} else {
		s.LastPage = true
	}
	for i := range s.Entries {
		if s.Entries[i].Currency == "" {
			s.Entries[i].Currency = s.Account.Currency
		}
	}
	p.checkBalance(s)
	p.stmts = append(p.stmts, s)
	return nil
}

// checkBalance warns, as the MT reader does, when the opening booked balance
// plus the booked entries is not the closing booked balance. Pending entries
// are not booked; a statement whose balances and entries are not all in one
// currency cannot be summed and is not checked, nor is a camt.052 without
// entries: a balance report (MT941) whose balances need not meet.
func (p *parser) checkBalance(s *statement.Statement) {
	if p.typ == typeCamt2 && len(s.Entries) == 0 {
		return
	}
	open, ok1 := s.Balance(statement.OpeningBooked)
	cl, ok2 := s.Balance(statement.ClosingBooked)
	if !ok1 || !ok2 || open.Currency != cl.Currency {
		return
	}
	for i := range s.Entries {
		if e := &s.Entries[i]; !e.Pending && e.Currency != open.Currency {
			return
		}
	}
	// Nearly every statement sums in int64 units of 10^-5 without
	// allocating; decimal arithmetic is the fallback and decides a mismatch.
	if acc, ok := micros(open.Mark, open.Value); ok {
		for i := range s.Entries {
			if e := &s.Entries[i]; !e.Pending {
				v, ok2 := micros(e.Mark, e.Value)
				if !ok2 || (v > 0 && acc > math.MaxInt64-v) || (v < 0 && acc < math.MinInt64-v) {
					ok = false
					break
				}
				acc += v
			}
		}
		if want, ok2 := micros(cl.Mark, cl.Value); ok && ok2 && acc == want {
			return
		}
	}
	sum := signed(open.Mark, open.Value)
	for i := range s.Entries {
		if e := &s.Entries[i]; !e.Pending {
			sum = sum.Add(signed(e.Mark, e.Value))
		}
	}
	if want := signed(cl.Mark, cl.Value); !sum.Equal(want) {
		p.warn(CodeBalanceMismatch, true, s.Origin.Path()+"/Bal", "opening balance plus booked entries is %s, closing balance is %s", sum.String(), want.String())
	}
}

// micros is the signed amount in units of 10^-5, when it is exactly that
// and fits an int64 with room to add.
func micros(m statement.Mark, v decimal.Decimal) (int64, bool) {
	e := v.Exponent()
	if e < -5 || e > 0 || v.NumDigits() > 12 {
		return 0, false
	}
	c := v.CoefficientInt64() * powersOf10[e+5]
	if m == statement.Debit {
		c = -c
	}
	return c, true
}

func signed(m statement.Mark, v decimal.Decimal) decimal.Decimal {
	if m == statement.Debit {
		return v.Neg()
	}
	return v
}

// pageMarks is how a camt reader marks the opening and closing booked
// balances of a statement from its pagination (page number pg, when paged):
// the opening balance is intermediate (:60M:) on any page after the first,
// the closing one (:62M:) on any page but the last. Page numbers count from
// 1; 0 (which some banks write) and leading zeros are the first page too,
// and a page number that is not a number is not the first page.
func pageMarks(pg string, paged, last bool) (opening, closing bool) {
	if !paged {
		return false, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(pg))
	return err != nil || n > 1, !last
}

func stmtPgntnName(typ string, grpHdr bool) string {
	switch {
	case grpHdr:
		return "GrpHdr/MsgPgntn"
	case typ == typeCamt2:
		return "RptPgntn"
	}
	return "StmtPgntn"
}

func (p *parser) amount(txt string) (statement.Amount, error) {
	v, err := parseDecimal(txt)
	if err != nil {
		return statement.Amount{}, p.fail(p.pathString(), "invalid amount %q", clip(txt))
	}
	ccy := strings.ToUpper(p.ccy)
	if ccy != "" && !isCurrency(ccy) {
		return statement.Amount{}, p.fail(p.pathString()+"/@Ccy", "invalid currency %q", clip(p.ccy))
	}
	if ccy == "" && p.cur != nil {
		ccy = p.cur.Account.Currency
	}
	return statement.Amount{Value: v, Currency: ccy}, nil
}

// parseDecimal accepts the xs:decimal lexical form without sign: digits with
// at most one '.', as camt amounts are non-negative. decimal.NewFromString
// alone would also take exponents and signs.
func parseDecimal(s string) (decimal.Decimal, error) {
	if s == "" || len(s) > 40 {
		return decimal.Decimal{}, errors.New("bad decimal")
	}
	digits, dots := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		case c == '+' && i == 0:
		default:
			return decimal.Decimal{}, errors.New("bad decimal")
		}
	}
	if digits == 0 || dots > 1 {
		return decimal.Decimal{}, errors.New("bad decimal")
	}
	s = strings.TrimPrefix(s, "+")
	if digits <= 18 {
		// Every real amount: the coefficient fits an int64, which spares
		// NewFromString's parsing through math/big. Same value, same exponent.
		var coef int64
		exp := int32(0)
		for i := 0; i < len(s); i++ {
			if s[i] == '.' {
				exp = -int32(len(s) - i - 1)
				continue
			}
			coef = coef*10 + int64(s[i]-'0')
		}
		return decimal.New(coef, exp), nil
	}
	return decimal.NewFromString(s)
}

func isCurrency(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

func markOf(s string) (statement.Mark, bool) {
	switch s {
	case "CRDT":
		return statement.Credit, true
	case "DBIT":
		return statement.Debit, true
	}
	return "", false
}

var dateTimeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04:05Z0700",
}

func parseDateTime(s string) (time.Time, bool) {
	for _, l := range dateTimeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// parseDateOrDateTime reads an ISODate or ISODateTime as the calendar date
// written in it: a bank's "2024-03-01T00:30:00+01:00" is 1 March for the
// account holder, whatever it is in UTC.
func parseDateOrDateTime(s string) (statement.Date, bool) {
	if len(s) < 10 {
		return statement.Date{}, false
	}
	if len(s) > 10 {
		if _, ok := parseDateTime(s); !ok {
			// ISODate may carry a zone: 2024-03-01+01:00 or 2024-03-01Z.
			if rest := s[10:]; rest != "Z" && !(len(rest) == 6 && (rest[0] == '+' || rest[0] == '-')) {
				return statement.Date{}, false
			}
		}
	}
	return parseISODate(s[:10])
}

// parseISODate reads YYYY-MM-DD, refusing dates that do not exist.
func parseISODate(s string) (statement.Date, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return statement.Date{}, false
	}
	num := func(t string) int {
		n := 0
		for i := 0; i < len(t); i++ {
			if t[i] < '0' || t[i] > '9' {
				return -1
			}
			n = n*10 + int(t[i]-'0')
		}
		return n
	}
	y, m, d := num(s[:4]), num(s[5:7]), num(s[8:10])
	if y < 0 || m < 1 || m > 12 || d < 1 {
		return statement.Date{}, false
	}
	// The day after the last of the month normalises into the next month.
	if last := time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day(); d > last {
		return statement.Date{}, false
	}
	return statement.Date{Year: y, Month: time.Month(m), Day: d}, true
}

// clip keeps error messages short and free of bulk message content.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// splitDK undoes the German banks' (DK) proprietary code TYPE+GVC[+PRIMANOTA
// [+TEXTKEY]] so that the GVC reaches a German :86: again.
func splitDK(e *statement.Entry) {
	typ, rest, ok := strings.Cut(e.TransactionType, "+")
	if !ok || len(typ) != 4 {
		return
	}
	gvc, rest, more := strings.Cut(rest, "+")
	if len(gvc) != 3 || strings.Trim(gvc, "0123456789") != "" {
		return
	}
	var primanota, textKey string
	if more {
		primanota, textKey, more = strings.Cut(rest, "+")
		if more && strings.Contains(textKey, "+") {
			return // more than four parts: not the DK convention
		}
	}
	e.TransactionType, e.GVC, e.Primanota, e.TextKeyAddition = typ, gvc, primanota, textKey
}

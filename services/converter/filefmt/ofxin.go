package filefmt

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// Reading OFX and QBO (a QBO file is OFX 1.0.2 with Intuit's bank id). One
// reader takes both generations: OFX 1.x is SGML, whose leaf elements have
// no closing tag (<TRNAMT>-12.34), and OFX 2.x is XML, whose leaves are
// closed (<TRNAMT>-12.34</TRNAMT>). Aggregates are closed in both. Only the
// bank and credit card statements (STMTRS, CCSTMTRS) are read: their
// transactions are what a statement import needs. Investment statements
// are refused.

// ofxElement is an element: a leaf with text, or an aggregate with children.
type ofxElement struct {
	name string
	text string
	line int
	kids []*ofxElement
}

func (n *ofxElement) child(name string) *ofxElement {
	for _, k := range n.kids {
		if k.name == name {
			return k
		}
	}
	return nil
}

func (n *ofxElement) leaf(path ...string) (string, int) {
	cur := n
	for _, p := range path {
		if cur = cur.child(p); cur == nil {
			return "", 0
		}
	}
	return cur.text, cur.line
}

// find collects, depth first, the aggregates named name under n.
func (n *ofxElement) find(name string, out []*ofxElement) []*ofxElement {
	for _, k := range n.kids {
		if k.name == name {
			out = append(out, k)
			continue
		}
		out = k.find(name, out)
	}
	return out
}

// ofxMaxDepth bounds nesting; real files nest about eight deep.
const ofxMaxDepth = 32

// DetectOFX reports whether input looks like an OFX or QBO file: an OFX 1.x
// header, or an XML declaration followed by the OFX processing instruction.
func DetectOFX(input []byte) bool {
	head := bytes.TrimLeft(bytes.TrimPrefix(input, []byte("\xef\xbb\xbf")), " \t\r\n")
	if len(head) > 1024 {
		head = head[:1024]
	}
	return bytes.HasPrefix(head, []byte("OFXHEADER:")) || bytes.HasPrefix(head, []byte("<OFX>")) ||
		bytes.HasPrefix(head, []byte("<?xml")) && bytes.Contains(head, []byte("<?OFX "))
}

// ParseOFX reads the bank and credit card statements of an OFX or QBO file.
// Faults are *statement.ParseError naming the line and the element.
func ParseOFX(input []byte) ([]*statement.Statement, error) {
	root, err := ofxTree(input)
	if err != nil {
		return nil, err
	}
	rs := root.find("STMTRS", nil)
	rs = append(rs, root.find("CCSTMTRS", nil)...)
	if len(rs) == 0 {
		return nil, &statement.ParseError{Field: "OFX", Reason: "no bank or credit card statement (STMTRS or CCSTMTRS); investment statements are not read"}
	}
	var out []*statement.Statement
	for _, r := range rs {
		st, err := ofxStatement(r)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

func ofxStatement(r *ofxElement) (*statement.Statement, error) {
	st := &statement.Statement{Kind: statement.KindStatement}
	cur, line := r.leaf("CURDEF")
	if !isCurrency(cur) {
		return nil, &statement.ParseError{Line: max(line, r.line), Field: r.name + "/CURDEF", Reason: "an ISO 4217 currency code is required"}
	}
	st.Account.Currency = cur
	if id, _ := r.leaf("BANKACCTFROM", "ACCTID"); id != "" {
		st.Account.Other = id
	} else if id, _ := r.leaf("CCACCTFROM", "ACCTID"); id != "" {
		st.Account.Other = id
	}
	list := r.child("BANKTRANLIST")
	if list == nil {
		return st, nil
	}
	for _, t := range list.kids {
		if t.name != "STMTTRN" {
			continue
		}
		e, err := ofxEntry(t, cur)
		if err != nil {
			return nil, err
		}
		st.Entries = append(st.Entries, e)
	}
	return st, nil
}

func ofxEntry(t *ofxElement, currency string) (statement.Entry, error) {
	fault := func(line int, field, reason string) error {
		return &statement.ParseError{Line: max(line, t.line), Field: "STMTTRN/" + field, Reason: reason}
	}
	var e statement.Entry
	posted, line := t.leaf("DTPOSTED")
	d, ok := ofxInDate(posted)
	if !ok {
		return e, fault(line, "DTPOSTED", "a posting date (YYYYMMDD…) is required")
	}
	e.BookingDate, e.ValueDate = d, d
	if user, line := t.leaf("DTUSER"); user != "" {
		if e.ValueDate, ok = ofxInDate(user); !ok {
			return e, fault(line, "DTUSER", "not a date (YYYYMMDD…)")
		}
	}
	amt, line := t.leaf("TRNAMT")
	v, ok := csvAmount(amt, ".")
	if !ok {
		// Some European banks write the decimal mark as a comma.
		v, ok = csvAmount(amt, ",")
	}
	if !ok {
		return e, fault(line, "TRNAMT", "an amount (digits, one decimal mark, an optional sign) is required")
	}
	e.Mark = statement.Credit
	if v.IsNegative() {
		e.Mark, v = statement.Debit, v.Neg()
	}
	e.Amount = statement.Amount{Value: v, Currency: currency}
	// CURRENCY (not ORIGCURRENCY) means the amount is in that currency.
	if c, line := t.leaf("CURRENCY", "CURSYM"); c != "" {
		if !isCurrency(c) {
			return e, fault(line, "CURRENCY/CURSYM", "not an ISO 4217 currency code")
		}
		e.Currency = c
	}
	e.TransactionType, _ = t.leaf("TRNTYPE")
	e.BankReference, _ = t.leaf("FITID")
	e.CustomerReference, _ = t.leaf("REFNUM")
	if name, _ := t.leaf("NAME"); name != "" {
		e.Counterparty.Name = name
	} else {
		e.Counterparty.Name, _ = t.leaf("PAYEE", "NAME")
	}
	if memo, _ := t.leaf("MEMO"); memo != "" {
		e.Remittance = []string{memo}
	}
	return e, nil
}

// ofxInDate reads the date part of an OFX datetime (YYYYMMDD, then optional
// time and zone, which a booking date does not need).
func ofxInDate(s string) (statement.Date, bool) {
	if len(s) < 8 || !digits(s[:8]) {
		return statement.Date{}, false
	}
	y, _ := strconv.Atoi(s[:4])
	m, _ := strconv.Atoi(s[4:6])
	d, _ := strconv.Atoi(s[6:8])
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	// Year 0 would read as no date at all (statement.Date's zero value).
	if y < 1 || t.Year() != y || int(t.Month()) != m || t.Day() != d {
		return statement.Date{}, false
	}
	return statement.DateOf(t), true
}

// ofxTree reads the elements from <OFX> to </OFX> into a tree. A tag
// followed by text is a leaf (its closing tag, if any, is skipped); a tag
// followed by another tag opens an aggregate, which its closing tag closes.
func ofxTree(input []byte) (*ofxElement, error) {
	start := bytes.Index(input, []byte("<OFX>"))
	if start < 0 {
		return nil, &statement.ParseError{Line: 1, Field: "OFX", Reason: "no <OFX> element"}
	}
	line := 1 + bytes.Count(input[:start], []byte("\n"))
	s := input[start:]
	root := &ofxElement{name: "#root"}
	stack := []*ofxElement{root}
	var lastLeaf *ofxElement
	for len(s) > 0 {
		lt := bytes.IndexByte(s, '<')
		if lt < 0 {
			if len(bytes.TrimSpace(s)) > 0 {
				return nil, &statement.ParseError{Line: line, Reason: "text after the last element"}
			}
			break
		}
		if len(bytes.TrimSpace(s[:lt])) > 0 {
			return nil, &statement.ParseError{Line: line, Reason: "text outside an element"}
		}
		line += bytes.Count(s[:lt], []byte("\n"))
		s = s[lt:]
		gt := bytes.IndexByte(s, '>')
		if gt < 0 {
			return nil, &statement.ParseError{Line: line, Reason: "a tag is not closed with >"}
		}
		tag := string(s[1:gt])
		s = s[gt+1:]
		switch {
		case strings.HasPrefix(tag, "?") || strings.HasPrefix(tag, "!"):
			continue // processing instructions and comments
		case strings.HasPrefix(tag, "/"):
			name := tag[1:]
			if lastLeaf != nil && lastLeaf.name == name {
				lastLeaf = nil
				continue
			}
			lastLeaf = nil
			i := len(stack) - 1
			for i > 0 && stack[i].name != name {
				i--
			}
			if i == 0 {
				return nil, &statement.ParseError{Line: line, Field: name, Reason: fmt.Sprintf("</%s> closes no open element", name)}
			}
			stack = stack[:i]
			if len(stack) == 1 {
				return root.kids[0], nil // </OFX>: anything after it is not read
			}
			continue
		}
		if !ofxName(tag) {
			return nil, &statement.ParseError{Line: line, Field: tag, Reason: "not an element name"}
		}
		lt = bytes.IndexByte(s, '<')
		if lt < 0 {
			lt = len(s)
		}
		text := string(bytes.TrimSpace(s[:lt]))
		n := &ofxElement{name: tag, line: line}
		parent := stack[len(stack)-1]
		if parent == root && (tag != "OFX" || len(root.kids) > 0) {
			return nil, &statement.ParseError{Line: line, Field: tag, Reason: "the file must be one <OFX> element"}
		}
		parent.kids = append(parent.kids, n)
		lastLeaf = nil
		if text != "" {
			n.text = ofxUnescape(text)
			line += bytes.Count(s[:lt], []byte("\n"))
			s = s[lt:]
			lastLeaf = n
			continue
		}
		if len(stack) > ofxMaxDepth {
			return nil, &statement.ParseError{Line: line, Field: tag, Reason: "elements nest too deep"}
		}
		stack = append(stack, n)
	}
	return nil, &statement.ParseError{Line: line, Field: "OFX", Reason: "the file ends before </OFX>"}
}

func ofxName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_') {
			return false
		}
	}
	return true
}

var ofxEntities = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&", "&quot;", `"`, "&apos;", "'", "&nbsp;", " ")

func ofxUnescape(s string) string { return ofxEntities.Replace(s) }

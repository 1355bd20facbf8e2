package mt

import (
	"strings"
	"time"

	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// status reads an MT199/MT299 whose :79: carries a reject in the SWIFT
// reject guidelines' form:
//
//	/REJT/nnn          (nnn: the rejected MT, 99 when it was not an MT)
//	/CODE/[info]       (the reason code, ISO ExternalStatusReason1Code)
//	/MREF/ref          (the original message reference)
//	/TREF/ref          (the original transaction's end-to-end reference)
//	/TEXT/text         (free text; /TEXT//UETR/uuid carries the UETR)
//
// A status other than a reject is read in the gpi confirmation form
// (gpiStatus); a free-format MT199 in neither form is no status and is
// refused.
func (p *payParser) status(pay *payment.Payment) error {
	seen := single{}
	var f79 *finField
	for i := range p.m.fields {
		f := &p.m.fields[i]
		p.once(&seen, f)
		var err error
		switch f.tag {
		case "20":
			pay.MessageID, err = p.reference(f)
		case "21":
			pay.InstructionID, err = p.reference(f)
		case "79":
			f79 = f
		default:
			p.warn(payment.CodeUnknownField, f, "field :%s: is not defined for MT%s", f.tag, p.typ)
		}
		if err != nil {
			return err
		}
	}
	if err := p.mandatory(present{"20", seen.has("20") && pay.MessageID != ""}, present{"21", seen.has("21") && pay.InstructionID != ""}, present{"79", seen.has("79") && f79 != nil}); err != nil {
		return err
	}
	if len(f79.lines) > 0 && gpiTime(strings.TrimSpace(f79.lines[0])) {
		return p.gpiStatus(pay, f79)
	}
	items := codedItems(f79.lines, func(l string) string { return strings.TrimRight(l, " ") })
	if len(items) == 0 || items[0].code != "REJT" {
		return p.fail(f79, "MT%s carries no status: the first line of :79: is neither /REJT/ (a reject) nor a gpi status time //YYMMDDHHMM+HHMM (a free-format MT%s has no pacs.002 meaning, and no other MX it converts to: CBPR+ carries free-format correspondence as admi.024, which this converter does not write; send it as it is, or use camt.056 (MT%c92) to request a cancellation and camt.029 (MT%c96) to answer one)", p.typ, p.typ, p.typ[0], p.typ[0])
	}
	pay.TransactionStatus = "RJCT"
	if t := strings.TrimSpace(items[0].text); len(t) == 3 && allDigits(t) {
		pay.OriginalMessageType = "MT" + t
	} else if t != "" && t != "99" {
		p.warn(payment.CodeNonstandard, f79, "/REJT/%s does not name an MT type (3 digits, or 99)", clip(t))
	}
	for i, it := range items[1:] {
		switch {
		case it.code == "MREF":
			pay.OriginalMessageID = strings.TrimSpace(it.text)
		case it.code == "TREF":
			pay.EndToEndID = strings.TrimSpace(it.text)
		case it.code == "TEXT":
			if u, ok := strings.CutPrefix(it.text, "/UETR/"); ok && payment.IsUETR(strings.TrimSpace(u)) {
				u = strings.TrimSpace(u)
				if pay.UETR != "" && pay.UETR != u {
					p.warn(payment.CodeNonstandard, f79, "the UETR in /TEXT/ %s differs from block 3's %s; block 3's is kept", u, pay.UETR)
				} else {
					pay.UETR = u
				}
				continue
			}
			pay.StatusInfo = append(pay.StatusInfo, it.text)
		case i == 0 && reasonItem(it, &pay.StatusReason, &pay.StatusInfo):
		default:
			p.warn(payment.CodeFieldDropped, f79, ":79: line /%s/ is not a reject line this converter maps (reason code, /MREF/, /TREF/, /TEXT/)", clip(it.code))
		}
	}
	if pay.StatusReason == "" {
		p.warn(payment.CodeNonstandard, f79, ":79: has no reason code line (/CODE/) after /REJT/")
	}
	return nil
}

// A status other than a reject travels in an MT199 (MT299 for a cover) in
// the form of the SWIFT gpi status confirmation, which is how CBPR+
// correspondents exchange a pacs.002's positive and pending statuses on MT:
//
//	//YYMMDDHHMM+HHMM   (when the status was reached, with its UTC offset)
//	//CODE[/REASON]      (TxSts: ACSP, ACCC, ACSC, PDNG, ...; the reason, e.g. G000)
//	//text               (further lines: the confirming agents, amounts, ...)
//
// :21: is the original transaction's reference and block 3 :121: its UETR.

// gpiTime reports whether l is the first line of a gpi status confirmation.
func gpiTime(l string) bool {
	if len(l) != 17 || !strings.HasPrefix(l, "//") || (l[12] != '+' && l[12] != '-') {
		return false
	}
	return allDigits(l[2:12]) && allDigits(l[13:])
}

// parseGPITime reads YYMMDDHHMM±HHMM.
func parseGPITime(s string) (time.Time, bool) {
	t, err := time.Parse("0601021504", s[:10])
	if err != nil {
		return time.Time{}, false
	}
	oh, om := int(s[11]-'0')*10+int(s[12]-'0'), int(s[13]-'0')*10+int(s[14]-'0')
	if oh > 13 || om > 59 {
		return time.Time{}, false
	}
	off := (oh*60 + om) * 60
	if s[10] == '-' {
		off = -off
	}
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), 0, 0, time.FixedZone("", off)), true
}

func (p *payParser) gpiStatus(pay *payment.Payment, f79 *finField) error {
	var lines []string
	for _, l := range f79.lines {
		if l = strings.TrimRight(l, " "); l == "" {
			continue
		}
		switch {
		case strings.HasPrefix(l, "//"):
			lines = append(lines, l[2:])
		case len(lines) > 0:
			lines[len(lines)-1] += " " + l
		}
	}
	t, ok := parseGPITime(lines[0])
	if !ok {
		return p.fail(f79, "T50: the status time %q on :79: line 1 is not a date and time YYMMDDHHMM+HHMM", clip(lines[0]))
	}
	pay.StatusTime = t
	if len(lines) < 2 {
		return p.fail(f79, "T13: the status code line (//CODE[/REASON]) after the status time is missing")
	}
	code, reason, _ := strings.Cut(lines[1], "/")
	if len(code) != 4 || !isUpperAlnum(code) {
		return p.fail(f79, "T47: the status %q on :79: line 2 is not a code of 4 letters (ACSP, ACCC, RJCT, ...)", clip(code))
	}
	pay.TransactionStatus = code
	pay.StatusReason = strings.TrimSuffix(reason, "/")
	pay.StatusInfo = append(pay.StatusInfo, lines[2:]...)
	return nil
}

func isUpperAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return s != ""
}

// status writes the block 4 of an MT199/MT299 reject from a pacs.002.
func (r *payRenderer) status(p *payment.Payment, mtType string) error {
	ref := firstNonEmpty(p.MessageID, p.Header.BizMsgIdr)
	if ref == "" {
		r.w.Add(payment.CodeFieldDefaulted, r.path(":20:"), 0, "no message id: NONREF is used")
		ref = "NONREF"
	}
	r.line("20", r.fit(r.x(ref), 16, "GrpHdr/MsgId", ":20:"))
	rel, src := p.InstructionID, "OrgnlInstrId"
	if rel == "" {
		rel, src = p.OriginalMessageID, "OrgnlGrpInf/OrgnlMsgId"
	}
	if rel == "" {
		r.w.Add(payment.CodeFieldDefaulted, r.path(":21:"), 0, "no original reference: :21: NONREF")
		rel = "NONREF"
	}
	r.line("21", r.fit(r.x(rel), 16, src, ":21:"))
	if p.TransactionStatus != "RJCT" {
		return r.gpiStatus(p, rel)
	}
	if !p.StatusTime.IsZero() {
		r.w.Add(payment.CodeFieldDropped, r.path("TxInfAndSts/AccptncDtTm"), 0, "the status time has no place in a reject's :79: (/REJT/ form)")
	}
	r.transferDropped(p, mtType)
	var lines []string
	typ := "99"
	if t := p.OriginalMessageType; len(t) == 5 && strings.HasPrefix(t, "MT") && allDigits(t[2:]) {
		typ = t[2:]
	} else if t != "" && t != "NOTPROVIDED" {
		r.w.Add(payment.CodeFieldDropped, r.path("OrgnlGrpInf/OrgnlMsgNmId"), 0, "original message name %q is not an MT type: /REJT/99 is written", clip(t))
	}
	lines = append(lines, "/REJT/"+typ)
	info := p.StatusInfo
	reason := p.StatusReason
	if reason == "" {
		r.w.Add(payment.CodeFieldDefaulted, r.path("StsRsnInf/Rsn/Cd"), 0, "no reason code: /NARR/ is written")
		reason = "NARR"
	}
	l2 := "/" + r.x(reason) + "/"
	if len(info) > 0 {
		l2 += r.fit(r.x(info[0]), 50-len(l2), "StsRsnInf/AddtlInf[1]", ":79: reason line")
		info = info[1:]
	}
	lines = append(lines, l2)
	if p.OriginalMessageID != "" {
		lines = append(lines, "/MREF/"+r.fit(r.x(p.OriginalMessageID), 16, "OrgnlGrpInf/OrgnlMsgId", ":79: /MREF/"))
	}
	if p.EndToEndID != "" {
		lines = append(lines, "/TREF/"+r.fit(r.x(p.EndToEndID), 16, "OrgnlEndToEndId", ":79: /TREF/"))
	}
	for i, t := range info {
		lines = append(lines, r.wrapText("/TEXT/"+r.x(t), "StsRsnInf/AddtlInf["+itoa(i+2)+"]")...)
	}
	if p.UETR != "" {
		lines = append(lines, "/TEXT//UETR/"+p.UETR)
	}
	r.field("79", lines)
	return nil
}

// gpiStatus writes the :79: of a status other than a reject in the gpi
// status confirmation form; rel is the :21: written.
func (r *payRenderer) gpiStatus(p *payment.Payment, rel string) error {
	code := p.TransactionStatus
	if len(code) != 4 || !isUpperAlnum(code) {
		return r.fail("TxInfAndSts/TxSts", "the status "+clip(code)+" is not a code of 4 letters")
	}
	t := p.StatusTime
	if t.IsZero() {
		t = firstTime(p.CreatedAt, p.Header.CreatedAt)
		r.w.Add(payment.CodeFieldDefaulted, r.path("TxInfAndSts/AccptncDtTm"), 0, "no status time (AccptncDtTm): the report's creation time is written on :79: line 1")
	}
	_, off := t.Zone()
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	line1 := "//" + t.Format("0601021504") + string(sign) + twoDigits(off/3600) + twoDigits(off/60%60)
	line2 := "//" + code
	if p.StatusReason != "" {
		line2 += "/" + r.fit(r.x(p.StatusReason), 48-len(line2), "TxInfAndSts/StsRsnInf/Rsn", ":79: status line")
	}
	lines := []string{line1, line2}
	for i, s := range p.StatusInfo {
		lines = append(lines, "//"+r.fit(r.x(s), 48, "TxInfAndSts/StsRsnInf/AddtlInf["+itoa(i+1)+"]", ":79: line"))
	}
	if p.OriginalMessageID != "" && p.OriginalMessageID != rel && p.InstructionID != "" {
		r.w.Add(payment.CodeFieldDropped, r.path("TxInfAndSts/OrgnlGrpInf/OrgnlMsgId"), 0, "original message id %s has no place in a gpi status confirmation beside :21: %s", clip(p.OriginalMessageID), clip(rel))
	}
	if t := p.OriginalMessageType; t != "" && t != "NOTPROVIDED" {
		r.w.Add(payment.CodeFieldDropped, r.path("TxInfAndSts/OrgnlGrpInf/OrgnlMsgNmId"), 0, "original message name %s has no place in a gpi status confirmation", clip(t))
	}
	if p.EndToEndID != "" && p.EndToEndID != rel {
		r.w.Add(payment.CodeFieldDropped, r.path("TxInfAndSts/OrgnlEndToEndId"), 0, "original end-to-end id %s has no place in a gpi status confirmation", clip(p.EndToEndID))
	}
	r.transferDropped(p, "199")
	r.field("79", lines)
	return nil
}

// now is the clock for a status time neither the report nor its header
// gives (a pacs.002 without CreDtTm); tests replace it.
var now = time.Now

// transferDropped warns when a status carries the rejected transfer
// (pacs.002 OrgnlTxRef: amount, date, debtor, creditor and their agents; an
// MT103/202/205 reject's fields), which an MT199/MT299 has no field for.
func (r *payRenderer) transferDropped(p *payment.Payment, mtType string) {
	if p.Amount.Currency != "" || !p.SettlementDate.IsZero() || p.Debtor != nil || p.DebtorFI != nil || p.Creditor != nil || p.CreditorFI != nil || p.DebtorAgent != nil || p.CreditorAgent != nil {
		r.w.Add(payment.CodeFieldDropped, r.path("TxInfAndSts/OrgnlTxRef"), 0, "the rejected transfer's amount, settlement date and parties have no field in MT%s", mtType)
	}
}

func firstTime(ts ...time.Time) time.Time {
	for _, t := range ts {
		if !t.IsZero() {
			return t
		}
	}
	return now().UTC()
}

func twoDigits(n int) string {
	return string([]byte{byte('0' + n/10%10), byte('0' + n%10)})
}

// wrapText breaks a :79: item into lines of 50 with // continuations.
func (r *payRenderer) wrapText(s, src string) []string {
	var out []string
	for first := true; s != ""; first = false {
		var line string
		line, s = continuedLine(s, 50, first)
		out = append(out, line)
	}
	_ = src
	return out
}

func (r *payRenderer) fail(field, reason string) error {
	return &statement.ParseError{Message: r.no, Field: field, Reason: reason}
}

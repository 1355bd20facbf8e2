package mt

import (
	"strings"

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
// A free-format MT199 without /REJT/ is no status and is refused.
func (p *payParser) status(pay *payment.Payment) error {
	seen := single{}
	var f79 *finField
	for i := range p.m.fields {
		f := &p.m.fields[i]
		p.once(seen, f)
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
	for _, req := range []struct{ tag, name string }{{"20", "20"}, {"21", "21"}, {"79", "79"}} {
		if !seen[req.tag] || req.tag == "79" && f79 == nil || req.tag == "20" && pay.MessageID == "" || req.tag == "21" && pay.InstructionID == "" {
			return p.fail(nil, "T13: mandatory field :%s: is missing", req.name)
		}
	}
	type item struct{ code, text string }
	var items []item
	for _, l := range f79.lines {
		l = strings.TrimRight(l, " ")
		switch {
		case l == "":
		case strings.HasPrefix(l, "//") && len(items) > 0:
			items[len(items)-1].text += l[2:]
		case strings.HasPrefix(l, "/"):
			code, text, _ := strings.Cut(l[1:], "/")
			items = append(items, item{code, text})
		case len(items) > 0:
			items[len(items)-1].text += " " + l
		default:
			items = append(items, item{"", l})
		}
	}
	if len(items) == 0 || items[0].code != "REJT" {
		return p.fail(f79, "MT%s carries no status: the first line of :79: is not /REJT/ (a free-format MT%s has no pacs.002 meaning)", p.typ, p.typ)
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
		case i == 0 && len(it.code) == 4 && isUpperAlnum(it.code):
			pay.StatusReason = it.code
			if t := strings.TrimSuffix(it.text, "/"); t != "" {
				pay.StatusInfo = append(pay.StatusInfo, t)
			}
		default:
			p.warn(payment.CodeFieldDropped, f79, ":79: line /%s/ is not a reject line this converter maps (reason code, /MREF/, /TREF/, /TEXT/)", clip(it.code))
		}
	}
	if pay.StatusReason == "" {
		p.warn(payment.CodeNonstandard, f79, ":79: has no reason code line (/CODE/) after /REJT/")
	}
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
	if p.TransactionStatus != "RJCT" {
		return r.fail("TxInfAndSts/TxSts", "only a rejection (TxSts RJCT) has an MT"+mtType+" form (/REJT/); the status is "+clip(p.TransactionStatus))
	}
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

// wrapText breaks a :79: item into lines of 50 with // continuations.
func (r *payRenderer) wrapText(s, src string) []string {
	var out []string
	for first := true; s != ""; first = false {
		width, prefix := 50, ""
		if !first {
			width, prefix = 48, "//"
		}
		n := min(width, len(s))
		for n > 1 && n < len(s) && s[n-1] == ' ' {
			n-- // readers drop a line's trailing spaces: start the next line with them
		}
		out = append(out, prefix+s[:n])
		s = s[n:]
	}
	_ = src
	return out
}

func (r *payRenderer) fail(field, reason string) error {
	return &statement.ParseError{Message: r.no, Field: field, Reason: reason}
}

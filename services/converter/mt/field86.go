package mt

import (
	"strings"

	"github.com/ledgerlane/platform/services/converter/bankid"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// info86 maps an entry's :86: text. The plain profile keeps it as free text
// (lines joined with "\n"); the german profile reads the structured form of
// the German banking industry (DFÜ-Abkommen): a 3-digit business transaction
// code (GVC) and ?nn subfields, with SEPA identifiers inside the remittance.
//
// The plain profile (the default) and the sepa profile read the slash-coded
// SEPA form of the Dutch banks when they find it (field86_sepa.go), and
// ASN's leading counterparty line; other text is free text. The plain
// profile takes the form when a line starts with a code, sepa also when a
// code stands anywhere.
func (p *msgParser) info86(e *statement.Entry, lines []string) {
	if p.profile != "german" {
		if !p.sepa86(e, lines, p.profile == "sepa") {
			p.trimLines(lines, 0)
			e.Info = p.a.text.join(lines, "\n")
		}
		return
	}
	if !structured86(lines[0]) {
		p.warn(CodeUnstructured86, ":86: is not structured (GVC?nn); kept as text")
		p.trimLines(lines, 0)
		e.Info = p.a.text.join(lines, "\n")
		return
	}
	// The lexer kept the lines' trailing spaces: joined without a
	// separator, a space at a line's end separates words ("?32Mueller " +
	// "GmbH"). Only the field's end is padding.
	p.trimLines(lines[len(lines)-1:], len(lines)-1)
	parseGerman86(e, p.a.text.join(lines, ""), &p.a.text)
}

// trimLines cuts the trailing spaces the lexer kept on :86: lines (german
// profile) where they carry nothing: free-text lines and a field's end.
// first is the index of lines[0] in the field, for the warning's line.
func (p *msgParser) trimLines(lines []string, first int) {
	for i, l := range lines {
		if t := strings.TrimRight(l, " \t"); len(t) != len(l) {
			lines[i] = t
			p.w.add(CodeTrailingSpace, p.m.no, p.f.line+first+i, ":86:", "trailing spaces removed")
		}
	}
}

// structured86 reports whether s starts with a 3-digit GVC followed by the
// subfield separator '?'.
func structured86(s string) bool {
	return len(s) >= 4 && isDigit(s[0]) && isDigit(s[1]) && isDigit(s[2]) && s[3] == '?'
}

// sepaTags are the SEPA identifiers that may appear in the remittance
// subfields; their values run to the next tag.
var sepaTags = []string{"EREF+", "KREF+", "MREF+", "CRED+", "DEBT+", "SVWZ+", "ABWA+", "ABWE+", "COAM+", "OAMT+", "IBAN+", "BIC+"}

func parseGerman86(e *statement.Entry, s string, tx *texts) {
	e.GVC = s[:3]
	// Remittance becomes the entry's slice: counted first so it is
	// allocated once.
	nr := 0
	for rest := s[3:]; len(rest) >= 3 && rest[0] == '?' && isDigit(rest[1]) && isDigit(rest[2]); {
		if c := rest[1:3]; c >= "20" && c <= "29" || c >= "60" && c <= "63" {
			nr++
		}
		rest = rest[3:]
		rest = rest[nextSubfield(rest):]
	}
	var remit []string
	if nr > 0 {
		remit = make([]string, 0, nr)
	}
	var name string // ?32 and ?33 concatenated
	var unknown []string
	rest := s[3:]
	for len(rest) > 0 {
		// rest starts with '?'; a subfield is "?nn" then text up to the next "?nn".
		if len(rest) < 3 || rest[0] != '?' || !isDigit(rest[1]) || !isDigit(rest[2]) {
			unknown = append(unknown, rest)
			break
		}
		code := rest[1:3]
		rest = rest[3:]
		end := nextSubfield(rest)
		val := rest[:end]
		rest = rest[end:]
		switch {
		case code == "00":
			e.PostingText = val
		case code == "10":
			e.Primanota = val
		case code >= "20" && code <= "29", code >= "60" && code <= "63":
			remit = append(remit, val)
		case code == "30":
			if looksLikeBIC(val) {
				e.Counterparty.BIC = val
			} else {
				e.Counterparty.BankCode = val
			}
		case code == "31":
			if bankid.ValidIBAN(val) {
				e.Counterparty.IBAN = val
			} else {
				e.Counterparty.Account = val
			}
		case code == "32", code == "33":
			name += val
		case code == "34":
			e.TextKeyAddition = val
		default:
			unknown = append(unknown, "?"+code+val)
		}
	}
	e.Counterparty.Name = strings.TrimSpace(name)
	joined := tx.join(remit, "")
	if !hasSEPATag(joined) {
		// Lines of their own: a space at a subfield's end is padding.
		for i, r := range remit {
			remit[i] = strings.TrimRight(r, " ")
		}
		e.Remittance = remit
	} else {
		pre := sepaFields(e, joined)
		if pre != "" {
			unknown = append([]string{pre}, unknown...)
		}
	}
	// What has no field of its own (text before the first SEPA tag, KREF+,
	// unknown subfields) stays in Info so nothing is lost.
	e.Info = tx.join(unknown, "\n")
}

func nextSubfield(s string) int {
	for i := 0; i+2 < len(s); i++ {
		if s[i] == '?' && isDigit(s[i+1]) && isDigit(s[i+2]) {
			return i
		}
	}
	return len(s)
}

func hasSEPATag(s string) bool {
	for _, t := range sepaTags {
		if strings.Contains(s, t) {
			return true
		}
	}
	return false
}

// sepaFields splits the joined remittance at SEPA tags and fills the entry.
// It returns text it could not place (before the first tag, KREF, DEBT, ...).
func sepaFields(e *statement.Entry, s string) string {
	type hit struct {
		at  int
		tag string
	}
	var hits []hit
	for i := 0; i < len(s); {
		found := false
		for _, t := range sepaTags {
			if strings.HasPrefix(s[i:], t) {
				hits = append(hits, hit{i, t})
				i += len(t)
				found = true
				break
			}
		}
		if !found {
			i++
		}
	}
	var left []string
	if hits[0].at > 0 {
		left = append(left, strings.TrimSpace(s[:hits[0].at]))
	}
	for k, h := range hits {
		end := len(s)
		if k+1 < len(hits) {
			end = hits[k+1].at
		}
		val := strings.TrimSpace(s[h.at+len(h.tag) : end])
		switch h.tag {
		case "EREF+":
			e.EndToEndID = val
		case "MREF+":
			e.MandateID = val
		case "CRED+":
			e.CreditorID = val
		case "SVWZ+":
			e.Remittance = append(e.Remittance, val)
		case "ABWA+":
			e.UltimateDebtor = val
		case "ABWE+":
			e.UltimateCreditor = val
		default:
			left = append(left, h.tag+val)
		}
	}
	return strings.Join(left, " ")
}

func looksLikeBIC(s string) bool {
	if len(s) != 8 && len(s) != 11 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i < 6 && !isUpper(c) {
			return false
		}
		if i >= 6 && !isUpper(c) && !isDigit(c) {
			return false
		}
	}
	return true
}

// german86 builds the structured :86: text from an entry's fields, before
// transliteration and line breaking. Subfields are at most 27 characters;
// remittance fills ?20-?29 and then ?60-?63. It returns false in truncated
// when the remittance did not fit in those 14 subfields.
func german86(e *statement.Entry) (text string, truncated bool) {
	var b strings.Builder
	gvc := e.GVC
	if len(gvc) != 3 || !allDigits(gvc) {
		// 999 is the GVC for "not otherwise classified".
		gvc = "999"
	}
	b.WriteString(gvc)
	sub := func(code, v string) {
		if v != "" {
			b.WriteString("?" + code)
			b.WriteString(v)
		}
	}
	sub("00", cut(e.PostingText, 27))
	sub("10", cut(e.Primanota, 10))
	// Remittance stream: free text first, then the SEPA identifiers.
	var r strings.Builder
	sepa := e.EndToEndID != "" || e.MandateID != "" || e.CreditorID != "" || e.UltimateDebtor != "" || e.UltimateCreditor != ""
	if sepa {
		if e.Info != "" {
			r.WriteString(strings.ReplaceAll(e.Info, "\n", " ") + " ")
		}
		tag := func(t, v string) {
			if v != "" {
				r.WriteString(t + v + " ")
			}
		}
		tag("EREF+", e.EndToEndID)
		tag("MREF+", e.MandateID)
		tag("CRED+", e.CreditorID)
		if len(e.Remittance) > 0 {
			tag("SVWZ+", strings.Join(e.Remittance, " "))
		}
		tag("ABWA+", e.UltimateDebtor)
		tag("ABWE+", e.UltimateCreditor)
	} else {
		r.WriteString(strings.Join(e.Remittance, ""))
		if e.Info != "" && len(e.Remittance) == 0 {
			r.WriteString(strings.ReplaceAll(e.Info, "\n", " "))
		}
	}
	chunks := chunk(strings.TrimSpace(r.String()), 27)
	if !sepa && len(e.Remittance) > 0 && fitsEach(e.Remittance, 27) && len(e.Remittance) <= 14 {
		// Keep the source's own subfield split so a round trip is exact.
		chunks = e.Remittance
	}
	codes := []string{"20", "21", "22", "23", "24", "25", "26", "27", "28", "29", "60", "61", "62", "63"}
	for k, c := range chunks {
		if k >= len(codes) {
			truncated = true
			break
		}
		if c == "" {
			c = " "
		}
		sub(codes[k], c)
	}
	cp := e.Counterparty
	bank := cp.BIC
	if bank == "" {
		bank = cp.BankCode
	}
	sub("30", cut(bank, 11))
	acct := cp.IBAN
	if acct == "" {
		acct = cp.Account
	}
	sub("31", cut(acct, 34))
	if cp.Name != "" {
		n := chunk(cp.Name, 27)
		sub("32", n[0])
		if len(n) > 1 {
			sub("33", n[1])
		}
		truncated = truncated || len(n) > 2
	}
	sub("34", cut(e.TextKeyAddition, 3))
	return b.String(), truncated
}

func fitsEach(xs []string, n int) bool {
	for _, x := range xs {
		if len(x) > n || x == "" {
			return false
		}
	}
	return true
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// chunk splits s into pieces of at most n bytes.
func chunk(s string, n int) []string {
	if s == "" {
		return nil
	}
	out := make([]string, 0, (len(s)+n-1)/n)
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

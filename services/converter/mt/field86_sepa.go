package mt

import (
	"strings"

	"github.com/ledgerlane/platform/services/converter/bankid"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// The slash-coded :86: is the form Dutch banks write (ING, ABN AMRO,
// Rabobank, ASN, Knab, Triodos, bunq; the NVB's "MT940 SEPA" structure):
// "/CODE/value" pairs whose value runs to the next code, the lines of the
// field joined without a separator (they are cut at 65 characters):
//
//	/TRTP/SEPA OVERBOEKING/IBAN/NL44ABNA0548041814/BIC/ABNANL2A/NAME/MULTI
//	TANK CARD BV/REMI/Factuur 12/EREF/1755481
//
// ING writes the counterparty as /CNTP/account/BIC/name/city/ and the
// remittance as /REMI/USTD//text/ or /REMI/STRD/CUR/reference/; Rabobank
// names the party as /ORDP//NAME/… or /BENM//NAME/….

// slashCode reports whether c is a code of the slash-coded :86:.
func slashCode(c string) bool {
	switch c {
	case "TRTP", "IBAN", "BIC", "NAME", "REMI", "EREF", "MARF", "CSID", "PURP", "RTRN",
		"ULTD", "ULTC", "ORDP", "BENM", "ADDR", "ID", "CNTP", "BBAN", "ACCT", "BANK",
		"PREF", "CREF", "KREF", "ISDT", "SWOC", "EXCH", "CHGS", "OCMT", "BUSP", "TRCD":
		return true
	}
	return false
}

// slashTag is the length of the "/CODE/" tag at s[i:], 0 when there is none.
func slashTag(s string, i int) int {
	if s[i] != '/' {
		return 0
	}
	for j := i + 1; j < len(s) && j <= i+5; j++ {
		c := s[j]
		if c == '/' {
			if slashCode(s[i+1 : j]) {
				return j - i + 1
			}
			return 0
		}
		if !isUpper(c) {
			return 0
		}
	}
	return 0
}

// slashStart finds the slash-coded part of a :86:: the first line that
// starts with a tag, or with anywhere (field86Profile sepa) the first tag
// in any line. It returns the line and the offset of the tag in it, or -1.
func slashStart(lines []string, anywhere bool) (int, int) {
	for k, l := range lines {
		if !anywhere {
			t := strings.TrimLeft(l, " ")
			if t != "" && slashTag(t, 0) > 0 {
				return k, len(l) - len(t)
			}
			continue
		}
		for i := 0; i < len(l); i++ {
			if slashTag(l, i) > 0 {
				return k, i
			}
		}
	}
	return -1, 0
}

// leadParty reads the line ASN Bank starts a :86: with, the counterparty's
// IBAN and name ("NL29INGB0006475121 j blom"). Only a valid IBAN counts, or
// the account the :61: named (cp), so free text is never taken for one.
func leadParty(cp statement.Counterparty, line string) (statement.Counterparty, bool) {
	acct, name, _ := strings.Cut(strings.TrimSpace(line), " ")
	if !bankid.ValidIBAN(acct) && (acct == "" || acct != cp.IBAN && acct != cp.Account) {
		return statement.Counterparty{}, false
	}
	var lc statement.Counterparty
	setAccount(&lc, acct)
	// As a pair's value: a slash at the end would not read back.
	lc.Name = strings.TrimSpace(strings.TrimRight(name, "/ "))
	return lc, true
}

// sepa86 reads a :86: in the slash-coded form, or ASN's leading party line,
// into e. It returns false, leaving e alone, when the text has neither.
// Text before the first code and the pairs without a field of their own
// (TRTP, ADDR, ISDT, …) stay in Info, as "/CODE/value", so nothing is lost.
// The pairs win over the leading line, which ASN writes in lower case.
func (p *msgParser) sepa86(e *statement.Entry, lines []string, anywhere bool) bool {
	k, at := slashStart(lines, anywhere)
	pre := lines
	if k >= 0 {
		pre = lines[:k]
	}
	var (
		lc       statement.Counterparty
		lead     bool
		leadText string // the text the leading line took
	)
	switch {
	case len(pre) > 0:
		leadText = pre[0]
		if lc, lead = leadParty(e.Counterparty, leadText); lead {
			pre = pre[1:]
		}
	case at > 0:
		leadText = lines[0][:at]
		lc, lead = leadParty(e.Counterparty, leadText)
	}
	if k < 0 && !lead {
		return false
	}
	p.trimLines(pre, 0)
	info := make([]string, 0, len(pre)+2)
	info = append(info, pre...)
	if k >= 0 {
		if at > 0 && !lead {
			if t := strings.TrimSpace(lines[k][:at]); t != "" {
				info = append(info, t)
			}
		}
		rest := append([]string{lines[k][at:]}, lines[k+1:]...)
		if left := slashPairs(e, strings.TrimRight(p.a.text.join(rest, ""), " ")); left != "" {
			info = append(info, left)
		}
	}
	if cp := e.Counterparty; lead && (cp.IBAN != "" && lc.IBAN != "" && cp.IBAN != lc.IBAN ||
		cp.Account != "" && lc.Account != "" && cp.Account != lc.Account) {
		// The :61: or the pairs name another account: the line is text.
		lead = false
		info = append([]string{strings.TrimSpace(leadText)}, info...)
	}
	if lead {
		cp := &e.Counterparty
		if cp.IBAN == "" {
			cp.IBAN = lc.IBAN
		}
		if cp.Account == "" && cp.IBAN != lc.Account {
			cp.Account = lc.Account
		}
		if cp.Name == "" {
			cp.Name = lc.Name
		}
	}
	e.Info = p.a.text.join(info, "\n")
	return true
}

// slashPairs fills e from the pairs of s, which starts with a tag, and
// returns the pairs it has no field for, as they were written.
//
// It stays one function over 100 lines (issue 31 allows five): one pass over
// the pairs whose switch is the SEPA code table, read best as one table.
func slashPairs(e *statement.Entry, s string) string {
	var left strings.Builder
	cp := &e.Counterparty
	// ult is the ultimate party that the NAME after an empty /ULTD/ or
	// /ULTC/ belongs to; otherwise NAME names the counterparty.
	var ult *string
	for i := 0; i < len(s); {
		n := slashTag(s, i)
		if n == 0 {
			// Only reached when s does not start with a tag.
			left.WriteString(s[i:])
			break
		}
		code := s[i+1 : i+n-1]
		j := i + n
		for j < len(s) && slashTag(s, j) == 0 {
			j++
		}
		raw := s[i+n : j]
		v := strings.TrimSpace(strings.TrimRight(raw, "/"))
		i = j
		keep := func() {
			left.WriteString("/" + code + "/" + strings.TrimSpace(raw))
		}
		if code != "NAME" && code != "ID" && code != "ADDR" {
			ult = nil
		}
		switch code {
		case "EREF":
			if v != "NOTPROVIDED" {
				e.EndToEndID = v
			}
		case "MARF":
			e.MandateID = v
		case "CSID":
			e.CreditorID = v
		case "NAME":
			switch {
			case v == "":
			case ult != nil:
				*ult = v
			default:
				// The last name wins and an earlier one stays as text: the
				// writer puts the text first, so reading again agrees.
				if cp.Name != "" {
					left.WriteString("/NAME/" + cp.Name)
				}
				cp.Name = v
			}
		case "IBAN":
			setAccount(cp, v)
		case "BBAN", "ACCT":
			if cp.Account == "" {
				cp.Account = v
			}
		case "BIC":
			cp.BIC = v
		case "BANK":
			cp.BankCode = v
		case "CNTP":
			// account/BIC/name/city
			parts := strings.Split(v, "/")
			setAccount(cp, parts[0])
			if len(parts) > 1 && parts[1] != "" {
				cp.BIC = parts[1]
			}
			if len(parts) > 2 && parts[2] != "" && cp.Name == "" {
				cp.Name = parts[2]
			}
			if len(parts) > 3 {
				if city := strings.Trim(strings.Join(parts[3:], "/"), "/ "); city != "" {
					left.WriteString("/ADDR/" + city)
				}
			}
		case "REMI":
			v = strings.TrimPrefix(strings.TrimPrefix(v, "USTD/"), "/")
			if ref, ok := strings.CutPrefix(strings.TrimPrefix(v, "STRD/"), "CUR/"); ok {
				e.CreditorReference = strings.Trim(ref, "/ ")
			} else if v != "" {
				e.Remittance = append(e.Remittance, v)
			}
		case "PURP":
			e.Purpose = strings.Trim(strings.TrimPrefix(strings.TrimPrefix(v, "/"), "CD/"), "/ ")
		case "RTRN":
			e.ReturnReason = v
		case "ULTD":
			if v == "" {
				ult = &e.UltimateDebtor
			} else {
				e.UltimateDebtor = v
			}
		case "ULTC":
			if v == "" {
				ult = &e.UltimateCreditor
			} else {
				e.UltimateCreditor = v
			}
		case "ORDP", "BENM":
			// The ordering party or beneficiary: the counterparty, named by
			// the NAME that follows (or, rarely, by the value itself).
			if v != "" && cp.Name == "" {
				cp.Name = v
			}
		default:
			keep()
		}
	}
	return left.String()
}

// setAccount puts an account number where it belongs: a valid IBAN as the
// IBAN, anything else as the other account number.
func setAccount(cp *statement.Counterparty, v string) {
	switch {
	case v == "":
	case bankid.ValidIBAN(v):
		cp.IBAN = v
	case cp.Account == "":
		cp.Account = v
	}
}

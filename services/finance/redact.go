package finance

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Redaction. docs/privacy.md states the rule; this file is its one
// implementation. A field id the grant redacts takes its value out of every
// place a response could carry it:
//
//   - the fields that hold the value are stripped (location; institution
//     and institution_logo_url of connections, accounts, sync status);
//   - text the service or the provider writes about the redacted thing is
//     replaced by a neutral text chosen from data that does not carry it: a
//     connection's error message by its status, an account's name by its
//     type and mask. The text is replaced whole, whatever it says, so no
//     wording of it can slip through;
//   - free text of a transaction (merchant, display name, description, memo,
//     their provider_* twins, each tag) that names the value is dropped
//     whole, field by field. "Names" means it contains the value's words in
//     sequence (phrase).

// phrase is a value to look for in free text: its words, runs of letters
// and digits, matched whole and in sequence. Case is ignored, except for a
// value of one word of at most three characters (a state or country code
// such as "OR" or "US"), which matches only as written, so the words "or"
// and "us" in a memo are not taken for it.
type phrase struct {
	words []string
	exact bool
}

func newPhrase(s string) phrase {
	w := words(s)
	return phrase{words: w, exact: len(w) == 1 && utf8.RuneCountInString(w[0]) <= 3}
}

// words splits s into runs of letters and digits, keeping their case.
func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// in reports whether text contains p's words in sequence.
func (p phrase) in(text string) bool {
	if len(p.words) == 0 {
		return false
	}
	tw := words(text)
	for i := 0; i+len(p.words) <= len(tw); i++ {
		if p.at(tw[i:]) {
			return true
		}
	}
	return false
}

func (p phrase) at(tw []string) bool {
	for j, w := range p.words {
		if p.exact && tw[j] != w || !p.exact && !strings.EqualFold(tw[j], w) {
			return false
		}
	}
	return true
}

func namesAny(text string, ps []phrase) bool {
	return slices.ContainsFunc(ps, func(p phrase) bool { return p.in(text) })
}

// locationPhrases are the components of l, each a value of its own.
func locationPhrases(l Location) []phrase {
	var ps []phrase
	for _, part := range []string{l.Street, l.City, l.State, l.PostalCode, l.Country} {
		if part != "" {
			ps = append(ps, newPhrase(part))
		}
	}
	return ps
}

// institutionPhrases are the names of every institution the user's
// connections and accounts are at: the grant hides all of them, so a row
// may name none, whichever account it is on.
func (s *Service) institutionPhrases(ctx context.Context, userID string) ([]phrase, error) {
	conns, err := s.store.ListConnections(ctx, userID, nil, 0)
	if err != nil {
		return nil, Internal("list connections", err)
	}
	accounts, err := s.store.ListAccounts(ctx, userID)
	if err != nil {
		return nil, Internal("list accounts", err)
	}
	var names []string
	for _, c := range conns {
		names = append(names, c.Institution)
	}
	for _, a := range accounts {
		names = append(names, a.InstitutionName)
	}
	var ps []phrase
	for _, n := range names {
		if n != "" && !slices.ContainsFunc(ps, func(p phrase) bool { return slices.Equal(p.words, words(n)) }) {
			ps = append(ps, newPhrase(n))
		}
	}
	return ps, nil
}

// Redacted returns those of ids the grant redacts, in the order given. Ids
// are listed whenever the grant redacts them, even if nothing carried a
// value, so the envelope does not tell which rows had one.
func (sc Scope) Redacted(ids ...string) []string {
	var out []string
	for _, id := range ids {
		if sc.grant.Redacts(id) {
			out = append(out, id)
		}
	}
	return out
}

// redactTransactions strips what the grant redacts from rows in place and
// returns the field ids it covers.
func (sc Scope) redactTransactions(rows []Transaction) []string {
	location := sc.grant.Redacts(FieldTransactionLocation)
	institution := sc.grant.Redacts(FieldConnectionInstitution)
	for i := range rows {
		t := &rows[i]
		if location && t.Location != nil {
			dropNaming(t, locationPhrases(*t.Location))
			t.Location = nil
		}
		if institution {
			dropNaming(t, sc.institutions)
		}
	}
	return sc.Redacted(FieldTransactionLocation, FieldConnectionInstitution)
}

// dropNaming empties every free-text field of t that names one of ps, and
// drops such tags.
func dropNaming(t *Transaction, ps []phrase) {
	if len(ps) == 0 {
		return
	}
	for _, f := range []*string{&t.Merchant, &t.DisplayName, &t.Description, &t.Memo} {
		if namesAny(*f, ps) {
			*f = ""
		}
	}
	for _, f := range []**string{&t.ProviderMerchantName, &t.ProviderDescription, &t.ProviderMemo} {
		if *f != nil && namesAny(**f, ps) {
			*f = nil
		}
	}
	if slices.ContainsFunc(t.Tags, func(tag string) bool { return namesAny(tag, ps) }) {
		t.Tags = slices.DeleteFunc(slices.Clone(t.Tags), func(tag string) bool { return namesAny(tag, ps) })
	}
}

// redactConnection strips the institution from c. The error message is
// the provider's text and usually names the bank ("Chase needs you to sign
// in again"), so it is replaced whole by a neutral one for the status; an
// error code is a token, kept unless it names an institution too.
func redactConnection(c *Connection, institutions []phrase) {
	c.Institution, c.InstitutionLogoURL = "", ""
	if c.ErrorMessage != "" {
		c.ErrorMessage = neutralErrorMessage(c.Status)
	}
	if namesAny(c.ErrorCode, institutions) {
		c.ErrorCode = ""
	}
}

// neutralErrorMessage is the error message of a connection whose
// institution is redacted.
func neutralErrorMessage(status string) string {
	switch status {
	case ConnectionLoginRequired:
		return "The connection needs you to sign in again to keep syncing."
	case ConnectionError:
		return "The connection could not sync."
	case ConnectionDisconnected:
		return "The connection is disconnected."
	}
	return "The connection reported a problem."
}

// redactAccount strips the institution from a: its own bank and logo, and
// its bank-given name, which becomes a neutral label. A nickname is the
// user's free text, dropped when it names an institution.
func redactAccount(a *Account, institutions []phrase) {
	a.Name = accountLabel(*a)
	a.InstitutionName, a.InstitutionLogoURL = "", ""
	if namesAny(a.Nickname, institutions) {
		a.Nickname = ""
	}
}

// accountLabel is an account's name when the institution is redacted:
// "Checking ending 4417". Bank-given names carry the bank's brand even
// without its name ("Sapphire Preferred"), so none of the name is kept.
func accountLabel(a Account) string {
	kind := cmp.Or(a.Subtype, a.Type, "account")
	r, size := utf8.DecodeRuneInString(kind)
	label := string(unicode.ToUpper(r)) + kind[size:]
	if a.Mask != "" {
		label += " ending " + a.Mask
	}
	return label
}

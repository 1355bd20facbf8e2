package finance

import (
	"strings"
	"testing"
)

// The matching rule of docs/privacy.md: a value's words, whole and in
// sequence, case ignored except for a short one-word code.
func TestPhraseIn(t *testing.T) {
	tests := []struct {
		value, text string
		want        bool
	}{
		{"Portland", "TRADER JOE S #145 PORTLAND OR", true},
		{"OR", "TRADER JOE S #145 PORTLAND OR", true},
		{"OR", "coffee or tea", false},
		{"US", "dinner with us", false},
		{"US", "flight to the US", true},
		{"Fidelity Investments", "FIDELITY INVESTMENTS MONEYLINE", true},
		{"Fidelity Investments", "Fidelity needs you to sign in", false}, // not the whole name
		{"Chase", "CHASE CREDIT CRD AUTOPAY", true},
		{"Chase", "Chasewood Grill", false}, // whole words only
		{"88 Vexmoor Row", "tea at 88 vexmoor row, upstairs", true},
		{"88 Vexmoor Row", "88 vexmoor street", false},
		{"N26", "N26 Girokonto", true},
		{"N26", "n26 girokonto", false},
		{"Café Einstein", "CAFÉ EINSTEIN STAMMHAUS", true},
		{"", "anything", false},
		{"---", "anything", false},
	}
	for _, tc := range tests {
		if got := newPhrase(tc.value).in(tc.text); got != tc.want {
			t.Errorf("%q in %q = %v, want %v", tc.value, tc.text, got, tc.want)
		}
	}
}

func TestDropNaming(t *testing.T) {
	bank := "Zorblax needs you"
	tx := Transaction{Merchant: "Zorblax Bank", DisplayName: "Interest", Description: "ZORBLAX BANK INT",
		Memo: "from zorblax bank", Tags: []string{"zorblax bank", "savings"}, ProviderMerchantName: &bank,
		ProviderDescription: ptrTo("ZORBLAX BANK")}
	tags := tx.Tags
	dropNaming(&tx, []phrase{newPhrase("Zorblax Bank")})
	if tx.Merchant != "" || tx.Description != "" || tx.Memo != "" || tx.ProviderDescription != nil ||
		tx.DisplayName != "Interest" || len(tx.Tags) != 1 || tx.Tags[0] != "savings" ||
		tx.ProviderMerchantName == nil || *tx.ProviderMerchantName != bank {
		t.Fatalf("after drop: %+v", tx)
	}
	if tags[0] != "zorblax bank" {
		t.Error("dropNaming wrote through to the caller's tag slice")
	}
}

func TestNeutralTexts(t *testing.T) {
	for _, st := range []string{ConnectionActive, ConnectionLoginRequired, ConnectionError, ConnectionDisconnected, "weird"} {
		c := Connection{Institution: "Zorblax", InstitutionLogoURL: "https://x/zorblax.png", Status: st,
			ErrorCode: "zorblax_mfa", ErrorMessage: "Zorblax says no"}
		redactConnection(&c, []phrase{newPhrase("Zorblax")})
		if c.Institution != "" || c.InstitutionLogoURL != "" || c.ErrorCode != "" ||
			c.ErrorMessage == "" || strings.Contains(strings.ToLower(c.ErrorMessage), "zorblax") {
			t.Errorf("%s: %+v", st, c)
		}
	}
	c := Connection{Status: ConnectionActive, ErrorCode: "login_required"}
	redactConnection(&c, []phrase{newPhrase("Zorblax")})
	if c.ErrorMessage != "" || c.ErrorCode != "login_required" {
		t.Errorf("no message stays none, a plain code stays: %+v", c)
	}
	labels := []struct {
		a    Account
		want string
	}{
		{Account{Name: "Chase Total Checking", Type: AccountDepository, Subtype: "checking", Mask: "4417"}, "Checking ending 4417"},
		{Account{Name: "Home loan", Type: AccountLoan, Subtype: "mortgage"}, "Mortgage"},
		{Account{Name: "Zorblax", Type: AccountInvestment}, "Investment"},
		{Account{Name: "Zorblax"}, "Account"},
	}
	a := Account{Name: "Zorblax Platinum", Nickname: "my zorblax card", Type: AccountCredit, Subtype: "credit card",
		Mask: "2290", InstitutionName: "Zorblax", InstitutionLogoURL: "https://x/zorblax.png"}
	redactAccount(&a, []phrase{newPhrase("Zorblax")})
	if a.Name != "Credit card ending 2290" || a.Nickname != "" || a.InstitutionName != "" || a.InstitutionLogoURL != "" {
		t.Errorf("redacted account: %+v", a)
	}
	for _, l := range labels {
		if got := accountLabel(l.a); got != l.want {
			t.Errorf("label of %q = %q, want %q", l.a.Name, got, l.want)
		}
	}
}

package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ledgerlane/platform/services/converter/bankid"
	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// Codes of the findings Validate and Normalize add to the parsers' own
// (docs/conversion-warnings.md lists them all).
const (
	// CodeInvalidMessage: the parser cannot read the message; the finding
	// names the message, line and field as a ParseError does.
	CodeInvalidMessage = "INVALID_MESSAGE"
	// CodeVersionChanged: Normalize wrote a version other than the input's,
	// which the renderer does not write.
	CodeVersionChanged = "NORMALIZED_VERSION_CHANGED"
)

// SeverityError marks a Validate finding that makes the message invalid.
const SeverityError = "error"

// Issue is one finding of Validate.
type Issue struct {
	Code     string
	Severity string // "error", or the warning's own severity
	Message  string
	Path     string
	Line     int // 1-based; 0 when the finding has no single line
}

// Validation is what Validate found.
type Validation struct {
	Valid           bool
	DetectedType    string
	DetectedVersion string
	Errors          []Issue
	Warnings        []Issue
}

// Validate reads input as from (detected when empty) without converting it.
// A fault the parser cannot read past makes the message invalid; what it
// tolerated is a warning, and with opts.Strict a lossy one is an error too,
// as it would fail a strict conversion. Only an unknown or undetectable
// source is an error return: an invalid message is a finding.
func (e *Engine) Validate(input []byte, from string, opts statement.Options) (*Validation, error) {
	p, version, err := e.source(input, from)
	if err != nil {
		return nil, err
	}
	v := &Validation{DetectedType: p.Type, DetectedVersion: version}
	_, warns, err := p.parse(input, version, opts)
	var pe *statement.ParseError
	switch {
	case errors.As(err, &pe):
		msg := pe.Reason
		if pe.Message > 0 {
			msg = fmt.Sprintf("message %d: %s", pe.Message, msg)
		}
		v.Errors = append(v.Errors, Issue{Code: CodeInvalidMessage, Severity: SeverityError, Message: msg, Path: pe.Field, Line: pe.Line})
	case err != nil:
		return nil, err
	}
	for _, w := range warns {
		is := Issue{Code: w.Code, Severity: w.Severity, Message: w.Message, Path: w.Path, Line: w.Line}
		if w.Invalid || opts.Strict && w.Lossy {
			is.Severity = SeverityError
			v.Errors = append(v.Errors, is)
			continue
		}
		v.Warnings = append(v.Warnings, is)
	}
	v.Valid = len(v.Errors) == 0
	return v, nil
}

// Normalize rewrites input in its own format and returns it as Convert
// would: MT as FIN messages with CRLF line ends, the X character set and
// pages of at most 2,000 characters; camt in the schema's element order.
// opts.TargetVersion pins the version; otherwise the input's own version is
// kept where the renderer writes it, and the renderer's default is used,
// with a NORMALIZED_VERSION_CHANGED warning, where it does not.
func (e *Engine) Normalize(input []byte, from string, opts statement.Options) (*Result, error) {
	p, version, err := e.source(input, from)
	if err != nil {
		return nil, err
	}
	r, ok := e.renderers[e.key(p.Type)]
	if !ok || !accepts(r, p.Type) {
		return nil, fmt.Errorf("%w: %s cannot be written back", ErrUnsupported, p.Type)
	}
	changed := false
	if opts.TargetVersion == "" && version != "" {
		if contains(r.Versions, version) {
			opts.TargetVersion = version
		} else {
			changed = len(r.Versions) > 0
		}
	}
	res, err := e.Convert(Request{Input: input, From: p.Type, To: p.Type, Options: opts})
	if err != nil {
		return nil, err
	}
	if changed {
		res.Warnings = append(res.Warnings, statement.Warning{
			Code: CodeVersionChanged, Severity: statement.SeverityInfo,
			Message: fmt.Sprintf("%s is read but not written; the message was normalized to %s", version, res.TargetVersion),
		})
	}
	return res, nil
}

// Enrichment is what Enrich found in a message.
type Enrichment struct {
	DetectedType    string
	DetectedVersion string
	BICs            []BICFinding
	IBANs           []IBANFinding
	Warnings        []statement.Warning
}

// BICFinding is a BIC and where in the message it was first found.
type BICFinding struct {
	bankid.BIC
	Path string
}

// IBANFinding is an IBAN and where in the message it was first found.
type IBANFinding struct {
	bankid.IBAN
	Path string
}

// Enrich reads input as from (detected when empty) and lists the BICs and
// IBANs it carries, each once, with what their structure tells: validity,
// country, and for IBANs of the countries bankid knows the national bank and
// branch codes. Paths name where an identifier was first found:
// "statement[1]/account", "statement[1]/account/servicer",
// "statement[1]/account/owner", "statement[1]/entry[3]/counterparty".
// A message the parser cannot read is a *statement.ParseError, as for
// Convert.
func (e *Engine) Enrich(input []byte, from string, opts statement.Options) (*Enrichment, error) {
	p, version, err := e.source(input, from)
	if err != nil {
		return nil, err
	}
	doc, warns, err := p.parse(input, version, opts)
	if err != nil {
		return nil, err
	}
	stmts := doc.stmts
	out := &Enrichment{DetectedType: p.Type, DetectedVersion: version, Warnings: warns}
	seen := map[string]bool{}
	addIBAN := func(v, path string) {
		if v = strings.TrimSpace(v); v != "" && !seen["iban:"+v] {
			seen["iban:"+v] = true
			out.IBANs = append(out.IBANs, IBANFinding{bankid.ParseIBAN(v), path})
		}
	}
	addBIC := func(v, path string) {
		if v = strings.TrimSpace(v); v != "" && !seen["bic:"+v] {
			seen["bic:"+v] = true
			out.BICs = append(out.BICs, BICFinding{bankid.ParseBIC(v), path})
		}
	}
	for i, s := range stmts {
		sp := fmt.Sprintf("statement[%d]/account", i+1)
		addIBAN(s.Account.IBAN, sp)
		if bankid.IBANShaped(s.Account.Other) {
			// Read as another kind of number because its check digits fail:
			// listed so that the fault shows.
			addIBAN(s.Account.Other, sp)
		}
		addBIC(s.Account.Servicer, sp+"/servicer")
		addBIC(s.Account.OwnerBIC, sp+"/owner")
		for j := range s.Entries {
			cp := s.Entries[j].Counterparty
			path := fmt.Sprintf("statement[%d]/entry[%d]/counterparty", i+1, j+1)
			addIBAN(cp.IBAN, path)
			if bankid.IBANShaped(cp.Account) {
				addIBAN(cp.Account, path)
			}
			addBIC(cp.BIC, path)
		}
	}
	for i, pay := range doc.pays {
		enrichPayment(pay, fmt.Sprintf("payment[%d]", i+1), addIBAN, addBIC)
	}
	return out, nil
}

// enrichPayment lists the BICs and IBANs of a payment's agents and parties,
// under paths such as "payment[1]/debtor" and "payment[1]/creditorAgent".
func enrichPayment(p *payment.Payment, at string, addIBAN, addBIC func(v, path string)) {
	addBIC(p.Header.From, at+"/header/from")
	addBIC(p.Header.To, at+"/header/to")
	add := func(bic, account, name string) {
		addBIC(bic, at+"/"+name)
		if bankid.ValidIBAN(account) || bankid.IBANShaped(account) {
			addIBAN(account, at+"/"+name)
		}
	}
	agent := func(a *payment.Agent, name string) {
		if a != nil {
			add(a.BIC, a.Account, name)
		}
	}
	party := func(pt *payment.Party, name string) {
		if pt != nil {
			add(pt.BIC, pt.Account, name)
		}
	}
	party(p.Debtor, "debtor")
	agent(p.DebtorFI, "debtor")
	agent(p.DebtorAgent, "debtorAgent")
	agent(p.PreviousInstructingAgent, "previousInstructingAgent")
	agent(p.InstructingAgent, "instructingAgent")
	agent(p.InstructedAgent, "instructedAgent")
	agent(p.SendersCorrespondent, "instructingReimbursementAgent")
	agent(p.ReceiversCorrespondent, "instructedReimbursementAgent")
	agent(p.ThirdReimbursement, "thirdReimbursementAgent")
	agent(p.Intermediary, "intermediaryAgent")
	agent(p.CreditorAgent, "creditorAgent")
	agent(p.CreditorFI, "creditor")
	party(p.Creditor, "creditor")
	if p.Underlying != nil {
		enrichPayment(p.Underlying, at+"/underlying", addIBAN, addBIC)
	}
}

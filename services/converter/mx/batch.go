package mx

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// The messages with several transactions: pain.001.001.09
// (CustomerCreditTransferInitiation, MT101) and pacs.010.001.03
// (FinancialInstitutionDirectDebit, MT204), the versions CBPR+ uses. They
// are read with the payment reader's tree and written with its writer (the
// head.001.001.02 AppHdr in an Envelope; the agents, parties and accounts
// of pacs.008.001.08, whose types these versions share) into the payment
// model, the transactions in Payment.Transactions.

const (
	typePain1  = "pain.001"
	typePacs10 = "pacs.010"
	typePacs3  = "pacs.003" // refused by name
)

// batchVersions are the versions written and checked element by element
// against their schemas; other versions are read with PAY_VERSION_UNTESTED.
var (
	batchVersions = map[string][]string{typePain1: {"pain.001.001.09"}, typePacs10: {"pacs.010.001.03"},
		typePacs3: {"pacs.003.001.08"}} // the version CBPR+ uses, recognised to be refused
	batchMT    = map[string]string{typePain1: "MT101", typePacs10: "MT204"}
	batchKinds = map[string]payment.Kind{typePain1: payment.Initiation, typePacs10: payment.FIDirectDebit}
)

func isBatchType(typ string) bool { _, ok := batchKinds[typ]; return ok }

// batchTypes are the types ParseBatch reads (pacs.003 to refuse it).
var batchTypes = []string{typePain1, typePacs10, typePacs3}

func batchVersionOf(ns string) (typ, version string, ok bool) {
	return versionIn(ns, batchTypes)
}

// BatchFormats is what this package adds to a conversion engine for
// pain.001 and pacs.010: their parsers, renderers and detector. The MT side
// is mt.BatchFormats.
func BatchFormats() engine.FormatSet {
	var set engine.FormatSet
	for _, typ := range []string{typePain1, typePacs10} {
		set.Parsers = append(set.Parsers, engine.Parser{
			Type:     typ,
			Versions: batchVersions[typ],
			ParsePayments: func(input []byte, _ string, _ statement.Options) ([]*payment.Payment, []statement.Warning, error) {
				return ParseBatch(input, typ)
			},
		})
		set.Renderers = append(set.Renderers, paymentRenderer(typ, batchVersions[typ], []string{batchMT[typ], typ}, RenderBatch))
	}
	// pacs.003 is read only to be refused by name (payment.RefusedDirectDebit).
	set.Parsers = append(set.Parsers, engine.Parser{Type: typePacs3,
		ParsePayments: func([]byte, string, statement.Options) ([]*payment.Payment, []statement.Warning, error) {
			return nil, nil, &statement.ParseError{Field: "Document", Reason: payment.RefusedDirectDebit}
		}})
	set.Renderers = append(set.Renderers, engine.Renderer{Type: typePacs3, MediaType: MediaType,
		RenderPayments: func([]*payment.Payment, string, statement.Options) ([]string, []statement.Warning, error) {
			return nil, nil, &statement.ParseError{Reason: payment.RefusedDirectDebit}
		}})
	for i := range set.Renderers {
		set.Renderers[i].Refuses = payment.RefusedDirectDebits()
	}
	set.Detectors = []engine.Detector{DetectBatch}
	set.HeadDetectors = []engine.HeadDetector{detectBatchHead}
	return set
}

// DetectBatch recognises pain.001 and pacs.010 (and pacs.003, to be
// refused) from the Document namespace, else from the AppHdr's MsgDefIdr.
func DetectBatch(input []byte) (string, string, bool) {
	return detectDocument(input, batchTypes)
}

// ParseBatch reads a pain.001 (one payment per PmtInf, which becomes one
// MT101) or a pacs.010 (one per CdtInstr, one MT204 each), with or without
// its business application header, bare or in an envelope; want names the
// type.
func ParseBatch(input []byte, want string) ([]*payment.Payment, []statement.Warning, error) {
	return parseDocument(input, want, batchVersionOf, batchVersions, func(pp *pacsParser, doc int, hdr payment.Header) ([]*payment.Payment, error) {
		switch pp.typ {
		case typePacs10:
			return pp.pacs010(doc, hdr)
		case typePacs3:
			return nil, pp.fail(doc, "%s", payment.RefusedDirectDebit)
		}
		return pp.pain001(doc, hdr)
	})
}

// each calls read for every child of parent named name, failing when there
// is none; several are one MT message each (PAY_SPLIT).
func (pp *pacsParser) each(parent int, name, mt string, read func(int) (*payment.Payment, error)) ([]*payment.Payment, error) {
	t := pp.t
	var out []*payment.Payment
	for id := t.nodes[parent].first; id >= 0; id = t.nodes[id].next {
		if t.name(id) != name {
			continue
		}
		p, err := read(id)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, pp.fail(parent, "the message has no %s", name)
	}
	if len(out) > 1 {
		pp.w.Add(payment.CodeSplit, t.pathOf(parent), 0, "%d %s: one %s each", len(out), name, mt)
	}
	return out, nil
}

// batchRoot finds the message element name below doc and reads its
// GrpHdr's MsgId, CreDtTm, NbOfTxs and CtrlSum into base.
func (pp *pacsParser) batchRoot(doc int, name string, base *payment.Payment) (root, gh int, err error) {
	if root, gh, err = pp.messageRoot(doc, name, base); err != nil {
		return -1, -1, err
	}
	pp.t.get(gh, "NbOfTxs") // the count MT states by its sequences
	pp.t.get(gh, "CtrlSum")
	return root, gh, nil
}

// messageRoot finds the message element name below doc and its GrpHdr, and
// reads the GrpHdr's MsgId and CreDtTm into base.
func (pp *pacsParser) messageRoot(doc int, name string, base *payment.Payment) (root, gh int, err error) {
	t := pp.t
	if root = t.child(doc, name); root < 0 {
		return -1, -1, pp.fail(doc, "expected %s", name)
	}
	if gh = t.child(root, "GrpHdr"); gh < 0 {
		return -1, -1, pp.fail(root, "GrpHdr is missing")
	}
	base.MessageID = t.get(gh, "MsgId")
	base.CreatedAt, _ = parseDateTime(t.get(gh, "CreDtTm"))
	return root, gh, nil
}

func (pp *pacsParser) pain001(doc int, hdr payment.Header) ([]*payment.Payment, error) {
	t := pp.t
	base := payment.Payment{Kind: payment.Initiation, Header: hdr}
	root, gh, err := pp.batchRoot(doc, "CstmrCdtTrfInitn", &base)
	if err != nil {
		return nil, err
	}
	msgID := base.MessageID
	if ip := pp.party(gh, "InitgPty"); ip != nil && !(ip.Name == "" && len(ip.IDs) == 0 && sameBIC8(ip.BIC, hdr.From)) {
		base.InitiatingParty = ip // the sender initiating is what MT101 says without :50C:
	}
	return pp.each(root, "PmtInf", "MT101", func(pi int) (*payment.Payment, error) {
		p := base
		p.MessageID = t.get(pi, "PmtInfId")
		if t.get(pi, "BtchBookg") == "true" {
			// The customer asked for one debit of the whole: MT101 :21R:.
			p.BatchReference, p.MessageID = p.MessageID, msgID
		} else if msgID != "" && msgID != p.MessageID {
			pp.w.Add(payment.CodeFieldDropped, "GrpHdr/MsgId", t.line(gh), "GrpHdr/MsgId %q beside PmtInfId %q has no MT101 field", clip(msgID), clip(p.MessageID))
		}
		if m := t.get(pi, "PmtMtd"); m != "TRF" {
			pp.w.Add(payment.CodeNonstandard, "PmtInf/PmtMtd", t.line(pi), "payment method %q read as a credit transfer (TRF), the only one MT101 requests", clip(m))
		}
		t.get(pi, "NbOfTxs")
		t.get(pi, "CtrlSum")
		d := t.child(pi, "ReqdExctnDt")
		var ok bool
		if p.SettlementDate, ok = parseISODate(t.get(d, "Dt")); !ok {
			ts, tok := parseDateTime(t.get(d, "DtTm"))
			if !tok {
				return nil, pp.fail(pi, "ReqdExctnDt is missing or not a date: MT101 needs the requested execution date (:30:)")
			}
			p.SettlementDate = statement.DateOf(ts)
			pp.w.Add(payment.CodeFieldDropped, "PmtInf/ReqdExctnDt/DtTm", t.line(d), "the time of the requested execution has no MT101 field (:30: is a date)")
		}
		// What PmtInf states holds for each of its transactions.
		common := payment.Payment{Kind: payment.Customer, SettlementDate: p.SettlementDate}
		pp.paymentType(pi, &common)
		common.Debtor = pp.party(pi, "Dbtr")
		if common.Debtor == nil {
			return nil, pp.fail(pi, "Dbtr is mandatory: MT101 needs the ordering customer (:50a:)")
		}
		common.DebtorAgent = pp.agentAcct(pi, "DbtrAgt")
		common.ChargeBearer = t.get(pi, "ChrgBr")
		common.ChargesAccount = pp.account(pi, "ChrgsAcct")
		common.InstructionsForNextAgent = debtorAgentInstructions(t.get(pi, "InstrForDbtrAgt"))
		if err := pp.each1(pi, "CdtTrfTxInf", func(tx int) error {
			c := common
			c.InstructionsForNextAgent = append([]payment.Instruction(nil), common.InstructionsForNextAgent...)
			if err := pp.initiationTx(tx, &c); err != nil {
				return err
			}
			p.Transactions = append(p.Transactions, &c)
			return nil
		}); err != nil {
			return nil, err
		}
		return &p, nil
	})
}

// each1 calls read for every child of parent named name, failing when there
// is none.
func (pp *pacsParser) each1(parent int, name string, read func(int) error) error {
	n := 0
	for id := pp.t.nodes[parent].first; id >= 0; id = pp.t.nodes[id].next {
		if pp.t.name(id) == name {
			n++
			if err := read(id); err != nil {
				return err
			}
		}
	}
	if n == 0 {
		return pp.fail(parent, "%s has no %s", pp.t.name(parent), name)
	}
	return nil
}

// initiationTx reads one CdtTrfTxInf of a pain.001 into p, which holds what
// its PmtInf states.
func (pp *pacsParser) initiationTx(tx int, p *payment.Payment) error {
	t := pp.t
	if err := pp.paymentID(tx, p); err != nil {
		return err
	}
	pp.paymentType(tx, p)
	amt := t.child(tx, "Amt")
	var err error
	switch {
	case t.child(amt, "InstdAmt") >= 0:
		p.Amount, err = pp.amount(t.child(amt, "InstdAmt"), true)
	case t.child(amt, "EqvtAmt") >= 0:
		// The equivalent of an amount in the debtor's currency: MT101
		// :32B: names the currency of transfer with amount 0 and :33B: the
		// amount.
		eq := t.child(amt, "EqvtAmt")
		if p.InstructedAmount, err = pp.amount(t.child(eq, "Amt"), true); err == nil {
			ccy := t.get(eq, "CcyOfTrf")
			if !payment.IsCurrency(ccy) {
				return pp.fail(eq, "CcyOfTrf %q is not an ISO 4217 code", clip(ccy))
			}
			p.Amount = statement.Amount{Currency: ccy}
		}
	default:
		return pp.fail(tx, "Amt is missing: MT101 needs the amount (:32B:)")
	}
	if err != nil {
		return err
	}
	if x := t.child(tx, "XchgRateInf"); x >= 0 {
		var err error
		if p.ExchangeRate, err = pp.exchangeRate(x); err != nil {
			return err
		}
		p.DealReference = t.get(x, "CtrctId")
	}
	if cb := t.get(tx, "ChrgBr"); cb != "" {
		p.ChargeBearer = cb
	}
	p.Intermediary = pp.agentAcct(tx, "IntrmyAgt1")
	p.CreditorAgent = pp.agentAcct(tx, "CdtrAgt")
	p.Creditor = pp.party(tx, "Cdtr")
	if p.Creditor == nil {
		return pp.fail(tx, "Cdtr is mandatory here: MT101 needs the beneficiary (:59a:)")
	}
	pp.texts(tx, p)
	p.InstructionsForNextAgent = append(p.InstructionsForNextAgent, debtorAgentInstructions(t.get(tx, "InstrForDbtrAgt"))...)
	p.Purpose = firstOf(t.get(tx, "Purp/Prtry"), t.get(tx, "Purp/Cd"))
	return nil
}

// debtorAgentInstructions reads InstrForDbtrAgt: the MT101 :23E: codes
// "/CODE/info" one after the other as the writer puts them, else one text
// (written back as :23E: OTHR).
func debtorAgentInstructions(s string) []payment.Instruction {
	if s == "" {
		return nil
	}
	var out []payment.Instruction
	rest := s
	for rest != "" {
		if len(rest) < 6 || rest[0] != '/' || rest[5] != '/' || !payment.MT101Codes[rest[1:5]] {
			return []payment.Instruction{{Text: s}}
		}
		in := payment.Instruction{Code: rest[1:5]}
		rest = rest[6:]
		next := len(rest)
		for i := 0; i+5 < len(rest); i++ {
			if rest[i] == ' ' && rest[i+1] == '/' && i+6 < len(rest) && rest[i+6] == '/' && payment.MT101Codes[rest[i+2:i+6]] {
				next = i
				break
			}
		}
		in.Text, rest = rest[:next], strings.TrimPrefix(rest[next:], " ")
		out = append(out, in)
	}
	return out
}

func (pp *pacsParser) pacs010(doc int, hdr payment.Header) ([]*payment.Payment, error) {
	t := pp.t
	base := payment.Payment{Kind: payment.FIDirectDebit, Header: hdr}
	root, gh, err := pp.batchRoot(doc, "FIDrctDbt", &base)
	if err != nil {
		return nil, err
	}
	msgID := base.MessageID
	base.InstructingAgent, base.InstructedAgent = pp.agent(gh, "InstgAgt"), pp.agent(gh, "InstdAgt")
	return pp.each(root, "CdtInstr", "MT204", func(ci int) (*payment.Payment, error) {
		p := base
		p.MessageID = firstOf(t.get(ci, "CdtId"), msgID)
		if msgID != "" && msgID != p.MessageID {
			pp.w.Add(payment.CodeFieldDropped, "GrpHdr/MsgId", t.line(gh), "GrpHdr/MsgId %q beside CdtId %q has no MT204 field", clip(msgID), clip(p.MessageID))
		}
		if a := pp.agent(ci, "InstgAgt"); a != nil {
			p.InstructingAgent = a
		}
		if a := pp.agent(ci, "InstdAgt"); a != nil {
			p.InstructedAgent = a
		}
		var err error
		if id := t.child(ci, "TtlIntrBkSttlmAmt"); id >= 0 {
			if p.Amount, err = pp.amount(id, true); err != nil {
				return nil, err
			}
		}
		if d := t.get(ci, "IntrBkSttlmDt"); d != "" {
			var ok bool
			if p.SettlementDate, ok = parseISODate(d); !ok {
				return nil, pp.fail(t.child(ci, "IntrBkSttlmDt"), "%q is not a date", clip(d))
			}
		}
		p.CreditorAgent = pp.agentAcct(ci, "CdtrAgt")
		p.CreditorFI = pp.agentAcct(ci, "Cdtr")
		pp.texts(ci, &p)
		err = pp.each1(ci, "DrctDbtTxInf", func(tx int) error {
			d := &payment.Payment{Kind: payment.Institution, SettlementDate: p.SettlementDate}
			if err := pp.paymentID(tx, d); err != nil {
				return err
			}
			var err error
			if d.Amount, err = pp.amount(t.child(tx, "IntrBkSttlmAmt"), true); err != nil {
				return err
			}
			if v := t.get(tx, "IntrBkSttlmDt"); v != "" {
				var ok bool
				if d.SettlementDate, ok = parseISODate(v); !ok {
					return pp.fail(t.child(tx, "IntrBkSttlmDt"), "%q is not a date", clip(v))
				}
			}
			if p.SettlementDate.IsZero() {
				p.SettlementDate = d.SettlementDate // the message's value date (:30:)
			}
			if d.DebtorFI = pp.agentAcct(tx, "Dbtr"); d.DebtorFI == nil {
				return pp.fail(tx, "Dbtr is mandatory: MT204 needs the debit institution (:53a:)")
			}
			d.AdditionalInfo = t.get(tx, "InstrForDbtrAgt")
			p.Transactions = append(p.Transactions, d)
			return nil
		})
		if err != nil {
			return nil, err
		}
		if p.SettlementDate.IsZero() {
			return nil, pp.fail(ci, "IntrBkSttlmDt is missing: MT204 needs the value date (:30:)")
		}
		return &p, nil
	})
}

// sameBIC8 compares two BICs on their first 8 characters and branch,
// XXX being the main office.
func sameBIC8(a, b string) bool {
	return a != "" && b != "" && strings.TrimSuffix(a, "XXX") == strings.TrimSuffix(b, "XXX")
}

// RenderBatch writes each payment as one message of type typ: an Envelope
// with the head.001.001.02 AppHdr and the pain.001 or pacs.010 Document.
func RenderBatch(ps []*payment.Payment, typ, version string) ([]string, []statement.Warning, error) {
	if !isBatchType(typ) || !contains(batchVersions[typ], version) {
		return nil, nil, fmt.Errorf("unsupported %s version %q", typ, version)
	}
	return renderEach(ps, typ, version, func(p *payment.Payment) string {
		if p.Kind != batchKinds[typ] || len(p.Transactions) == 0 {
			return fmt.Sprintf("a %s message is not a %s (%s, from %s)", p.Kind, typ, batchKinds[typ], batchMT[typ])
		}
		return ""
	})
}

// batch writes the message element of a pain.001 or pacs.010 Document.
func (r *pacsRenderer) batch(p *payment.Payment, ref, created, from, to string) error {
	if r.typ == typePacs10 {
		return r.pacs010(p, ref, created, from, to)
	}
	return r.pain001(p, ref, created, from, to)
}

// batchGroupHeader writes GrpHdr's MsgId, CreDtTm and NbOfTxs.
func (r *pacsRenderer) batchGroupHeader(p *payment.Payment, ref, created string) {
	w := &r.w
	r.openGroupHeader(firstOf(p.MessageID, ref), created)
	w.leaf("NbOfTxs", strconv.Itoa(len(p.Transactions)))
}

// uetr writes a transaction's UETR, generating one as for pacs.008 when
// the MT had none: CBPR+ requires it in pain.001 and pacs.010.
func (r *pacsRenderer) uetr(u, rel string) {
	if u == "" {
		u = payment.NewUETR()
		r.warn.Add(payment.CodeUETRGenerated, r.path(rel), 0, "no UETR (block 3 field 121): generated %s", u)
	}
	r.w.leaf("UETR", u)
}

// endToEnd writes EndToEndId, NOTPROVIDED when the MT had none (no
// source: the field that would have carried it).
func (r *pacsRenderer) endToEnd(e2e, source, rel string) {
	if e2e == "" {
		e2e = "NOTPROVIDED"
		r.warn.Add(payment.CodeEndToEndDefaulted, r.path(rel), 0, "no %s: EndToEndId NOTPROVIDED", source)
	}
	r.leaf("EndToEndId", e2e, 35, rel)
}

func (r *pacsRenderer) pain001(p *payment.Payment, ref, created, from, to string) error {
	w := &r.w
	w.open("CstmrCdtTrfInitn")
	r.batchGroupHeader(p, ref, created)
	ip := p.InitiatingParty
	if ip == nil {
		// InitgPty is mandatory: without :50C:/:50L: the sender initiates.
		ip = &payment.Party{BIC: from}
		if !payment.IsBIC(from) {
			ip = &payment.Party{Name: "NOTPROVIDED"}
			r.warn.Add(payment.CodeFieldDefaulted, r.path("GrpHdr/InitgPty"), 0, "no instructing party and no sender BIC: InitgPty/Nm NOTPROVIDED")
		}
	}
	r.party("InitgPty", ip, "GrpHdr/InitgPty")
	w.close("GrpHdr")
	// One PmtInf per run of transactions with the same debtor, account
	// servicer, charges account and date: PmtInf states them once.
	groups := groupTransactions(p.Transactions)
	for g, txs := range groups {
		rel := "PmtInf"
		if len(groups) > 1 {
			rel = fmt.Sprintf("PmtInf[%d]", g+1)
		}
		first := txs[0]
		w.open("PmtInf")
		id := firstOf(p.BatchReference, firstOf(p.MessageID, ref))
		if len(groups) > 1 {
			id += "/" + strconv.Itoa(g+1)
		}
		r.leaf("PmtInfId", id, 35, rel+"/PmtInfId")
		w.leaf("PmtMtd", "TRF")
		if p.BatchReference != "" {
			w.leaf("BtchBookg", "true")
		}
		w.leaf("NbOfTxs", strconv.Itoa(len(txs)))
		w.open("ReqdExctnDt")
		date := first.SettlementDate
		if date.IsZero() {
			date = p.SettlementDate
		}
		if date.IsZero() {
			return &statement.ParseError{Message: r.no, Field: ":30:", Reason: "pain.001 needs the requested execution date (ReqdExctnDt)"}
		}
		w.rawLeaf("Dt", date.AppendISO(r.num[:0]))
		w.close("ReqdExctnDt")
		if first.Debtor == nil {
			return &statement.ParseError{Message: r.no, Field: ":50a:", Reason: "pain.001 needs the debtor (Dbtr)"}
		}
		r.party("Dbtr", first.Debtor, rel+"/Dbtr")
		if a := first.Debtor.Account; a == "" || a == "NOTPROVIDED" {
			r.warn.Add(payment.CodeFieldDefaulted, r.path(rel+"/DbtrAcct"), 0, "no ordering customer account: DbtrAcct/Id/Othr/Id NOTPROVIDED")
			r.account("DbtrAcct", "NOTPROVIDED", rel+"/DbtrAcct")
		}
		agt := first.DebtorAgent
		if agt == nil {
			// Without :52a: the receiver services the ordering customer's account.
			agt = &payment.Agent{BIC: to}
			r.warn.Add(payment.CodeAgentDefaulted, r.path(rel+"/DbtrAgt"), 0, "no account servicing institution (:52a:): DbtrAgt is the receiver %s", to)
		}
		r.agentWithAccount("DbtrAgt", agt, rel+"/DbtrAgt")
		if first.ChargesAccount != "" {
			r.account("ChrgsAcct", first.ChargesAccount, rel+"/ChrgsAcct")
		}
		for i, tx := range txs {
			if err := r.initiationTx(tx, fmt.Sprintf("%s/CdtTrfTxInf[%d]", rel, i+1)); err != nil {
				return err
			}
		}
		w.close("PmtInf")
	}
	w.close("CstmrCdtTrfInitn")
	return nil
}

// groupTransactions cuts txs into runs that share what PmtInf states once.
func groupTransactions(txs []*payment.Payment) [][]*payment.Payment {
	var out [][]*payment.Payment
	for i, tx := range txs {
		if i > 0 {
			prev := txs[i-1]
			if reflect.DeepEqual(tx.Debtor, prev.Debtor) && reflect.DeepEqual(tx.DebtorAgent, prev.DebtorAgent) &&
				tx.ChargesAccount == prev.ChargesAccount && tx.SettlementDate == prev.SettlementDate {
				out[len(out)-1] = append(out[len(out)-1], tx)
				continue
			}
		}
		out = append(out, []*payment.Payment{tx})
	}
	return out
}

func (r *pacsRenderer) initiationTx(tx *payment.Payment, rel string) error {
	w := &r.w
	w.open("CdtTrfTxInf")
	w.open("PmtId")
	r.leaf("InstrId", tx.InstructionID, 35, rel+"/PmtId/InstrId")
	r.endToEnd(tx.EndToEndID, "end-to-end reference", rel+"/PmtId/EndToEndId")
	r.uetr(tx.UETR, rel+"/PmtId/UETR")
	w.close("PmtId")
	r.paymentType(tx, rel+"/PmtTpInf")
	w.open("Amt")
	if tx.Amount.Value.IsZero() && tx.InstructedAmount.Currency != "" {
		// :32B: 0 with :33B:: transfer the equivalent of the ordered amount.
		w.open("EqvtAmt")
		if err := r.amount("Amt", tx.InstructedAmount, rel+"/Amt/EqvtAmt/Amt"); err != nil {
			return err
		}
		if !payment.IsCurrency(tx.Amount.Currency) {
			return &statement.ParseError{Message: r.no, Field: rel + "/Amt/EqvtAmt/CcyOfTrf", Reason: fmt.Sprintf("currency %q is not an ISO 4217 code", clip(tx.Amount.Currency))}
		}
		w.leaf("CcyOfTrf", tx.Amount.Currency)
		w.close("EqvtAmt")
	} else {
		if err := r.amount("InstdAmt", tx.Amount, rel+"/Amt/InstdAmt"); err != nil {
			return err
		}
		if tx.InstructedAmount.Currency != "" {
			r.warn.Add(payment.CodeFieldDropped, r.path(rel+"/Amt"), 0, "the original ordered amount %s %s (:33B:) beside the amount to transfer has no pain.001 element", tx.InstructedAmount.Currency, tx.InstructedAmount.Value)
		}
	}
	w.close("Amt")
	if !tx.ExchangeRate.IsZero() || tx.DealReference != "" {
		w.open("XchgRateInf")
		if !tx.ExchangeRate.IsZero() {
			rate := tx.ExchangeRate
			if rate.NumDigits() > 11 || rate.Exponent() < -10 {
				rate = rate.Truncate(10)
				r.warn.Add(payment.CodeTruncated, r.path(rel+"/XchgRateInf/XchgRate"), 0, "exchange rate %s cut to %s (BaseOneRate: 11 digits, 10 decimals)", tx.ExchangeRate, rate)
			}
			w.leaf("XchgRate", rate.String())
		}
		r.leaf("CtrctId", tx.DealReference, 35, rel+"/XchgRateInf/CtrctId")
		w.close("XchgRateInf")
	}
	if tx.ChargeBearer != "" {
		w.leaf("ChrgBr", tx.ChargeBearer)
	}
	r.agentWithAccount("IntrmyAgt1", tx.Intermediary, rel+"/IntrmyAgt1")
	r.agentWithAccount("CdtrAgt", tx.CreditorAgent, rel+"/CdtrAgt")
	if tx.Creditor == nil {
		return &statement.ParseError{Message: r.no, Field: rel + "/Cdtr", Reason: "the transaction has no creditor (:59a:)"}
	}
	r.party("Cdtr", tx.Creditor, rel+"/Cdtr")
	cdtr := *tx
	cdtr.InstructionsForNextAgent = nil // the debtor agent's are InstrForDbtrAgt here
	r.instructions(&cdtr, rel, "CHQB HOLD PHOB TELB")
	var dbtr []string
	for _, in := range tx.InstructionsForNextAgent {
		if in.Code != "" {
			dbtr = append(dbtr, strings.TrimSpace("/"+in.Code+"/"+in.Text))
		} else if in.Text != "" {
			dbtr = append(dbtr, in.Text)
		}
	}
	r.leaf("InstrForDbtrAgt", strings.Join(dbtr, " "), 140, rel+"/InstrForDbtrAgt")
	if tx.Purpose != "" {
		w.open("Purp")
		r.leaf("Prtry", tx.Purpose, 35, rel+"/Purp/Prtry")
		w.close("Purp")
	}
	r.regulatory(tx.Regulatory, rel+"/RgltryRptg")
	r.remittance(tx.Remittance, rel+"/RmtInf")
	w.close("CdtTrfTxInf")
	return nil
}

func (r *pacsRenderer) pacs010(p *payment.Payment, ref, created, from, to string) error {
	w := &r.w
	w.open("FIDrctDbt")
	r.batchGroupHeader(p, ref, created)
	w.close("GrpHdr")
	w.open("CdtInstr")
	r.leaf("CdtId", firstOf(p.MessageID, ref), 35, "CdtInstr/CdtId")
	if len(p.Transactions) > 1 {
		sum := p.Transactions[0].Amount
		for _, tx := range p.Transactions[1:] {
			if tx.Amount.Currency != sum.Currency {
				return &statement.ParseError{Message: r.no, Field: ":32B:", Reason: "the transactions of one MT204 are in one currency (rule C02)"}
			}
			sum.Value = sum.Value.Add(tx.Amount.Value)
		}
		if err := r.amount("TtlIntrBkSttlmAmt", sum, "CdtInstr/TtlIntrBkSttlmAmt"); err != nil {
			return err
		}
	}
	r.agentBIC("InstgAgt", from)
	r.agentBIC("InstdAgt", to)
	r.agentWithAccount("CdtrAgt", p.CreditorAgent, "CdtInstr/CdtrAgt")
	// Without :58a: the sender is the institution to be credited.
	r.agentOr("Cdtr", p.CreditorFI, from, "CdtInstr/Cdtr", "no beneficiary institution (:58a:): Cdtr is the sender %s")
	r.instructions(&payment.Payment{InstructionsForCreditorAgent: p.InstructionsForCreditorAgent}, "CdtInstr", "PHOB TELB")
	for i, tx := range p.Transactions {
		rel := fmt.Sprintf("CdtInstr/DrctDbtTxInf[%d]", i+1)
		w.open("DrctDbtTxInf")
		w.open("PmtId")
		r.leaf("InstrId", tx.InstructionID, 35, rel+"/PmtId/InstrId")
		r.endToEnd(tx.EndToEndID, "end-to-end reference", rel+"/PmtId/EndToEndId")
		r.uetr(tx.UETR, rel+"/PmtId/UETR")
		w.close("PmtId")
		if err := r.amount("IntrBkSttlmAmt", tx.Amount, rel+"/IntrBkSttlmAmt"); err != nil {
			return err
		}
		d := tx.SettlementDate
		if d.IsZero() {
			d = p.SettlementDate
		}
		if !d.IsZero() {
			w.rawLeaf("IntrBkSttlmDt", d.AppendISO(r.num[:0]))
		}
		if tx.DebtorFI == nil {
			return &statement.ParseError{Message: r.no, Field: rel + "/Dbtr", Reason: "pacs.010 needs the debtor institution (:53a:)"}
		}
		r.agentWithAccount("Dbtr", tx.DebtorFI, rel+"/Dbtr")
		r.leaf("InstrForDbtrAgt", tx.AdditionalInfo, 210, rel+"/InstrForDbtrAgt")
		w.close("DrctDbtTxInf")
	}
	w.close("CdtInstr")
	w.close("FIDrctDbt")
	return nil
}

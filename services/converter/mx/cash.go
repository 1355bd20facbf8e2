package mx

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// The cash management messages of CBPR+: camt.057.001.06
// (NotificationToReceive, MT210), camt.060.001.05 (AccountReportingRequest,
// MT920) and camt.107.001.01, camt.108.001.01, camt.109.001.01 (cheque
// presentment notification, cancellation or stop request and report; MT110,
// MT111, MT112). They are read with the payment reader's tree and written
// with its writer (the head.001.001.02 AppHdr in an Envelope, the agents and
// parties of pacs.008.001.08, which these versions share) into the payment
// model with Payment.Cash. camt.058 (the cancellation of a notice to
// receive) is recognised and refused.

const (
	typeCamt57  = "camt.057"
	typeCamt58  = "camt.058"
	typeCamt60  = "camt.060"
	typeCamt107 = "camt.107"
	typeCamt108 = "camt.108"
	typeCamt109 = "camt.109"
)

// cashTypes are the cash management types read and written; cashVersions
// the version of each that is written and was checked element by element
// against its schema (others are read with PAY_VERSION_UNTESTED).
var (
	cashTypes    = []string{typeCamt57, typeCamt60, typeCamt107, typeCamt108, typeCamt109}
	cashVersions = map[string]string{
		typeCamt57: "camt.057.001.06", typeCamt60: "camt.060.001.05",
		typeCamt107: "camt.107.001.01", typeCamt108: "camt.108.001.01", typeCamt109: "camt.109.001.01",
	}
	cashKinds = map[string]payment.Kind{
		typeCamt57: payment.NoticeToReceive, typeCamt60: payment.ReportRequest,
		typeCamt107: payment.ChequeAdvice, typeCamt108: payment.ChequeStopRequest, typeCamt109: payment.ChequeStopStatus,
	}
	cashRoots = map[string]string{
		typeCamt57: "NtfctnToRcv", typeCamt60: "AcctRptgReq",
		typeCamt107: "ChqPresntmntNtfctn", typeCamt108: "ChqCxlOrStopReq", typeCamt109: "ChqCxlOrStopRpt",
	}
	cashMT = map[string]string{typeCamt57: "MT210", typeCamt60: "MT920", typeCamt107: "MT110", typeCamt108: "MT111", typeCamt109: "MT112"}
)

func isCashType(typ string) bool { _, ok := cashVersions[typ]; return ok }

// cashVersionOf returns the type and version of a cash management
// namespace (camt.058 included, to be refused by name).
func cashVersionOf(ns string) (typ, version string, ok bool) {
	return versionIn(ns, cashReadTypes)
}

// The namespace prefixes detectors look for, as bytes once: a conversion
// of a prefix longer than 32 bytes at each search was an allocation.
var (
	nsPrefixBytes = []byte(nsPrefix)
	cashPrefix    = []byte(nsPrefix + "camt.")
	returnPrefix  = []byte(nsPrefix + typePacs4 + ".")
)

// cashReadTypes are cashTypes and camt.058, read to be refused by name.
var cashReadTypes = append(slices.Clip(cashTypes), typeCamt58)

// CashFormats is what this package adds to a conversion engine for the
// cash management messages: the camt.057, camt.060, camt.107, camt.108 and
// camt.109 parsers and renderers, a camt.058 parser that refuses, and their
// detector. The MT side is mt.CashFormats.
func CashFormats() engine.FormatSet {
	var set engine.FormatSet
	for _, typ := range append(cashTypes, typeCamt58) {
		var known []string
		if v, ok := cashVersions[typ]; ok {
			known = []string{v}
		}
		set.Parsers = append(set.Parsers, engine.Parser{
			Type:     typ,
			Versions: known,
			ParsePayments: func(input []byte, version string, _ statement.Options) ([]*payment.Payment, []statement.Warning, error) {
				return ParseCash(input, typ, version)
			},
		})
	}
	for _, typ := range cashTypes {
		set.Renderers = append(set.Renderers, engine.Renderer{
			Type:           typ,
			MediaType:      MediaType,
			Versions:       []string{cashVersions[typ]},
			DefaultVersion: cashVersions[typ],
			Options:        []string{"strict", "targetVersion"},
			Accepts:        []string{cashMT[typ], typ},
			RenderPayments: func(ps []*payment.Payment, version string, _ statement.Options) ([]string, []statement.Warning, error) {
				return RenderCash(ps, typ, version)
			},
		})
	}
	set.Detectors = []engine.Detector{DetectCash}
	set.HeadDetectors = []engine.HeadDetector{detectCashHead}
	return set
}

// DetectCash recognises camt.057, camt.058, camt.060 and camt.107 to
// camt.109 from a namespace declared in the document, else from the
// AppHdr's MsgDefIdr.
func DetectCash(input []byte) (string, string, bool) {
	return detectNamespace(input, cashPrefix, cashReadTypes)
}

// namespaceEnd is the length of the namespace that starts rest: up to a
// quote, white space or '>' (bytes.IndexAny built a set of them per call).
func namespaceEnd(rest []byte) int {
	for i, c := range rest {
		switch c {
		case '"', '\'', ' ', '\t', '\r', '\n', '>':
			return i
		}
	}
	return len(rest)
}

// cashDocument finds the Document of a cash management message: the one in
// a cash namespace, else (a fault some senders make) one that declares a
// cash namespace under a prefix its elements do not use.
func (pp *pacsParser) cashDocument(want string) (int, error) {
	t := pp.t
	for i := range t.nodes {
		if t.name(i) != "Document" {
			continue
		}
		typ, v, ok := cashVersionOf(t.namespace(i))
		if !ok {
			for rest := t.attrs(i); ; {
				an, av, r, more := nextAttr(rest)
				if !more {
					break
				}
				rest = r
				if strings.HasPrefix(an, "xmlns:") {
					if typ, v, ok = cashVersionOf(attrValue(av)); ok {
						pp.w.Add(payment.CodeNonstandard, "Document", t.line(i), "the Document declares %s under the prefix %s, which its elements do not use; read as %s", v, clip(an[6:]), v)
						break
					}
				}
			}
		}
		if !ok {
			continue
		}
		if want != "" && !strings.EqualFold(want, typ) {
			return -1, pp.fail(i, "document is %s, not %s", v, want)
		}
		pp.typ, pp.version = typ, v
		return i, nil
	}
	return -1, &statement.ParseError{Field: "Document", Reason: "no " + want + " Document element found"}
}

// ParseCash reads a camt.057, camt.060, camt.107, camt.108 or camt.109 (one
// payment of the cash kind per document, its items in Cash), with or
// without its business application header, bare or in an envelope; want
// names the type. A camt.058 is refused with the reason.
func ParseCash(input []byte, want, _ string) ([]*payment.Payment, []statement.Warning, error) {
	t, err := parseTree(input)
	if err != nil {
		return nil, nil, err
	}
	defer t.release() // the payments keep strings of the input, never nodes
	pp := newPacsParser(t)
	doc, err := pp.cashDocument(want)
	if err != nil {
		return nil, nil, err
	}
	if pp.typ == typeCamt58 {
		return nil, nil, &statement.ParseError{Line: t.line(doc), Field: "Document", Reason: payment.RefusedCamt058}
	}
	if pp.version != cashVersions[pp.typ] {
		pp.w.AddText(payment.CodeVersionUntested, "Document", 0, pp.version+" read with the element paths of "+cashVersions[pp.typ])
	}
	var hdr payment.Header
	if ah := t.find(-1, "AppHdr"); ah >= 0 {
		hdr = pp.appHdr(ah)
	}
	root := t.child(doc, cashRoots[pp.typ])
	if root < 0 {
		return nil, nil, pp.fail(doc, "expected %s", cashRoots[pp.typ])
	}
	gh := t.child(root, "GrpHdr")
	if gh < 0 {
		return nil, nil, pp.fail(root, "GrpHdr is missing")
	}
	p := &payment.Payment{Kind: cashKinds[pp.typ], Header: hdr, Cash: &payment.Cash{}, MessageID: t.get(gh, "MsgId")}
	p.CreatedAt, _ = parseDateTime(t.get(gh, "CreDtTm"))
	switch pp.typ {
	case typeCamt57:
		err = pp.camt057(root, p)
	case typeCamt60:
		err = pp.camt060(root, p)
	default:
		t.get(gh, "NbOfChqs")
		t.get(gh, "CtrlSum")
		err = pp.chequeMessage(root, p)
	}
	if err != nil {
		return nil, nil, err
	}
	for _, id := range t.unused(doc) {
		path := t.pathOf(id)
		pp.w.AddText(payment.CodeFieldDropped, path, t.line(id), path+" has no place in the payment model and was not carried")
	}
	return []*payment.Payment{p}, pp.w.Result(), nil
}

// headerAgent reads an account owner (Party40Choice) or servicer
// (BranchAndFinancialInstitutionIdentification6) BIC, which MT states in
// its header: it completes the header, and one that says otherwise has no
// MT field.
func (pp *pacsParser) headerAgent(parent int, path string, bic *string) {
	t := pp.t
	id := t.at(parent, path)
	if id < 0 {
		return
	}
	v := t.get(id, "BICFI")
	if v == "" {
		v = t.get(id, "AnyBIC")
	}
	if v == "" || v == "NOTPROVIDED" {
		return
	}
	switch {
	case *bic == "":
		*bic = v
	case strings.TrimSuffix(*bic, "XXX") != strings.TrimSuffix(v, "XXX"):
		path := t.pathOf(id)
		pp.w.Add(payment.CodeFieldDropped, path, t.line(id), "%s %s differs from the AppHdr's %s and has no MT field", path, clip(v), clip(*bic))
	}
}

// noticeParties reads the Dbtr (Party40Choice), DbtrAgt and IntrmyAgt of a
// notification or one of its items into it.
func (pp *pacsParser) noticeParties(parent int, it *payment.CashItem) {
	t := pp.t
	if d := t.child(parent, "Dbtr"); d >= 0 {
		it.Debtor, it.DebtorFI = pp.party(d, "Pty"), pp.agent(d, "Agt")
	}
	if a := pp.agent(parent, "DbtrAgt"); a != nil {
		it.DebtorAgent = a
	}
	if a := pp.agent(parent, "IntrmyAgt"); a != nil {
		it.Intermediary = a
	}
}

func (pp *pacsParser) camt057(root int, p *payment.Payment) error {
	t := pp.t
	n := t.child(root, "Ntfctn")
	if n < 0 {
		return pp.fail(root, "Ntfctn is missing")
	}
	if id := t.get(n, "Id"); id != "" && id != p.MessageID {
		pp.w.Add(payment.CodeFieldDropped, "Ntfctn/Id", t.line(n), "Ntfctn/Id %q differs from GrpHdr/MsgId and has no MT210 field", clip(id))
	}
	p.Account = pp.account(n, "Acct")
	acctCcy := t.get(n, "Acct/Ccy")
	pp.headerAgent(n, "AcctOwnr/Agt/FinInstnId", &p.Header.From)
	pp.headerAgent(n, "AcctOwnr/Pty/Id/OrgId", &p.Header.From)
	pp.headerAgent(n, "AcctSvcr/FinInstnId", &p.Header.To)
	if d := t.get(n, "XpctdValDt"); d != "" {
		var ok bool
		if p.SettlementDate, ok = parseISODate(d); !ok {
			return pp.fail(t.child(n, "XpctdValDt"), "%q is not a date", clip(d))
		}
	}
	var total statement.Amount
	if tt := t.child(n, "TtlAmt"); tt >= 0 {
		var err error
		if total, err = pp.amount(tt, false); err != nil {
			return err
		}
	}
	var base payment.CashItem
	pp.noticeParties(n, &base)
	sum := total.Value.Sub(total.Value)
	for id := t.nodes[n].first; id >= 0; id = t.nodes[id].next {
		if t.name(id) != "Itm" {
			continue
		}
		it := base
		it.Reference = t.get(id, "Id")
		it.EndToEndID = t.get(id, "EndToEndId")
		var err error
		if it.UETR, err = pp.uetr(id, "UETR"); err != nil {
			return err
		}
		if it.Amount, err = pp.amount(t.child(id, "Amt"), true); err != nil {
			return err
		}
		sum = sum.Add(it.Amount.Value)
		it.Date = p.SettlementDate
		if d := t.get(id, "XpctdValDt"); d != "" {
			var ok bool
			if it.Date, ok = parseISODate(d); !ok {
				return pp.fail(t.child(id, "XpctdValDt"), "%q is not a date", clip(d))
			}
		}
		if it.Date.IsZero() {
			return pp.fail(id, "XpctdValDt is missing: MT210 needs the expected value date (:30:)")
		}
		pp.noticeParties(id, &it)
		if acctCcy != "" && acctCcy != it.Amount.Currency {
			pp.w.Add(payment.CodeFieldDropped, "Ntfctn/Acct/Ccy", t.line(n), "account currency %s differs from the item's %s and has no MT field", clip(acctCcy), it.Amount.Currency)
		}
		p.Cash.Items = append(p.Cash.Items, it)
	}
	if len(p.Cash.Items) == 0 {
		return pp.fail(n, "the notification has no Itm")
	}
	if total.Currency != "" && !total.Value.Equal(sum) {
		pp.w.Add(payment.CodeFieldDropped, "Ntfctn/TtlAmt", t.line(n), "TtlAmt %s differs from the sum of the items %s and has no MT field", total.Value, sum)
	}
	if p.SettlementDate.IsZero() {
		p.SettlementDate = p.Cash.Items[0].Date
	}
	return nil
}

func (pp *pacsParser) camt060(root int, p *payment.Payment) error {
	t := pp.t
	for rq := t.nodes[root].first; rq >= 0; rq = t.nodes[rq].next {
		if t.name(rq) != "RptgReq" {
			continue
		}
		it := payment.CashItem{Reference: t.get(rq, "Id"), RequestedMessage: t.get(rq, "ReqdMsgNmId"), Account: pp.account(rq, "Acct")}
		if it.Reference == p.MessageID {
			it.Reference = ""
		}
		if it.RequestedMessage == "" {
			return pp.fail(rq, "ReqdMsgNmId is missing: MT920 needs the message requested (:12:)")
		}
		pp.headerAgent(rq, "AcctOwnr/Agt/FinInstnId", &p.Header.From)
		pp.headerAgent(rq, "AcctOwnr/Pty/Id/OrgId", &p.Header.From)
		pp.headerAgent(rq, "AcctSvcr/FinInstnId", &p.Header.To)
		if tt := t.child(rq, "ReqdTxTp"); tt >= 0 {
			// Status and direction are mandatory in camt.060 and have no
			// MT920 field: written as CBPR+ translation does, read as such.
			t.get(tt, "Sts/Cd")
			t.get(tt, "CdtDbtInd")
			for fl := t.nodes[tt].first; fl >= 0; fl = t.nodes[fl].next {
				if t.name(fl) != "FlrLmt" {
					continue
				}
				a, err := pp.amount(t.child(fl, "Amt"), true)
				if err != nil {
					return err
				}
				lim := payment.FloorLimit{Amount: a}
				switch ind := t.get(fl, "CdtDbtInd"); ind {
				case "DEBT":
					lim.Mark = "D"
				case "CRED":
					lim.Mark = "C"
				case "BOTH":
				default:
					return pp.fail(fl, "FlrLmt/CdtDbtInd %q is not CRED, DEBT or BOTH", clip(ind))
				}
				it.FloorLimits = append(it.FloorLimits, lim)
			}
		}
		p.Cash.Items = append(p.Cash.Items, it)
	}
	if len(p.Cash.Items) == 0 {
		return pp.fail(root, "the request has no RptgReq")
	}
	return nil
}

// chequeMessage reads the Chq of a camt.107, camt.108 or camt.109.
func (pp *pacsParser) chequeMessage(root int, p *payment.Payment) error {
	t := pp.t
	for c := t.nodes[root].first; c >= 0; c = t.nodes[c].next {
		if t.name(c) != "Chq" {
			continue
		}
		it := payment.CashItem{Reference: t.get(c, "InstrId"), OriginalInstructionID: t.get(c, "OrgnlInstrId"), ChequeNumber: t.get(c, "ChqNb")}
		if it.OriginalInstructionID == "NOTPROVIDED" {
			it.OriginalInstructionID = ""
		}
		if it.ChequeNumber == "" {
			return pp.fail(c, "ChqNb is missing: MT needs the cheque number (:21:)")
		}
		d := t.get(c, "IsseDt")
		var ok bool
		if it.IssueDate, ok = parseISODate(d); !ok {
			return pp.fail(c, "IsseDt %q is not a date: MT needs the date of issue (:30:)", clip(d))
		}
		var err error
		if it.Amount, err = pp.amount(t.child(c, "Amt"), true); err != nil {
			return err
		}
		// The :32A: date: ValDt of a camt.107, StlDt of a camt.108/109
		// (which have no value date).
		v := t.get(c, "StlDt")
		if pp.typ == typeCamt107 {
			v = firstOf(t.get(c, "ValDt/Dt"), t.get(c, "ValDt/DtTm"))
		}
		if v != "" {
			if it.Date, ok = parseDateOrDateTime(v); !ok {
				return pp.fail(c, "%q is not a date", clip(v))
			}
		}
		it.Debtor = pp.party(c, "Pyer")
		it.DebtorFI = pp.agentAcct(c, "DrwrAgt")
		it.Creditor = pp.party(c, "Pyee")
		for in := t.nodes[c].first; in >= 0; in = t.nodes[in].next {
			if t.name(in) == "InstrForChqAgt" {
				it.Instructions = append(it.Instructions, payment.Instruction{Code: t.get(in, "Cd"), Text: t.get(in, "InstrInf")})
			}
		}
		if r := t.child(c, "ChqCxlOrStopRsn"); r >= 0 {
			it.Reason = firstOf(t.get(r, "Rsn/Cd"), t.get(r, "Rsn/Prtry"))
			it.Info = t.get(r, "AddtlInf")
		}
		if s := t.child(c, "ChqCxlOrStopSts"); s >= 0 {
			it.Status = firstOf(t.get(s, "Sts/Cd"), t.get(s, "Sts/Prtry"))
			it.Info = t.get(s, "AddtlInf")
		}
		if pp.typ == typeCamt109 && it.Status == "" {
			return pp.fail(c, "ChqCxlOrStopSts/Sts is missing: MT112 needs the answer (:76:)")
		}
		p.Cash.Items = append(p.Cash.Items, it)
	}
	if len(p.Cash.Items) == 0 {
		return pp.fail(root, "the message has no Chq")
	}
	return nil
}

// RenderCash writes each cash management payment as one message of type
// typ: an Envelope with the head.001.001.02 AppHdr and the Document.
func RenderCash(ps []*payment.Payment, typ, version string) ([]string, []statement.Warning, error) {
	if !isCashType(typ) || version != cashVersions[typ] {
		return nil, nil, fmt.Errorf("unsupported %s version %q", typ, version)
	}
	return renderEach(ps, typ, version, func(p *payment.Payment) string {
		if p.Kind != cashKinds[typ] || p.Cash == nil {
			return fmt.Sprintf("a %s message is not a %s (%s)", p.Kind, typ, cashKinds[typ])
		}
		return ""
	})
}

// cash writes the message element of a cash management Document.
func (r *pacsRenderer) cash(p *payment.Payment, ref, created, from, to string) error {
	w := &r.w
	root := cashRoots[r.typ]
	w.open(root)
	r.openGroupHeader(firstOf(p.MessageID, ref), created)
	if r.typ != typeCamt57 && r.typ != typeCamt60 {
		w.leaf("NbOfChqs", fmt.Sprint(len(p.Cash.Items)))
	}
	w.close("GrpHdr")
	if len(p.Cash.Items) == 0 {
		return &statement.ParseError{Message: r.no, Reason: "the " + r.typ + " has no item to write"}
	}
	var err error
	switch r.typ {
	case typeCamt57:
		err = r.notice(p, firstOf(p.MessageID, ref), from, to)
	case typeCamt60:
		err = r.reportRequests(p, firstOf(p.MessageID, ref), from, to)
	default:
		err = r.cheques(p, firstOf(p.MessageID, ref))
	}
	if err != nil {
		return err
	}
	w.close(root)
	return nil
}

// headerAgent writes an account owner or servicer from the header's BIC.
func (r *pacsRenderer) headerAgent(name, bic string) {
	if payment.IsBIC(bic) {
		r.agentBIC(name, bic)
	}
}

// noticeDebtor writes Dbtr (Party40Choice), DbtrAgt and IntrmyAgt.
func (r *pacsRenderer) noticeDebtor(it payment.CashItem, rel string) {
	w := &r.w
	agt := it.DebtorAgent
	switch {
	case it.Debtor != nil:
		d := *it.Debtor
		if d.Account != "" && d.Account != "NOTPROVIDED" {
			r.warn.Add(payment.CodeFieldDropped, r.path(rel+"/Dbtr"), 0, "the ordering customer's account %q has no camt.057 element", clip(d.Account))
		}
		d.Account = ""
		w.open("Dbtr")
		r.party("Pty", &d, rel+"/Dbtr/Pty")
		w.close("Dbtr")
		if it.DebtorFI != nil && agt == nil {
			agt = it.DebtorFI
		}
	case it.DebtorFI != nil:
		w.open("Dbtr")
		r.noAccount(it.DebtorFI, rel+"/Dbtr/Agt")
		r.agent("Agt", it.DebtorFI, rel+"/Dbtr/Agt")
		w.close("Dbtr")
	}
	if agt != nil {
		r.noAccount(agt, rel+"/DbtrAgt")
		r.agent("DbtrAgt", agt, rel+"/DbtrAgt")
	}
	if it.Intermediary != nil {
		r.noAccount(it.Intermediary, rel+"/IntrmyAgt")
		r.agent("IntrmyAgt", it.Intermediary, rel+"/IntrmyAgt")
	}
}

// noAccount reports an agent's account (an MT party identifier) where the
// MX has no element for it.
func (r *pacsRenderer) noAccount(a *payment.Agent, rel string) {
	if a.Account != "" {
		r.warn.Add(payment.CodeFieldDropped, r.path(rel), 0, "the account %q of %s has no %s element", clip(a.Account), rel, r.typ)
	}
}

func (r *pacsRenderer) notice(p *payment.Payment, id, from, to string) error {
	w := &r.w
	w.open("Ntfctn")
	r.leaf("Id", id, 35, "Ntfctn/Id")
	if p.Account != "" {
		r.account("Acct", p.Account, "Ntfctn/Acct")
	}
	if payment.IsBIC(from) {
		w.open("AcctOwnr")
		r.agentBIC("Agt", from)
		w.close("AcctOwnr")
	}
	r.headerAgent("AcctSvcr", to)
	items := p.Cash.Items
	one := len(items) == 1
	if one {
		r.noticeDebtor(items[0], "Ntfctn")
	}
	for i, it := range items {
		rel := fmt.Sprintf("Ntfctn/Itm[%d]", i+1)
		w.open("Itm")
		ref := it.Reference
		if ref == "" {
			ref = "NOTPROVIDED"
			r.warn.Add(payment.CodeFieldDefaulted, r.path(rel+"/Id"), 0, "no item reference (:21:): NOTPROVIDED")
		}
		r.leaf("Id", ref, 35, rel+"/Id")
		r.leaf("EndToEndId", it.EndToEndID, 35, rel+"/EndToEndId")
		if it.UETR != "" {
			w.leaf("UETR", it.UETR)
		}
		if err := r.amount("Amt", it.Amount, rel+"/Amt"); err != nil {
			return err
		}
		d := it.Date
		if d.IsZero() {
			d = p.SettlementDate
		}
		if !d.IsZero() {
			w.rawLeaf("XpctdValDt", d.AppendISO(r.num[:0]))
		}
		if !one {
			r.noticeDebtor(it, rel)
		}
		w.close("Itm")
	}
	w.close("Ntfctn")
	return nil
}

func (r *pacsRenderer) reportRequests(p *payment.Payment, id, from, to string) error {
	w := &r.w
	for i, it := range p.Cash.Items {
		rel := fmt.Sprintf("RptgReq[%d]", i+1)
		w.open("RptgReq")
		r.leaf("Id", firstOf(it.Reference, id), 35, rel+"/Id")
		if it.RequestedMessage == "" {
			return &statement.ParseError{Message: r.no, Field: rel + "/ReqdMsgNmId", Reason: "no message requested (:12:)"}
		}
		r.leaf("ReqdMsgNmId", it.RequestedMessage, 35, rel+"/ReqdMsgNmId")
		if it.Account != "" {
			r.account("Acct", it.Account, rel+"/Acct")
		}
		w.open("AcctOwnr")
		if payment.IsBIC(from) {
			r.agentBIC("Agt", from)
		} else {
			r.warn.Add(payment.CodeHeaderDefaulted, r.path(rel+"/AcctOwnr"), 0, "no sender BIC for the account owner: FinInstnId/Nm NOTPROVIDED")
			r.agent("Agt", &payment.Agent{Name: "NOTPROVIDED"}, rel+"/AcctOwnr/Agt")
		}
		w.close("AcctOwnr")
		r.headerAgent("AcctSvcr", to)
		if len(it.FloorLimits) > 0 {
			w.open("ReqdTxTp")
			w.open("Sts")
			w.leaf("Cd", "PDNG")
			w.close("Sts")
			ind := "CRDT"
			for _, fl := range it.FloorLimits {
				if fl.Mark != "C" {
					ind = "DBIT"
				}
			}
			w.leaf("CdtDbtInd", ind)
			for j, fl := range it.FloorLimits {
				w.open("FlrLmt")
				if err := r.amount("Amt", fl.Amount, fmt.Sprintf("%s/ReqdTxTp/FlrLmt[%d]/Amt", rel, j+1)); err != nil {
					return err
				}
				w.leaf("CdtDbtInd", map[string]string{"D": "DEBT", "C": "CRED", "": "BOTH"}[fl.Mark])
				w.close("FlrLmt")
			}
			w.close("ReqdTxTp")
		}
		w.close("RptgReq")
	}
	return nil
}

func (r *pacsRenderer) cheques(p *payment.Payment, id string) error {
	w := &r.w
	if r.typ != typeCamt107 && (p.SendersCorrespondent != nil || p.ReceiversCorrespondent != nil || p.AdditionalInfo != "") {
		r.warn.Add(payment.CodeFieldDropped, r.path(cashRoots[r.typ]), 0, "correspondents and :72: of an MT110 have no %s element", r.typ)
	}
	if r.typ == typeCamt107 {
		if p.SendersCorrespondent != nil || p.ReceiversCorrespondent != nil {
			r.warn.Add(payment.CodeFieldDropped, r.path("Chq"), 0, "the sender's and receiver's correspondents (:53a:, :54a:) have no camt.107 element")
		}
	}
	for i, it := range p.Cash.Items {
		rel := fmt.Sprintf("Chq[%d]", i+1)
		w.open("Chq")
		r.leaf("InstrId", firstOf(it.Reference, id), 35, rel+"/InstrId")
		if r.typ != typeCamt107 {
			r.leaf("OrgnlInstrId", it.OriginalInstructionID, 35, rel+"/OrgnlInstrId")
		}
		r.leaf("ChqNb", it.ChequeNumber, 35, rel+"/ChqNb")
		w.rawLeaf("IsseDt", it.IssueDate.AppendISO(r.num[:0]))
		if r.typ != typeCamt107 && !it.Date.IsZero() {
			w.rawLeaf("StlDt", it.Date.AppendISO(r.num[:0]))
		}
		if err := r.amount("Amt", it.Amount, rel+"/Amt"); err != nil {
			return err
		}
		if r.typ == typeCamt107 {
			if !it.Date.IsZero() {
				w.open("ValDt")
				w.rawLeaf("Dt", it.Date.AppendISO(r.num[:0]))
				w.close("ValDt")
			}
			if it.Debtor != nil {
				r.party("Pyer", it.Debtor, rel+"/Pyer")
			}
		} else if it.Debtor != nil {
			r.warn.Add(payment.CodeFieldDropped, r.path(rel+"/Pyer"), 0, "%s has no payer", r.typ)
		}
		r.agentWithAccount("DrwrAgt", it.DebtorFI, rel+"/DrwrAgt")
		switch {
		case it.Creditor != nil:
			r.party("Pyee", it.Creditor, rel+"/Pyee")
		case r.typ == typeCamt107:
			return &statement.ParseError{Message: r.no, Field: rel + "/Pyee", Reason: "camt.107 needs the payee (:59a:)"}
		}
		switch r.typ {
		case typeCamt107:
			var ins []payment.Instruction
			if i == 0 && p.AdditionalInfo != "" {
				// MT110 :72: is the message's; camt.107 has the instructions
				// of each cheque: it goes with the first.
				for s := p.AdditionalInfo; s != ""; {
					n := min(len(s), 140)
					ins = append(ins, payment.Instruction{Text: s[:n]})
					s = s[n:]
				}
			}
			for j, in := range append(ins, it.Instructions...) {
				w.open("InstrForChqAgt")
				if in.Code != "" {
					r.leaf("Cd", in.Code, 4, fmt.Sprintf("%s/InstrForChqAgt[%d]/Cd", rel, j+1))
				}
				r.leaf("InstrInf", in.Text, 140, fmt.Sprintf("%s/InstrForChqAgt[%d]/InstrInf", rel, j+1))
				w.close("InstrForChqAgt")
			}
		case typeCamt108:
			if it.Reason != "" || it.Info != "" {
				w.open("ChqCxlOrStopRsn")
				r.reasonCode("Rsn", it.Reason, rel+"/ChqCxlOrStopRsn/Rsn")
				r.leaf("AddtlInf", it.Info, 140, rel+"/ChqCxlOrStopRsn/AddtlInf")
				w.close("ChqCxlOrStopRsn")
			}
		case typeCamt109:
			w.open("ChqCxlOrStopSts")
			r.reasonCode("Sts", it.Status, rel+"/ChqCxlOrStopSts/Sts")
			r.leaf("AddtlInf", it.Info, 140, rel+"/ChqCxlOrStopSts/AddtlInf")
			w.close("ChqCxlOrStopSts")
		}
		w.close("Chq")
	}
	return nil
}

// reasonCode writes a choice of Cd (an external code of up to 4) or Prtry;
// without any code NARR (narrative) says the text is all there is.
func (r *pacsRenderer) reasonCode(name, code, rel string) {
	if code == "" {
		code = "NARR"
		r.warn.Add(payment.CodeFieldDefaulted, r.path(rel), 0, "no code before the text: %s/Prtry NARR", name)
		w := &r.w
		w.open(name)
		w.leaf("Prtry", code)
		w.close(name)
		return
	}
	r.codeOrPrtry(name, code, rel)
}

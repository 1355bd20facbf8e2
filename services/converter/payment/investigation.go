package payment

import (
	"strings"
	"time"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// Exceptions and investigations: the MT common group messages n90, n91,
// n92, n95 and n96 and their CBPR+ counterparts camt.105, camt.106,
// camt.056, camt.026 and camt.029. They travel in the payment model (the
// header, the UETR, MessageID, Amount and SettlementDate keep their
// meaning); what they add is in Payment.Case.
const (
	// Cancellation is a request for cancellation: MT192, MT292 (MTn92),
	// camt.056 FIToFIPaymentCancellationRequest.
	Cancellation Kind = "cancellation-request"
	// Resolution is an answer to a request: MT196, MT296 (MTn96),
	// camt.029 ResolutionOfInvestigation.
	Resolution Kind = "resolution"
	// ChargesNotification is an advice of charges, interest and other
	// adjustments: MT190, MT290 (MTn90), camt.105 ChargesPaymentNotification.
	ChargesNotification Kind = "charges-notification"
	// ChargesRequest is a request for payment of charges, interest and
	// other expenses: MT191, MT291 (MTn91), camt.106 ChargesPaymentRequest.
	ChargesRequest Kind = "charges-request"
	// Query is a query: MT195, MT295 (MTn95), camt.026 UnableToApply. It is
	// read, not converted (docs/conversion-formats.md says why).
	Query Kind = "query"
)

// Investigative reports whether k is one of the exceptions and
// investigations kinds (Case holds their details).
func (k Kind) Investigative() bool {
	switch k {
	case Cancellation, Resolution, ChargesNotification, ChargesRequest, Query:
		return true
	}
	return false
}

// Case is what an exceptions and investigations message carries beside the
// payment fields. In these kinds MessageID is the message's own reference
// (:20:, Assgnmt/Id, CxlStsId, ChrgsId), InstructionID the original
// message's reference (:21: of an n92, n90, n91; OrgnlInstrId, InstrId),
// UETR the original transaction's and Amount and SettlementDate the
// original amount and date (:32A: of an n92) or the charges (:32a: of an
// n90/n91).
type Case struct {
	// The link to the original message: MT field 11S (requests) or 11R
	// (answers), MX OrgnlGrpInf (OrgnlMsgId, OrgnlMsgNmId, OrgnlCreDtTm)
	// or UndrlygTx/MsgNmId.
	//
	// OriginalMT is the MT type of the original message, 3 digits ("103").
	OriginalMT string
	// OriginalMX is the ISO 20022 message name the MX side gave
	// ("pacs.008.001.08"), when it named one.
	OriginalMX string
	// OriginalDate is the date of the original message (11a line 2,
	// the date of OrgnlCreDtTm).
	OriginalDate statement.Date
	// OriginalCreatedAt is OrgnlCreDtTm with its time, when MX gave one.
	OriginalCreatedAt time.Time
	// OriginalSession and OriginalISN are 11a line 3 (4!n6!n): the FIN
	// session and input sequence number of the original. MX has no place
	// for them.
	OriginalSession, OriginalISN string

	// ID is the case: Case/Id of a camt.056, RslvdCase/Id of a camt.029
	// (MT n96 :21:, the request's :20:).
	ID string
	// Creator is Case/Cretr (an agent) when MX names one.
	Creator *Agent
	// CreatorParty is Case/Cretr/Pty.
	CreatorParty *Party

	// Status is the answer of an n96 (:76: /CODE/), camt.029 Sts/Conf:
	// CNCL, PDCR, RJCR, ...
	Status string
	// Reason is the request's or answer's reason code: n92 :79: /CODE/,
	// CxlRsnInf/Rsn/Cd; n96 :76: /STATUS/CODE, CxlStsRsnInf/Rsn/Cd.
	Reason string
	// ReasonInfo are the reason's texts (CxlRsnInf/AddtlInf,
	// CxlStsRsnInf/AddtlInf, Max105Text each): n92 :79: lines beyond the
	// code and the UETR, n96 :76: text and :77A: lines other than /UETR/,
	// n95 :75: queries.
	ReasonInfo []string
	// Originator is CxlRsnInf/Orgtr or CxlStsRsnInf/Orgtr: MT has no field
	// for it.
	Originator *Party
	// Narrative is an n95's :77A: (the query's narrative).
	Narrative []string
	// Text is :79: of an n95 or n96 (a description of the original
	// message); camt.029 has no place for it.
	Text []string
	// Details are :71B: lines that are not charge items (the charges
	// record's AddtlInf).
	Details []string

	// Charges (n90, n91; camt.105, camt.106):
	// Charges are the :71B: items, ChrgsBrkdwn.
	Charges []Charge
	// Requestor is :72: /CHRQ/, ChrgsRqstr.
	Requestor *Agent
	// Account is the n90 :25: account, camt.105 ChrgsAcct.
	Account string
	// Debit: the charges are debited (n90 :32D:, DBIT), else credited
	// (:32C:, CRDT). An n91 requests payment: always a debit.
	Debit bool
	// AccountWithInstitution is n91 :57a: (the institution where the
	// sender wants the charges paid), ChrgsAcctAgt.
	AccountWithInstitution *Agent
	// Instructions are :72: lines other than /CHRQ/ (InstrForInstdAgt/InstrInf).
	Instructions []string
}

// Charge is one charge item: :71B: /CODE/CCYamount[/D|/C], ChrgsBrkdwn.
type Charge struct {
	Code   string // ChargeType3Choice Cd (OURC, NSTP, …), else Prtry
	Amount statement.Amount
	// Credit is true for a credit (/C, CRDT); a debit otherwise.
	Credit bool
}

// MTOfMX is the MT type ("103") of an ISO 20022 message name
// ("pacs.008.001.08", "MT202"), "" when there is none: a pacs.008 is an
// MT103, a pacs.009 an MT202, a pacs.004 an MT103, a pacs.010 an MT204,
// camt.054 an MT900 or MT910 (we say 900).
func MTOfMX(name string) string {
	n := strings.TrimSpace(name)
	if len(n) == 5 && (n[:2] == "MT" || n[:2] == "mt") && allDigits(n[2:]) {
		return n[2:]
	}
	switch {
	case strings.HasPrefix(n, "pacs.008"), strings.HasPrefix(n, "pacs.004"), strings.HasPrefix(n, "pacs.003"):
		return "103"
	case strings.HasPrefix(n, "pacs.009"):
		return "202"
	case strings.HasPrefix(n, "pacs.010"):
		return "204"
	case strings.HasPrefix(n, "pain.001"):
		return "101"
	case strings.HasPrefix(n, "camt.054"):
		return "900"
	}
	return ""
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !digit(s[i]) {
			return false
		}
	}
	return s != ""
}

// investigationMX is the ISO 20022 message of each investigative kind.
var investigationMX = map[Kind]string{
	Cancellation:        "camt.056",
	Resolution:          "camt.029",
	ChargesNotification: "camt.105",
	ChargesRequest:      "camt.106",
	Query:               "camt.026",
}

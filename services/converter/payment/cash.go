package payment

import "github.com/ledgerlane/platform/services/converter/statement"

// Cash management messages: the notice to receive (MT210, camt.057), the
// request for a statement or report (MT920, camt.060) and the cheque
// messages (MT110, MT111, MT112; camt.107, camt.108, camt.109). They travel
// in the payment model: the header, MessageID (:20:, GrpHdr/MsgId),
// CreatedAt and the UETR (block 3 :121:) keep their meaning; what repeats
// in them (the items of a notice, the reports asked for, the cheques) is in
// Payment.Cash.
const (
	// NoticeToReceive advises the account servicer that funds will be
	// credited to the account: MT210, camt.057 NotificationToReceive.
	// Payment.Account is :25: (Ntfctn/Acct), SettlementDate :30:
	// (XpctdValDt).
	NoticeToReceive Kind = "notice-to-receive"
	// ReportRequest asks the account servicer for a statement or report:
	// MT920, camt.060 AccountReportingRequest.
	ReportRequest Kind = "report-request"
	// ChequeAdvice advises cheques drawn on the receiver: MT110, camt.107
	// ChequePresentmentNotification. SendersCorrespondent and
	// ReceiversCorrespondent are :53a: and :54a:, AdditionalInfo :72:.
	ChequeAdvice Kind = "cheque-advice"
	// ChequeStopRequest asks to stop payment of a cheque: MT111, camt.108
	// ChequeCancellationOrStopRequest.
	ChequeStopRequest Kind = "cheque-stop-request"
	// ChequeStopStatus answers a stop request: MT112, camt.109
	// ChequeCancellationOrStopReport.
	ChequeStopStatus Kind = "cheque-stop-status"
)

// RefusedCamt058 says why a camt.058 (cancellation of a notice to receive)
// is not converted.
const RefusedCamt058 = "camt.058 (notification to receive cancellation advice) is not converted: CBPR+ translates it into an MT292 request for cancellation, " +
	"a different message than a notice; send the cancellation as a camt.056 (MT292) or a new camt.057"

// CashManagement reports whether k is one of the cash management kinds
// (Cash holds their items).
func (k Kind) CashManagement() bool {
	switch k {
	case NoticeToReceive, ReportRequest, ChequeAdvice, ChequeStopRequest, ChequeStopStatus:
		return true
	}
	return false
}

// Cheque reports whether k is a cheque message (MT110/111/112).
func (k Kind) Cheque() bool {
	return k == ChequeAdvice || k == ChequeStopRequest || k == ChequeStopStatus
}

// Cash is what a cash management message carries beside the payment
// fields: its repeated items, in the order of the message.
type Cash struct {
	Items []CashItem
}

// CashItem is one repeated part of a cash management message: a notice
// item (MT210 sequence, Ntfctn/Itm), a reporting request (MT920 sequence,
// RptgReq) or a cheque (MT110 sequence, the cheque of an MT111/MT112, Chq).
type CashItem struct {
	// Reference is MT210 :21: (Itm/Id), a reporting request's RptgReq/Id
	// or a cheque's InstrId.
	Reference string
	// EndToEndID and UETR are a notice item's Itm/EndToEndId and Itm/UETR
	// (the UETR of an MT210 with one item is block 3 :121:).
	EndToEndID, UETR string
	// Amount is :32B: (Itm/Amt) or a cheque's :32a: (Chq/Amt).
	Amount statement.Amount
	// Date is a notice item's expected value date (MT210 :30:,
	// Itm/XpctdValDt) or a cheque's value date (:32A:'s date, Chq/ValDt);
	// zero when absent.
	Date statement.Date

	// Notice items and cheques: Debtor is the ordering customer (MT210
	// :50a:, Dbtr/Pty) or the payer (MT110 :50a:, Pyer and PyerAcct);
	// DebtorFI the ordering institution (MT210 :52a: without :50a:,
	// Dbtr/Agt) or the drawer bank (:52a:, DrwrAgt and DrwrAgtAcct);
	// DebtorAgent the debtor's agent beside a customer (MT210 :52a: beside
	// :50a:, DbtrAgt); Intermediary MT210 :56a: (IntrmyAgt); Creditor the
	// payee (:59a:, Pyee and PyeeAcct).
	Debtor       *Party
	DebtorFI     *Agent
	DebtorAgent  *Agent
	Intermediary *Agent
	Creditor     *Party

	// Cheques: ChequeNumber is :21: (ChqNb), IssueDate :30: (IsseDt);
	// OriginalInstructionID is OrgnlInstrId (no MT field); Instructions
	// are InstrForChqAgt (MT110 :72:). A stop request's reason (MT111 :75:,
	// ChqCxlOrStopRsn/Rsn) is Reason, a stop status (MT112 :76:,
	// ChqCxlOrStopSts/Sts) Status; Info is their AddtlInf.
	ChequeNumber          string
	IssueDate             statement.Date
	OriginalInstructionID string
	Instructions          []Instruction
	Reason, Status        string
	Info                  string

	// Reporting requests: Account is MT920 :25: (RptgReq/Acct),
	// RequestedMessage :12: (ReqdMsgNmId: 940, 941, 942, 950 or an ISO
	// 20022 message name), FloorLimits :34F: (ReqdTxTp/FlrLmt).
	Account          string
	RequestedMessage string
	FloorLimits      []FloorLimit
}

// FloorLimit is an MT920 :34F: floor limit (camt.060 Limit2).
type FloorLimit struct {
	Amount statement.Amount
	// Mark is "D" (debit, FlrLmt CdtDbtInd DEBT), "C" (credit, CRED) or ""
	// (both, BOTH).
	Mark string
}

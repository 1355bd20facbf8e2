// Package payment is the converter's neutral model of an interbank payment
// instruction: what MT103 and pacs.008 (customer credit transfer) and
// MT202/MT205 (COV) and pacs.009 (financial institution credit transfer)
// have in common. It stands beside the statement model (package statement):
// payment parsers produce it, payment renderers consume it, and every loss on
// the way is a warning with a stable code (Codes; docs/conversion-warnings.md).
//
// Field names follow ISO 20022, since it is the richer side; the comments
// name the MT field each one comes from.
package payment

import (
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// Kind is the business meaning of a payment, which decides its MT type and
// its MX message.
type Kind string

const (
	// Customer is a customer credit transfer: MT103, pacs.008.
	Customer Kind = "customer"
	// Institution is a financial institution transfer: MT202/MT205,
	// pacs.009 CORE.
	Institution Kind = "institution"
	// Cover is a financial institution transfer covering a customer
	// transfer sent directly: MT202COV/MT205COV, pacs.009 COV (with
	// Underlying).
	Cover Kind = "cover"
	// DebitConfirmation is an advice that an account was debited: MT900,
	// camt.054 with a DBIT entry.
	DebitConfirmation Kind = "debit-confirmation"
	// CreditConfirmation is an advice that an account was credited: MT910,
	// camt.054 with a CRDT entry.
	CreditConfirmation Kind = "credit-confirmation"
	// Status is a payment status report: MT199/MT299 with /REJT/ in :79: or
	// in the gpi status confirmation form, an MT103/MT202/MT205 with /REJT/
	// in :72: (MT then names its type and the transfer's fields stay),
	// pacs.002.
	Status Kind = "status"
	// Return is a payment return: MT103, MT202 or MT205 with /RETN/ in
	// :72:, pacs.004.
	Return Kind = "return"
)

// Confirmation reports whether k is a debit or credit confirmation
// (MT900/MT910, camt.054).
func (k Kind) Confirmation() bool { return k == DebitConfirmation || k == CreditConfirmation }

// Payment is one credit transfer transaction with the header of the message
// that carried it.
type Payment struct {
	Kind Kind
	// MT is the MT type the payment came from or goes to without the "MT"
	// prefix: "103", "202", "205". MX sources leave it empty and the MT
	// renderer picks the type from Kind.
	MT string
	// ValidationFlag is block 3 field 119 (STP, REMIT, COV); MX has no place
	// for it.
	ValidationFlag string

	Header Header

	// MessageID is GrpHdr/MsgId (MT: field 20).
	MessageID string
	// CreatedAt is GrpHdr/CreDtTm (MT: the output date and time of block 2,
	// else the time of conversion).
	CreatedAt time.Time
	// SettlementMethod is SttlmInf/SttlmMtd: INDA, INGA, COVE or CLRG.
	SettlementMethod string
	// SettlementAccount is SttlmInf/SttlmAcct (MT: 53B with an account only).
	SettlementAccount string

	InstructionID string // :20:, PmtId/InstrId
	EndToEndID    string // :70: /ROC/ (MT103), :21: (MT202/205), PmtId/EndToEndId
	UETR          string // block 3 :121:, PmtId/UETR

	// BankOperationCode is MT103 :23B: (CRED, SPRI, SSTD, SPAY).
	BankOperationCode string
	// ServiceLevels are PmtTpInf/SvcLvl codes (MT :23E: SDVA, :72: /SVCLVL/).
	ServiceLevels []string
	// LocalInstrument is PmtTpInf/LclInstrm (MT :72: /LOCINS/).
	LocalInstrument string
	// CategoryPurpose is PmtTpInf/CtgyPurp/Cd (MT :23E: INTC, CORT; :72: /CATPURP/).
	CategoryPurpose string
	// Purpose is Purp/Prtry (MT :26T: transaction type code).
	Purpose string

	SettlementDate statement.Date   // :32A: date, IntrBkSttlmDt
	Amount         statement.Amount // :32A: currency and amount, IntrBkSttlmAmt
	// InstructedAmount is :33B:, InstdAmt; zero Currency when absent.
	InstructedAmount statement.Amount
	// ExchangeRate is :36:, XchgRate; zero when absent.
	ExchangeRate decimal.Decimal

	// ChargeBearer is ChrgBr: DEBT (:71A: OUR), CRED (BEN), SHAR (SHA), SLEV.
	ChargeBearer string
	// SenderCharges are :71F: (ChrgsInf with the sender as agent).
	SenderCharges []statement.Amount
	// ReceiverCharges is :71G: (ChrgsInf with the receiver as agent); zero
	// Currency when absent.
	ReceiverCharges statement.Amount

	// PreviousInstructingAgent is :72: /INS/, PrvsInstgAgt1.
	PreviousInstructingAgent *Agent
	InstructingAgent         *Agent // InstgAgt; MT: the sender
	InstructedAgent          *Agent // InstdAgt; MT: the receiver
	// The reimbursement agents (settlement chain): :53a:, :54a:, :55a:.
	SendersCorrespondent   *Agent
	ReceiversCorrespondent *Agent
	ThirdReimbursement     *Agent
	Intermediary           *Agent // :56a:, IntrmyAgt1

	// Customer transfers: the debtor (:50a:) and creditor (:59a:).
	Debtor   *Party
	Creditor *Party
	// Institution transfers: :52a: is the debtor (ordering institution) and
	// :58a: the creditor (beneficiary institution) as agents.
	DebtorFI   *Agent
	CreditorFI *Agent

	DebtorAgent   *Agent // :52a: (MT103) , DbtrAgt
	CreditorAgent *Agent // :57a:, CdtrAgt

	// Remittance is RmtInf/Ustrd (MT :70: without its /ROC/ line).
	Remittance []string
	// InstructionsForCreditorAgent are :23E: codes (CHQB, HOLD, PHOB, TELB)
	// and :72: /ACC/ texts.
	InstructionsForCreditorAgent []Instruction
	// InstructionsForNextAgent are :23E: codes (PHON, TELE, PHOI, TELI) and
	// the other :72: lines.
	InstructionsForNextAgent []Instruction
	// Regulatory is :77B:, RgltryRptg/Dtls/Inf, one per line.
	Regulatory []string

	// Underlying is the customer transfer a cover payment covers (MT202COV
	// sequence B, pacs.009 UndrlygCstmrCdtTrf).
	Underlying *Payment

	// Cash is what a cash management message (Kind NoticeToReceive,
	// ReportRequest, ChequeAdvice, ChequeStopRequest, ChequeStopStatus)
	// adds: cash.go.
	Cash *Cash

	// Confirmations (MT900/MT910, camt.054) only:
	// Account is the account debited or credited (:25:, Ntfctn/Acct).
	Account string
	// BookedAt is the date and time of the debit or credit with its offset
	// (:13D:, Ntry/BookgDt/DtTm); zero when absent.
	BookedAt time.Time
	// AdditionalInfo is :72: as text (TxDtls/AddtlTxInf, Max500Text).
	AdditionalInfo string

	// Status reports (MT199/MT299, MT103/202/205 rejects, pacs.002) only;
	// InstructionID, EndToEndID and UETR are then the original
	// transaction's, and Amount, SettlementDate and the parties the rejected
	// transfer's (pacs.002 OrgnlTxRef), when known.
	// TransactionStatus is TxSts (RJCT for /REJT/).
	TransactionStatus string
	// StatusReason is StsRsnInf/Rsn/Cd (the code on :79: line 2).
	StatusReason string
	// StatusInfo are StsRsnInf/AddtlInf (the text after the code, /TEXT/ lines).
	StatusInfo []string
	// StatusTime is when the status was reached, with its offset: the
	// first :79: line of a gpi status confirmation, pacs.002 AccptncDtTm;
	// zero when absent.
	StatusTime time.Time
	// OriginalMessageID is OrgnlGrpInf/OrgnlMsgId (:79: /MREF/).
	OriginalMessageID string
	// OriginalMessageType is OrgnlGrpInf/OrgnlMsgNmId ("MT103" for /REJT/103).
	OriginalMessageType string

	// Returns (MT103/MT202/MT205 with /RETN/ in :72:, pacs.004) only:
	// MessageID is the return's own reference (:20:, GrpHdr/MsgId and
	// RtrId); EndToEndID and UETR are the original transaction's
	// (/TREF/ or MT202 :21:, OrgnlEndToEndId; block 3 :121:, OrgnlUETR);
	// Amount and SettlementDate are the returned amount (:32A:,
	// RtrdIntrBkSttlmAmt, IntrBkSttlmDt); InstructedAmount is :33B:,
	// RtrdInstdAmt. The return chain is Debtor/Creditor (MT103 :50a:,
	// :59a:; RtrChain Dbtr/Cdtr Pty) or DebtorFI/CreditorFI (MT202 :52a:,
	// :58a:; RtrChain Dbtr/Cdtr Agt).
	//
	// OriginalInstructionID is /MREF/, OrgnlInstrId.
	OriginalInstructionID string
	// ReturnReason is RtrRsnInf/Rsn/Cd (the :72: line after /RETN/).
	ReturnReason string
	// ReturnInfo are RtrRsnInf/AddtlInf (the text after the code, /TEXT/ lines).
	ReturnInfo []string
	// ReturnField is the nn of /RETN/nn, the field of the original message
	// that caused the return (99: none named); MX has no place for it.
	ReturnField string

	// Transactions are the transactions of a message that carries several
	// (Kind Initiation: MT101 sequence B, pain.001 CdtTrfTxInf; Kind
	// FIDirectDebit: MT204 sequence B, pacs.010 DrctDbtTxInf):
	// initiation.go.
	Transactions []*Payment
	// InitiatingParty is pain.001 GrpHdr/InitgPty (MT101 :50C: or :50L:,
	// the instructing party), when it is not the sender.
	InitiatingParty *Party
	// ChargesAccount is MT101 :25A:, pain.001 PmtInf/ChrgsAcct.
	ChargesAccount string
	// DealReference is MT101 :21F:, pain.001 XchgRateInf/CtrctId (the
	// foreign exchange contract).
	DealReference string
	// BatchReference is MT101 :21R: (the customer's reference for one
	// debit of the whole message), pain.001 PmtInfId with BtchBookg true.
	BatchReference string

	// Case is what an exceptions and investigations message (Kind
	// Cancellation, Resolution, ChargesNotification, ChargesRequest,
	// Query) adds: investigation.go.
	Case *Case
}

// Header is the business application header (head.001) or the MT's blocks 1
// to 3.
type Header struct {
	From      string // sender BIC (block 1 of an input message, the MIR of an output one; AppHdr Fr)
	To        string // receiver BIC (AppHdr To)
	BizMsgIdr string
	MsgDefIdr string // "pacs.008.001.08"
	BizSvc    string // "swift.cbprplus.02"
	CreatedAt time.Time
}

// Agent is a financial institution (BranchAndFinancialInstitutionIdentification6
// and its account; MT options A, B, C, D).
type Agent struct {
	BIC string
	// ClearingSystem and ClearingMember are ClrSysMmbId (MT "//FW123456789":
	// USABA and 123456789).
	ClearingSystem string
	ClearingMember string
	Name           string
	Address        Address
	// Account is the party identifier line ("/account"): the agent's account
	// (…AgtAcct).
	Account string
	// Location is option B's location line; MX has no place for it.
	Location string
}

// Party is a debtor or creditor (PartyIdentification135 and its account).
type Party struct {
	Name    string
	Address Address
	// BIC is an organisation's Id/OrgId/AnyBIC (MT options 50A, 59A).
	BIC string
	// Account is the IBAN or other account number (…Acct).
	Account string
	// IDs are other identifications (MT 50F codes CUST, DRLC, NIDN, …).
	IDs []PartyID
	// BirthDate and BirthPlace are 50F lines 4/ and 5/ (PrvtId/DtAndPlcOfBirth).
	BirthDate    statement.Date
	BirthCity    string
	BirthCountry string
}

// PartyID is an identification of a party by scheme.
type PartyID struct {
	Scheme  string // ExternalPersonIdentification1Code: CCPT, CUST, DRLC, EMPL, NIDN, SOSE, TXID, ARNU
	Issuer  string // country code, or country/issuer
	Value   string
	OrgForm bool // an organisation's id (OrgId/Othr) rather than a person's
}

// Address is a postal address, structured, unstructured or both (hybrid).
type Address struct {
	Street   string // StrtNm
	Building string // BldgNb
	PostCode string // PstCd
	Town     string // TwnNm
	District string // CtrySubDvsn
	Country  string // Ctry, ISO 3166 alpha-2
	Lines    []string
}

// IsZero reports whether a holds nothing.
func (a Address) IsZero() bool {
	return a.Street == "" && a.Building == "" && a.PostCode == "" && a.Town == "" && a.District == "" &&
		a.Country == "" && len(a.Lines) == 0
}

// Structured reports whether a has the town and country that make it usable
// under the structured-address rules (hybrid or fully structured).
func (a Address) Structured() bool { return a.Town != "" && a.Country != "" }

// Instruction is an instruction for the creditor agent or the next agent.
type Instruction struct {
	Code string // Instruction3Code/Instruction4Code (CHQB, HOLD, PHOB, TELB, PHON, TELE, PHOI, TELI)
	Text string // InstrInf (Max140Text)
}

// MXType is the ISO 20022 message a payment of kind k is: pacs.008,
// pacs.009 or camt.054.
func MXType(k Kind) string {
	switch {
	case k == Customer:
		return "pacs.008"
	case k.Confirmation():
		return "camt.054"
	case k == Status:
		return "pacs.002"
	case k == Return:
		return "pacs.004"
	case k.Investigative():
		return investigationMX[k]
	case k == Initiation:
		return "pain.001"
	case k == FIDirectDebit:
		return "pacs.010"
	}
	return "pacs.009"
}

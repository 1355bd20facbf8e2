package payment

// Messages that carry several transactions under one header: the customer's
// request for transfer (MT101, pain.001 CustomerCreditTransferInitiation)
// and the financial markets direct debit (MT204, pacs.010
// FinancialInstitutionDirectDebit). The message is one Payment; what
// repeats in it (MT sequence B, pain.001 CdtTrfTxInf, pacs.010
// DrctDbtTxInf) is Payment.Transactions, each a Payment of its own so that
// the party, agent, amount and text fields keep their payment meaning.
const (
	// Initiation is a request for transfer: MT101, pain.001. The message
	// holds the sequence A fields: MessageID (:20:, GrpHdr/MsgId,
	// PmtInfId), SettlementDate the requested execution date (:30:,
	// ReqdExctnDt), InitiatingParty the instructing party (:50C:/:50L:,
	// InitgPty). Each transaction (sequence B, CdtTrfTxInf) has its
	// EndToEndID (:21:), Amount (:32B:, InstdAmt), Debtor (:50a: ordering
	// customer, Dbtr and DbtrAcct), DebtorAgent (:52a: account servicing
	// institution, DbtrAgt), the creditor side and texts as an MT103 has
	// them, and ChargesAccount (:25A:, ChrgsAcct).
	Initiation Kind = "initiation"
	// FIDirectDebit is a financial markets direct debit: MT204, pacs.010.
	// The message holds MessageID (sequence A :20:, GrpHdr/MsgId and
	// CdtId), SettlementDate (:30:, IntrBkSttlmDt), Amount the sum of the
	// transactions (:19:, TtlIntrBkSttlmAmt), CreditorAgent (:57a:,
	// CdtrAgt), CreditorFI (:58a:, Cdtr) and
	// InstructionsForCreditorAgent (:72:, InstrForCdtrAgt). Each
	// transaction (sequence B, DrctDbtTxInf) has its InstructionID (:20:,
	// InstrId), EndToEndID (:21:), Amount (:32B:, IntrBkSttlmAmt), DebtorFI
	// the debit institution (:53a:, Dbtr and DbtrAcct) and AdditionalInfo
	// (:72:, InstrForDbtrAgt).
	FIDirectDebit Kind = "fi-direct-debit"
)

// Batch reports whether k is a message whose transactions are in
// Payment.Transactions (MT101, MT204).
func (k Kind) Batch() bool { return k == Initiation || k == FIDirectDebit }

// RefusedMT101Batch says why a strict conversion refuses to write an MT101
// with several transactions.
const RefusedMT101Batch = "from November 2026 FIN accepts one transaction per MT101 (sequence B); send one message per transaction"

// MT101Codes are the instruction codes of MT101 :23E:. Beside the category
// purposes INTC and CORT and the cheque CHQB they instruct the account
// servicing institution, which pain.001 says in InstrForDbtrAgt.
var MT101Codes = map[string]bool{"CHQB": true, "CMSW": true, "CMTO": true, "CMZB": true, "CORT": true, "EQUI": true,
	"INTC": true, "NETS": true, "OTHR": true, "PHON": true, "REPA": true, "RTGS": true, "URGP": true}

// RefusedDirectDebit says why the customer direct debits MT104 and MT107
// and their ISO 20022 counterpart pacs.003 are not converted.
const RefusedDirectDebit = "MT104 and MT107 (customer direct debits) and pacs.003 are not converted: the converter has no direct debit model " +
	"(the mandate, the creditor scheme identification, the debtor and creditor roles of a debit) and no shared CBPR+ MT104 or MT107 pair " +
	"to check a mapping against, so it refuses rather than guess; send them as they are, or claim between institutions with MT204 (pacs.010)"

// RefusedDirectDebits names the refused direct debit types with the
// reason, as engine.Renderer.Refuses takes them.
func RefusedDirectDebits() map[string]string {
	return map[string]string{"MT104": RefusedDirectDebit, "MT107": RefusedDirectDebit, "pacs.003": RefusedDirectDebit}
}

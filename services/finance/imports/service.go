package imports

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
)

// Config assembles a Service.
type Config struct {
	// Kernel is the finance service: the caller's write scope, the clock
	// and the logger.
	Kernel *finance.Service
	Store  Store
	// Parser reads the files: the converter's client in server.New. Nil
	// answers every import not-implemented.
	Parser StatementParser
}

// Service answers statement imports with the caller's grant applied.
type Service struct {
	k      *finance.Service
	store  Store
	parser StatementParser
}

// NewService returns a Service from cfg.
func NewService(cfg Config) *Service {
	return &Service{k: cfg.Kernel, store: cfg.Store, parser: cfg.Parser}
}

// applyAttempts bounds how often an import is matched and written again
// when a bank sync withdraws a row it matched meanwhile (as a sync retries
// a race with an edit).
const applyAttempts = 3

// ImportStatement answers POST /v1/imports: it has the converter read the
// file, then adds each entry of it to the account unless it is refused or
// already present (see imports.go for the rules). Importing the same file
// again adds nothing. A hidden or unknown account is 404.
func (s *Service) ImportStatement(ctx context.Context, c finance.Caller, req ImportRequest) (finance.Result[ImportResult], error) {
	var res finance.Result[ImportResult]
	sc, err := s.k.WriteScope(ctx, c)
	if err != nil {
		return res, err
	}
	accountID, err := finance.RequiredUUID(req.AccountID, "account_id")
	if err != nil {
		return res, err
	}
	if strings.TrimSpace(req.Message) == "" {
		return res, finance.Invalid("message", "message is required: the statement file's text")
	}
	account, err := s.store.GetAccount(ctx, c.UserID, accountID)
	if errors.Is(err, finance.ErrNotFound) || err == nil && sc.HidesAccount(account.ID) {
		return res, problem.New(problem.NotFound, "account not found").WithField("account_id")
	}
	if err != nil {
		return res, finance.Internal("get account", err)
	}
	if s.parser == nil {
		return res, problem.New(problem.NotImplemented, "statement import is not configured on this server")
	}
	parsed, err := s.parser.ParseStatement(ctx, req.StatementFile)
	if err != nil {
		return res, err
	}
	if len(parsed.Entries) > MaxImportEntries {
		return res, finance.Invalid("message", fmt.Sprintf("the file has %d entries; at most %d per import", len(parsed.Entries), MaxImportEntries))
	}
	entries, refused := prepareImport(parsed.Entries, account, s.k.Now())
	out := ImportResult{DetectedType: parsed.DetectedType, Refused: len(refused), Rows: refused}
	if out.Rows == nil {
		out.Rows = []RefusedRow{}
	}
	for attempt := 1; len(entries) > 0; attempt++ {
		counted := out
		err := s.applyImport(ctx, c.UserID, account, entries, &counted)
		if errors.Is(err, finance.ErrNotFound) && attempt < applyAttempts {
			// A bank sync withdrew a row this import matched: read again.
			continue
		}
		var p *problem.Problem
		switch {
		case errors.As(err, &p):
			return res, err
		case err != nil:
			return res, finance.Internal("apply import", err)
		}
		out = counted
		break
	}
	if out.Added > 0 {
		// New rows: recurring detection reads them in the background. The
		// rows are committed; a lost mark only delays detection until the
		// next change, so it does not fail the import.
		if err := s.store.MarkRecurringDue(ctx, c.UserID, s.k.Now()); err != nil {
			s.k.Log().WarnContext(ctx, "recurring detection not marked after an import", "account_id", account.ID, "error", err)
		}
	}
	res.Data = out
	return res, nil
}

// applyImport matches the accepted entries against what the account holds
// and writes the rest, counting each entry as added or matched.
func (s *Service) applyImport(ctx context.Context, userID string, account finance.Account, entries []importEntry, out *ImportResult) error {
	keys := make([]string, len(entries))
	first, last := entries[0].date, entries[0].date
	for i, e := range entries {
		keys[i] = e.key
		for _, d := range []time.Time{e.date, e.valueDate} {
			if d.IsZero() {
				continue
			}
			if d.Before(first) {
				first = d
			}
			if d.After(last) {
				last = d
			}
		}
	}
	bankRows, err := s.store.ListTransactions(ctx, userID, finance.TransactionFilter{AccountID: account.ID, Source: finance.SourceBankSync,
		StartDate: first, EndDate: last}, nil, 0)
	if err != nil {
		return finance.Internal("list bank rows", err)
	}
	ids := make([]string, len(bankRows))
	for i, t := range bankRows {
		ids[i] = t.ID
	}
	claims, err := s.store.ImportClaims(ctx, account.ID, keys, ids)
	if err != nil {
		return finance.Internal("import claims", err)
	}
	keyTaken, rowTaken := map[string]bool{}, map[string]bool{}
	for _, cl := range claims {
		keyTaken[cl.Key], rowTaken[cl.TransactionID] = true, true
	}
	for i := range entries {
		entries[i].claimed, entries[i].bankRowID = keyTaken[entries[i].key], ""
	}
	matchBankRows(entries, bankRows, rowTaken)

	now := s.k.Now()
	w := ImportWrite{UserID: userID, AccountID: account.ID}
	for _, e := range entries {
		switch {
		case e.claimed:
			out.Matched++
		case e.bankRowID != "":
			w.Rows = append(w.Rows, ImportRow{Key: e.key, MatchID: e.bankRowID})
		default:
			w.Rows = append(w.Rows, ImportRow{Key: e.key, Insert: &finance.Transaction{
				ID: uuid.NewString(), UserID: userID, AccountID: account.ID, Amount: e.amount,
				Merchant: e.merchant, DisplayName: e.merchant, Description: e.descr, Date: e.date,
				Source: finance.SourceImport, Tags: []string{}, Version: 1, CreatedAt: now, UpdatedAt: now,
			}})
		}
	}
	if len(w.Rows) == 0 {
		return nil
	}
	if n, ok := s.k.Note(finance.NoteTransactions, userID); ok {
		n.AccountIDs = []string{account.ID}
		w.Notes = []finance.Note{n} // announced with the rows (the outbox)
	}
	claimed, err := s.store.ApplyImport(ctx, w)
	if err != nil {
		return err // the caller retries finance.ErrNotFound and maps the rest
	}
	s.k.Notify().Written(ctx, userID)
	for i, r := range w.Rows {
		// A row another import claimed in the meantime is present all the
		// same: matched.
		if claimed[i] && r.Insert != nil {
			out.Added++
		} else {
			out.Matched++
		}
	}
	s.k.Log().InfoContext(ctx, "statement imported", "account_id", account.ID, "format", out.DetectedType,
		"added", out.Added, "matched", out.Matched, "refused", out.Refused)
	return nil
}

package accounting

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/periodic"
	"github.com/ledgerlane/platform/pkg/problem"
)

// PushRequest is a statement to book through a connection.
type PushRequest struct {
	ConnectionID  string
	Message       string
	From          string
	BankAccount   string
	ContraAccount string
}

// Entry outcomes.
const (
	EntryCreated = "created"
	EntryPresent = "present"
)

// PushedEntry is one entry and what became of it.
type PushedEntry struct {
	Entry      Entry
	Status     string
	PlatformID string
}

// PushResult counts what a push did.
type PushResult struct {
	ConnectionID   string
	Created        int
	AlreadyPresent int
	Entries        []PushedEntry
}

// Push books each entry of a statement as a bank transaction at the
// connection's platform, at most once: entries recorded as pushed through
// this connection are reported present, the others are sent with an
// idempotency key derived from their stable id (so a booking whose answer
// was lost is not doubled by the retry either) and recorded one by one. A
// failure part-way answers the platform's problem; the entries booked
// before it stay recorded, and the same push again continues from there.
func (s *Service) Push(ctx context.Context, c Caller, req PushRequest) (PushResult, error) {
	if err := s.check(c); err != nil {
		return PushResult{}, err
	}
	t, err := s.pushTarget(ctx, c, req)
	if err != nil {
		return PushResult{}, err
	}
	entries, err := s.bookableEntries(ctx, c, req)
	if err != nil {
		return PushResult{}, err
	}
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.ID
	}
	done, err := s.cfg.Store.PushedEntries(ctx, t.conn.ID, ids)
	if err != nil {
		return PushResult{}, err
	}
	res := PushResult{ConnectionID: t.conn.ID, Entries: make([]PushedEntry, len(entries))}
	for i, e := range entries {
		if pid, ok := done[e.ID]; ok {
			res.Entries[i] = PushedEntry{Entry: e, Status: EntryPresent, PlatformID: pid}
			res.AlreadyPresent++
			continue
		}
		pid, err := s.pushEntry(ctx, &t, e)
		switch err := err.(type) {
		case nil:
		case pushFailed:
			s.cfg.Metrics.EntriesPushed(t.conn.Platform, res.Created, res.AlreadyPresent)
			s.log.Warn("accounting push failed", "account_id", c.AccountID, "connection_id", t.conn.ID,
				"entry_id", e.ID, "pushed", res.Created, "error", err.err)
			return PushResult{}, platformProblem(err.err, fmt.Sprintf("entry %d (%s) after %d were booked", i+1, e.ID, res.Created))
		default:
			return PushResult{}, err
		}
		if err := s.cfg.Store.RecordPushed(ctx, t.conn.ID, e.ID, pid, s.timestamp()); err != nil {
			return PushResult{}, err
		}
		res.Entries[i] = PushedEntry{Entry: e, Status: EntryCreated, PlatformID: pid}
		res.Created++
	}
	s.cfg.Metrics.EntriesPushed(t.conn.Platform, res.Created, res.AlreadyPresent)
	s.log.Info("accounting statement pushed", "account_id", c.AccountID, "connection_id", t.conn.ID,
		"created", res.Created, "already_present", res.AlreadyPresent)
	return res, nil
}

// pushTo is where a push books: an active connection, its platform, the
// platform's bank and contra accounts and, once fetched, an access token.
type pushTo struct {
	conn         Connection
	platform     Platform
	bank, contra string
	tok          Token
}

// pushTarget checks the request against its connection: the connection
// must be the caller's and active, its platform still configured, and the
// accounts the platform requires sent (each at most 100 characters; the
// platform's defaults fill in the others).
func (s *Service) pushTarget(ctx context.Context, c Caller, req PushRequest) (pushTo, error) {
	var t pushTo
	if uuid.Validate(req.ConnectionID) != nil {
		return t, notFound()
	}
	conn, err := s.connection(ctx, c, req.ConnectionID)
	if err != nil {
		return t, storeErr(err)
	}
	if conn.Status != StatusActive {
		d := fmt.Sprintf("the connection is %s, not active", conn.Status)
		if conn.StatusReason != "" {
			d += ": " + conn.StatusReason
		}
		return t, problem.New(problem.ConnectionInactive, d)
	}
	p, ok := s.cfg.Platforms[conn.Platform]
	if !ok {
		return t, problem.New(problem.ConnectionInactive, "the connection's platform is no longer configured on this deployment")
	}
	required, bank, contra := p.Accounts()
	bank = firstNonEmpty(strings.TrimSpace(req.BankAccount), bank)
	contra = firstNonEmpty(strings.TrimSpace(req.ContraAccount), contra)
	switch {
	case strings.TrimSpace(req.Message) == "":
		return t, problem.New(problem.InvalidInput, "message is required: the statement's text").WithField("message")
	case required && strings.TrimSpace(req.BankAccount) == "":
		return t, problem.New(problem.InvalidInput, "bank_account is required for "+conn.Platform+": the platform's bank account to book into").WithField("bank_account")
	case required && strings.TrimSpace(req.ContraAccount) == "":
		return t, problem.New(problem.InvalidInput, "contra_account is required for "+conn.Platform+": the platform's account on the other side").WithField("contra_account")
	case len(bank) > 100:
		return t, problem.New(problem.InvalidInput, "bank_account is longer than 100 characters").WithField("bank_account")
	case len(contra) > 100:
		return t, problem.New(problem.InvalidInput, "contra_account is longer than 100 characters").WithField("contra_account")
	}
	return pushTo{conn: conn, platform: p, bank: bank, contra: contra}, nil
}

// bookableEntries are the statement's booked entries, read from the
// converter's CSV: one to MaxEntries of them. Pending entries (camt.052,
// MT942) are not booked yet: a later statement books them, under the same
// id when nothing about them changed.
func (s *Service) bookableEntries(ctx context.Context, c Caller, req PushRequest) ([]Entry, error) {
	text, err := s.cfg.Converter.StatementCSV(ctx, c, req.From, req.Message)
	if err != nil {
		return nil, err // the converter's problem (invalid-input naming the line, unavailable)
	}
	entries, err := ReadCSV(text)
	if err != nil {
		return nil, fmt.Errorf("accounting: reading the converter's csv: %w", err)
	}
	booked := entries[:0]
	for _, e := range entries {
		if e.Status != "pending" {
			booked = append(booked, e)
		}
	}
	entries = booked
	if len(entries) == 0 {
		return nil, problem.New(problem.Unprocessable, "the statement has no entries to push").WithField("message")
	}
	if len(entries) > MaxEntries {
		return nil, problem.New(problem.InvalidInput, fmt.Sprintf("the statement has %d entries; at most %d are pushed at once", len(entries), MaxEntries)).WithField("message")
	}
	return entries, nil
}

// pushFailed is the platform's refusal of one entry, which Push reports
// with how far it got; other errors pushEntry returns (a token refresh that
// failed) are answered as they are.
type pushFailed struct{ err error }

func (e pushFailed) Error() string { return e.err.Error() }

// pushEntry books one entry at t's platform, fetching an access token
// first when t has none and refreshing it once when the platform dropped
// it early.
func (s *Service) pushEntry(ctx context.Context, t *pushTo, e Entry) (string, error) {
	var err error
	if t.tok.AccessToken == "" {
		if t.conn, t.tok, err = s.freshToken(ctx, t.conn, t.platform); err != nil {
			return "", err
		}
	}
	tx := transaction(t.conn.ID, e, t.bank, t.contra)
	pid, err := t.platform.Push(ctx, t.tok.AccessToken, t.conn.PlatformTenantID, tx)
	s.cfg.Metrics.PlatformCall(t.conn.Platform, "push", outcome(err))
	if kind, _ := kindOf(err); err != nil && kind == KindUnauthorized {
		// The platform dropped the access token early: refresh once.
		t.conn.TokenExpiresAt = time.Time{}
		if t.conn, t.tok, err = s.freshToken(ctx, t.conn, t.platform); err != nil {
			return "", err
		}
		pid, err = t.platform.Push(ctx, t.tok.AccessToken, t.conn.PlatformTenantID, tx)
		s.cfg.Metrics.PlatformCall(t.conn.Platform, "push", outcome(err))
	}
	if err != nil {
		return "", pushFailed{err}
	}
	return pid, nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// transaction is an entry in the platform-neutral shape adapters map.
func transaction(connID string, e Entry, bank, contra string) BankTransaction {
	amount, credit := strings.CutPrefix(e.Amount, "-")
	desc := e.Description
	if desc == "" {
		desc = e.Counterparty
	}
	ref := firstNonEmpty(e.Reference, firstNonEmpty(e.BankReference, e.EndToEndID))
	return BankTransaction{
		Key: idempotencyKey(connID, e.ID), EntryID: e.ID, Date: e.BookingDate, Amount: amount, Credit: !credit,
		Currency: e.Currency, Description: clip(desc, 4000), Counterparty: clip(e.Counterparty, 255),
		Reference: clip(ref, 255), BankAccount: bank, ContraAccount: contra,
	}
}

// freshToken returns the connection's tokens, refreshed first when the
// access token expires within RefreshBefore.
func (s *Service) freshToken(ctx context.Context, conn Connection, p Platform) (Connection, Token, error) {
	now := s.timestamp()
	if !conn.TokenExpiresAt.IsZero() && now.Add(s.cfg.RefreshBefore).Before(conn.TokenExpiresAt) {
		tok, err := s.openToken(conn)
		return conn, tok, err
	}
	ok, err := s.cfg.Store.ClaimRefresh(ctx, conn.ID, now, now.Add(refreshLease))
	if err != nil {
		return conn, Token{}, err
	}
	if !ok {
		return conn, Token{}, problem.New(problem.PlatformUnavailable, "the connection's token is being refreshed; retry shortly").WithRetryAfter(5)
	}
	conn, err = s.refresh(ctx, conn, p)
	if err != nil {
		return conn, Token{}, err
	}
	tok, err := s.openToken(conn)
	return conn, tok, err
}

// refresh trades the refresh token for new tokens, under a claim the caller
// holds. A refusal (invalid_grant) puts the connection in error at once; a
// transient failure is retried by the refresher with a doubling backoff, and
// the MaxRefreshFailures-th puts it in error: never retried forever.
func (s *Service) refresh(ctx context.Context, conn Connection, p Platform) (Connection, error) {
	old, err := s.openToken(conn)
	if err != nil {
		return conn, err
	}
	now := s.timestamp()
	tok, err := p.Refresh(ctx, old.RefreshToken)
	s.cfg.Metrics.PlatformCall(conn.Platform, "refresh", outcome(err))
	if err != nil {
		kind, msg := kindOf(err)
		conn.UpdatedAt = now
		if kind == KindUnavailable {
			conn.RefreshFailures++
			conn.RefreshAfter = now.Add(s.cfg.RefreshBackoff << min(conn.RefreshFailures-1, 10))
			if conn.RefreshFailures >= MaxRefreshFailures {
				conn.Status = StatusError
				conn.StatusReason = fmt.Sprintf("token refresh failed %d times in a row (platform unavailable); connect again", conn.RefreshFailures)
			}
		} else {
			conn.Status = StatusError
			conn.StatusReason = "the platform refused the token refresh; connect again"
			if msg != "" {
				conn.StatusReason += " (" + clip(msg, 200) + ")"
			}
		}
		s.log.Warn("accounting token refresh failed", "account_id", conn.AccountID, "connection_id", conn.ID,
			"failures", conn.RefreshFailures, "status", conn.Status)
		if uerr := s.cfg.Store.UpdateConnection(ctx, conn); uerr != nil {
			return conn, uerr
		}
		if conn.Status == StatusError {
			return conn, problem.New(problem.ConnectionInactive, "the connection is error, not active: "+conn.StatusReason)
		}
		return conn, platformProblem(err, "the token refresh")
	}
	if tok.RefreshToken == "" {
		tok.RefreshToken = old.RefreshToken // not rotated by this platform
	}
	blob, err := s.sealToken(conn.ID, tok)
	if err != nil {
		return conn, err
	}
	conn.Tokens, conn.TokenExpiresAt = blob, tok.Expiry.UTC().Truncate(time.Microsecond)
	conn.RefreshFailures, conn.RefreshAfter, conn.UpdatedAt = 0, time.Time{}, now
	if err := s.cfg.Store.UpdateConnection(ctx, conn); err != nil {
		return conn, err
	}
	s.log.Info("accounting token refreshed", "account_id", conn.AccountID, "connection_id", conn.ID)
	return conn, nil
}

// RefreshDue refreshes every active connection whose access token expires
// within RefreshBefore (and whose backoff has passed), up to limit; it
// returns how many it refreshed. The refresh keeps rolling refresh tokens
// (QuickBooks 100 days, Xero 60 days) alive while nothing is pushed.
func (s *Service) RefreshDue(ctx context.Context, limit int) (int, error) {
	if s.cfg.Keys == nil {
		return 0, nil
	}
	now := s.timestamp()
	due, err := s.cfg.Store.DueRefresh(ctx, now.Add(s.cfg.RefreshBefore), now, limit)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, conn := range due {
		p, ok := s.cfg.Platforms[conn.Platform]
		if !ok {
			continue
		}
		claimed, err := s.cfg.Store.ClaimRefresh(ctx, conn.ID, now, now.Add(refreshLease))
		if err != nil {
			return n, err
		}
		if !claimed {
			continue
		}
		if _, err := s.refresh(ctx, conn, p); err != nil {
			var pr *problem.Problem
			if errors.Is(err, ErrNotFound) || errors.As(err, &pr) {
				continue // deleted meanwhile, or the failure is recorded on the connection
			}
			return n, err
		}
		n++
	}
	return n, nil
}

// RunRefresher calls RefreshDue every interval until ctx ends.
func (s *Service) RunRefresher(ctx context.Context, interval time.Duration) error {
	periodic.Task{Name: "accounting refresher", Every: interval, AtStart: true, Log: s.log, Run: func(ctx context.Context) error {
		_, err := s.RefreshDue(ctx, 100)
		return err
	}}.Loop(ctx)
	return nil
}

// Package postgres is the PostgreSQL jobs.Store. The pool is expected to point
// at the service's own schema ("jobs") with Migrations applied (see pkg/pg).
package postgres

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ledgerlane/platform/pkg/pg"
	"github.com/ledgerlane/platform/services/jobs"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations are the goose SQL migrations of the store, at the root of the FS.
var Migrations fs.FS = pg.MigrationsFS(migrationFiles, "migrations")

// Store implements jobs.Store on a pgx pool.
type Store struct {
	pool *pgxpool.Pool
}

var _ jobs.Store = (*Store)(nil)

// New returns a Store on pool.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// storeErr maps a driver error the way every adapter does (pg.Error).
func storeErr(op string, err error) error {
	return pg.Error("jobs postgres: "+op, err, jobs.ErrNotFound, jobs.ErrConflict)
}

const jobCols = `id, account_id, mode, status, from_format, to_format, options, item_count,
	succeeded_count, failed_count, pending_count, ttl_seconds, created_at, started_at, completed_at, expires_at, reference, credential_id`

// The options column holds jobs.Options as JSON (its tags are the protojson
// names of conversion.v1.Options, which earlier versions stored), or NULL for
// none.

func optionsColumn(o jobs.Options) ([]byte, error) {
	if o.IsZero() {
		return nil, nil
	}
	return json.Marshal(o)
}

func scanJob(row pgx.Row) (jobs.Job, error) {
	var j jobs.Job
	var ttl int
	var opts []byte
	var started, completed *time.Time
	err := row.Scan(&j.ID, &j.AccountID, &j.Mode, &j.Status, &j.From, &j.To, &opts, &j.ItemCount,
		&j.Succeeded, &j.Failed, &j.Pending, &ttl, &j.CreatedAt, &started, &completed, &j.ExpiresAt, &j.Reference, &j.CredentialID)
	if err != nil {
		return jobs.Job{}, err
	}
	if len(opts) > 0 {
		if err := json.Unmarshal(opts, &j.Options); err != nil {
			return jobs.Job{}, fmt.Errorf("job %s: options: %w", j.ID, err)
		}
	}
	j.TTL = time.Duration(ttl) * time.Second
	if started != nil {
		j.StartedAt = started.UTC()
	}
	if completed != nil {
		j.CompletedAt = completed.UTC()
	}
	j.CreatedAt, j.ExpiresAt = j.CreatedAt.UTC(), j.ExpiresAt.UTC()
	return j, nil
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func (s *Store) CreateJob(ctx context.Context, j jobs.Job, items []jobs.Item) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return storeErr("create job", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	opts, err := optionsColumn(j.Options)
	if err != nil {
		return storeErr("create job", err)
	}
	// The job, its items and its enqueue intent (enqueued = false) commit
	// together: the outbox of submission.
	_, err = tx.Exec(ctx, `INSERT INTO jobs (`+jobCols+`, enqueued, enqueue_after, progress_at)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18, false, $19, $13)`,
		j.ID, j.AccountID, j.Mode, j.Status, j.From, j.To, opts, j.ItemCount,
		j.Succeeded, j.Failed, j.Pending, int(j.TTL/time.Second), j.CreatedAt, nullTime(j.StartedAt), nullTime(j.CompletedAt), j.ExpiresAt,
		j.Reference, j.CredentialID, j.CreatedAt.Add(jobs.EnqueueLease))
	if err != nil {
		return storeErr("create job", err)
	}
	// The key in the same transaction: a retry finds the job exactly when
	// it was committed (a unique violation is ErrConflict).
	if j.IdempotencyKey != "" {
		if _, err = tx.Exec(ctx, `INSERT INTO job_keys (account_id, key, job_id, request_hash) VALUES ($1,$2,$3,$4)`,
			j.AccountID, j.IdempotencyKey, j.ID, j.RequestHash); err != nil {
			return storeErr("create job key", err)
		}
	}
	// COPY: a batch holds up to 10,000 items.
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"items"}, []string{"job_id", "idx", "status", "input", "result"},
		pgx.CopyFromSlice(len(items), func(i int) ([]any, error) {
			it := items[i]
			return []any{j.ID, it.Index, it.Status, it.Input, it.Result}, nil
		}))
	if err != nil {
		return storeErr("create items", err)
	}
	return storeErr0("create job", tx.Commit(ctx))
}

func storeErr0(op string, err error) error {
	if err == nil {
		return nil
	}
	return storeErr(op, err)
}

func (s *Store) JobByIdempotencyKey(ctx context.Context, accountID, key string) (jobs.Job, error) {
	var jobID, hash string
	err := s.pool.QueryRow(ctx, `SELECT job_id::text, request_hash FROM job_keys WHERE account_id = $1 AND key = $2`,
		accountID, key).Scan(&jobID, &hash)
	if err != nil {
		return jobs.Job{}, storeErr("job by key", err)
	}
	j, err := s.GetJob(ctx, accountID, jobID)
	if err != nil {
		return jobs.Job{}, err
	}
	j.IdempotencyKey, j.RequestHash = key, hash
	return j, nil
}

func (s *Store) GetJob(ctx context.Context, accountID, id string) (jobs.Job, error) {
	j, err := scanJob(s.pool.QueryRow(ctx, `SELECT `+jobCols+` FROM jobs WHERE id = $1 AND account_id = $2`, id, accountID))
	if err != nil {
		return jobs.Job{}, storeErr("get job", err)
	}
	return j, nil
}

func (s *Store) JobByID(ctx context.Context, id string) (jobs.Job, error) {
	j, err := scanJob(s.pool.QueryRow(ctx, `SELECT `+jobCols+` FROM jobs WHERE id = $1`, id))
	if err != nil {
		return jobs.Job{}, storeErr("job by id", err)
	}
	return j, nil
}

func (s *Store) Items(ctx context.Context, jobID string) ([]jobs.Item, error) {
	var exists bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM jobs WHERE id = $1)`, jobID).Scan(&exists); err != nil {
		return nil, storeErr("items", err)
	}
	if !exists {
		return nil, jobs.ErrNotFound
	}
	return queryAll(ctx, s, "items", func(r pgx.CollectableRow) (jobs.Item, error) {
		var it jobs.Item
		err := r.Scan(&it.JobID, &it.Index, &it.Status, &it.Input, &it.Result)
		return it, err
	}, `SELECT job_id, idx, status, input, result FROM items WHERE job_id = $1 ORDER BY idx`, jobID)
}

func (s *Store) Item(ctx context.Context, jobID string, index int) (jobs.Item, error) {
	var it jobs.Item
	err := s.pool.QueryRow(ctx, `SELECT job_id, idx, status, input, result FROM items WHERE job_id = $1 AND idx = $2`, jobID, index).
		Scan(&it.JobID, &it.Index, &it.Status, &it.Input, &it.Result)
	if err != nil {
		return jobs.Item{}, storeErr("item", err)
	}
	return it, nil
}

func (s *Store) StartJob(ctx context.Context, jobID string, now time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE jobs SET status = 'running', started_at = $2, progress_at = $2 WHERE id = $1 AND status = 'queued'`, jobID, now)
	if err != nil {
		return storeErr("start job", err)
	}
	if tag.RowsAffected() == 0 {
		if _, err := s.JobByID(ctx, jobID); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) CompleteItem(ctx context.Context, jobID string, index int, status string, result []byte, now time.Time) (jobs.Job, bool, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return jobs.Job{}, false, storeErr("complete item", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	// The status guard makes a redelivered item a no-op: only the first
	// completion flips pending and touches the counts.
	tag, err := tx.Exec(ctx, `UPDATE items SET status = $3, result = $4, input = NULL
		WHERE job_id = $1 AND idx = $2 AND status = 'pending'`, jobID, index, status, result)
	if err != nil {
		return jobs.Job{}, false, storeErr("complete item", err)
	}
	if tag.RowsAffected() == 0 {
		if _, err := s.Item(ctx, jobID, index); err != nil {
			return jobs.Job{}, false, err
		}
		j, err := s.JobByID(ctx, jobID)
		return j, false, err
	}
	ok, failed := 0, 0
	if status == jobs.ItemOK {
		ok = 1
	} else {
		failed = 1
	}
	j, err := scanJob(tx.QueryRow(ctx, `UPDATE jobs SET
			succeeded_count = succeeded_count + $2,
			failed_count = failed_count + $3,
			pending_count = pending_count - 1,
			started_at = COALESCE(started_at, $4),
			progress_at = $4,
			status = CASE WHEN pending_count = 1 THEN 'completed' ELSE 'running' END,
			completed_at = CASE WHEN pending_count = 1 THEN $4 ELSE completed_at END,
			expires_at = CASE WHEN pending_count = 1 THEN $4 + make_interval(secs => ttl_seconds) ELSE expires_at END
		WHERE id = $1 RETURNING `+jobCols, jobID, ok, failed, now))
	if err != nil {
		return jobs.Job{}, false, storeErr("complete item", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return jobs.Job{}, false, storeErr("complete item", err)
	}
	return j, true, nil
}

func (s *Store) ClaimUnenqueued(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]jobs.Job, error) {
	// SKIP LOCKED lets replicas claim disjoint sets.
	return s.claimJobs(ctx, "claim unenqueued", `UPDATE jobs j SET enqueue_after = $2
		FROM (SELECT id FROM jobs WHERE NOT enqueued AND (enqueue_after IS NULL OR enqueue_after <= $1)
		      ORDER BY created_at, id LIMIT $3 FOR UPDATE SKIP LOCKED) c
		WHERE j.id = c.id RETURNING `+prefixed("j.", jobCols), now, now.Add(lease), limit)
}

func (s *Store) MarkEnqueued(ctx context.Context, jobID string) error {
	_, err := s.pool.Exec(ctx, `UPDATE jobs SET enqueued = true WHERE id = $1`, jobID)
	if err = storeErr0("mark enqueued", err); errors.Is(err, jobs.ErrNotFound) {
		return nil // a malformed id: no such job
	}
	return err
}

func (s *Store) OutboxBacklog(ctx context.Context) (jobs.OutboxBacklog, error) {
	// Served by the partial index jobs_unenqueued_idx, which holds only the
	// open intents: cheap however many jobs the table holds.
	var b jobs.OutboxBacklog
	var oldest *time.Time
	if err := s.pool.QueryRow(ctx, `SELECT count(*), min(created_at) FROM jobs WHERE NOT enqueued`).Scan(&b.Open, &oldest); err != nil {
		return jobs.OutboxBacklog{}, storeErr("outbox backlog", err)
	}
	if oldest != nil {
		b.Oldest = oldest.UTC()
	}
	return b, nil
}

func (s *Store) ClaimStalled(ctx context.Context, now time.Time, stalledFor, lease time.Duration, limit int) ([]jobs.Job, error) {
	return s.claimJobs(ctx, "claim stalled", `UPDATE jobs j SET check_after = $3
		FROM (SELECT id FROM jobs WHERE enqueued AND status <> 'completed' AND COALESCE(progress_at, created_at) <= $2
		      AND (check_after IS NULL OR check_after <= $1)
		      ORDER BY created_at, id LIMIT $4 FOR UPDATE SKIP LOCKED) c
		WHERE j.id = c.id RETURNING `+prefixed("j.", jobCols), now, now.Add(-stalledFor), now.Add(lease), limit)
}

func (s *Store) claimJobs(ctx context.Context, op, sql string, args ...any) ([]jobs.Job, error) {
	out, err := queryAll(ctx, s, op, func(r pgx.CollectableRow) (jobs.Job, error) { return scanJob(r) }, sql, args...)
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(a, b int) bool {
		if !out[a].CreatedAt.Equal(out[b].CreatedAt) {
			return out[a].CreatedAt.Before(out[b].CreatedAt)
		}
		return out[a].ID < out[b].ID
	})
	return out, nil
}

// queryAll is pkg/pg's All on the store's pool with its error mapping
// (storeErr).
func queryAll[T any](ctx context.Context, s *Store, op string, scan pgx.RowToFunc[T], sql string, args ...any) ([]T, error) {
	return pg.All(ctx, s.pool, storeErr, op, scan, sql, args...)
}

// prefixed qualifies each column of a comma-separated list with p.
func prefixed(p, cols string) string {
	parts := strings.Split(cols, ",")
	for i, c := range parts {
		parts[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

func (s *Store) PendingIndexes(ctx context.Context, jobID string) ([]int, error) {
	var exists bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM jobs WHERE id = $1)`, jobID).Scan(&exists); err != nil {
		return nil, storeErr("pending indexes", err)
	}
	if !exists {
		return nil, jobs.ErrNotFound
	}
	return queryAll(ctx, s, "pending indexes", pgx.RowTo[int], `SELECT idx FROM items WHERE job_id = $1 AND status = 'pending' ORDER BY idx`, jobID)
}

func (s *Store) DeleteJob(ctx context.Context, accountID, id string) error {
	// Items go with the job (ON DELETE CASCADE).
	return s.deleteOwned(ctx, "delete job", `DELETE FROM jobs WHERE id = $1 AND account_id = $2`, id, accountID)
}

// deleteOwned runs a DELETE of the row id of accountID (its $1 and $2);
// jobs.ErrNotFound when it deleted nothing.
func (s *Store) deleteOwned(ctx context.Context, op, sql, id, accountID string) error {
	tag, err := s.pool.Exec(ctx, sql, id, accountID)
	if err != nil {
		return storeErr(op, err)
	}
	if tag.RowsAffected() == 0 {
		return jobs.ErrNotFound
	}
	return nil
}

func (s *Store) SweepExpired(ctx context.Context, now time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM jobs
		WHERE (status = 'completed' AND expires_at <= $1) OR (status <> 'completed' AND created_at <= $2)`,
		now, now.Add(-jobs.MaxTTL))
	if err != nil {
		return 0, storeErr("sweep", err)
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM deliveries WHERE status <> 'pending' AND created_at <= $1`,
		now.Add(-jobs.DeliveryRetention)); err != nil {
		return 0, storeErr("sweep deliveries", err)
	}
	return int(tag.RowsAffected()), nil
}

const endpointCols = `id, account_id, url, secret, status, consecutive_failures, created_at, mode,
	description, event_types, prev_secret, prev_secret_until`

func scanEndpoint(row pgx.Row) (jobs.Endpoint, error) {
	var e jobs.Endpoint
	var prevUntil *time.Time
	err := row.Scan(&e.ID, &e.AccountID, &e.URL, &e.Secret, &e.Status, &e.ConsecutiveFailures, &e.CreatedAt, &e.Mode,
		&e.Description, &e.EventTypes, &e.PrevSecret, &prevUntil)
	e.CreatedAt = e.CreatedAt.UTC()
	if prevUntil != nil {
		e.PrevSecretUntil = prevUntil.UTC()
	}
	if e.EventTypes == nil {
		e.EventTypes = []string{}
	}
	return e, err
}

func (s *Store) CreateEndpoint(ctx context.Context, e jobs.Endpoint) error {
	types := e.EventTypes
	if types == nil {
		types = []string{}
	}
	var prevUntil *time.Time
	if !e.PrevSecretUntil.IsZero() {
		prevUntil = &e.PrevSecretUntil
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO endpoints (`+endpointCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)`,
		e.ID, e.AccountID, e.URL, e.Secret, e.Status, e.ConsecutiveFailures, e.CreatedAt, cmp.Or(e.Mode, "live"),
		e.Description, types, e.PrevSecret, prevUntil)
	return storeErr0("create endpoint", err)
}

func (s *Store) ListEndpoints(ctx context.Context, accountID string) ([]jobs.Endpoint, error) {
	return queryAll(ctx, s, "list endpoints", func(r pgx.CollectableRow) (jobs.Endpoint, error) { return scanEndpoint(r) },
		`SELECT `+endpointCols+` FROM endpoints WHERE account_id = $1 ORDER BY created_at, id`, accountID)
}

func (s *Store) EndpointByID(ctx context.Context, id string) (jobs.Endpoint, error) {
	e, err := scanEndpoint(s.pool.QueryRow(ctx, `SELECT `+endpointCols+` FROM endpoints WHERE id = $1`, id))
	if err != nil {
		return jobs.Endpoint{}, storeErr("endpoint", err)
	}
	return e, nil
}

func (s *Store) DeleteEndpoint(ctx context.Context, accountID, id string) error {
	return s.deleteOwned(ctx, "delete endpoint", `DELETE FROM endpoints WHERE id = $1 AND account_id = $2`, id, accountID)
}

const deliveryCols = `id, account_id, endpoint_id, job_id, event, body, status, attempts, next_attempt_at, created_at, traceparent, tracestate,
	event_id, origin, resend_of, coalesce_key, absorbing`

func scanDelivery(row pgx.Row) (jobs.Delivery, error) {
	var d jobs.Delivery
	// NULL without a trace, for a job-less event, on rows from before event
	// ids, and for what is not a resend.
	var traceparent, tracestate, jobID, eventID, resendOf, coalesceKey *string
	err := row.Scan(&d.ID, &d.AccountID, &d.EndpointID, &jobID, &d.Event, &d.Body, &d.Status, &d.Attempts, &d.NextAttemptAt, &d.CreatedAt,
		&traceparent, &tracestate, &eventID, &d.Origin, &resendOf, &coalesceKey, &d.Absorbing)
	d.NextAttemptAt, d.CreatedAt = d.NextAttemptAt.UTC(), d.CreatedAt.UTC()
	for _, f := range []struct {
		dst *string
		src *string
	}{{&d.TraceParent, traceparent}, {&d.TraceState, tracestate}, {&d.JobID, jobID}, {&d.EventID, eventID}, {&d.ResendOf, resendOf}, {&d.CoalesceKey, coalesceKey}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	return d, err
}

// insertDelivery is the INSERT of a delivery, empty strings stored as NULL
// (as in the rows written before those columns existed).
const insertDelivery = `INSERT INTO deliveries (` + deliveryCols + `) VALUES ($1,$2,$3,NULLIF($4,'')::uuid,$5,$6,$7,$8,$9,$10,NULLIF($11,''),NULLIF($12,''),
	NULLIF($13,'')::uuid,$14,NULLIF($15,'')::uuid,NULLIF($16,''),$17)`

func deliveryArgs(d jobs.Delivery) []any {
	return []any{d.ID, d.AccountID, d.EndpointID, d.JobID, d.Event, d.Body, d.Status, d.Attempts, d.NextAttemptAt, d.CreatedAt,
		d.TraceParent, d.TraceState, d.EventID, cmp.Or(d.Origin, jobs.OriginEvent), d.ResendOf, d.CoalesceKey, d.CoalesceKey != ""}
}

func (s *Store) CreateDelivery(ctx context.Context, d jobs.Delivery) (bool, error) {
	// Any of the unique indexes: the job's event, the event id of an event
	// of no job, or an absorbing delivery with the same coalesce key.
	tag, err := s.pool.Exec(ctx, insertDelivery+` ON CONFLICT DO NOTHING`, deliveryArgs(d)...)
	if err != nil {
		return false, storeErr("create delivery", err)
	}
	return tag.RowsAffected() == 1, nil
}

func (s *Store) ClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]jobs.Delivery, error) {
	// SKIP LOCKED lets replicas claim disjoint sets.
	return queryAll(ctx, s, "claim due", func(r pgx.CollectableRow) (jobs.Delivery, error) { return scanDelivery(r) }, `UPDATE deliveries d SET next_attempt_at = $2, absorbing = false
		FROM (SELECT id, next_attempt_at AS due FROM deliveries
		      WHERE status = 'pending' AND next_attempt_at <= $1
		      ORDER BY next_attempt_at, id LIMIT $3 FOR UPDATE SKIP LOCKED) c
		WHERE d.id = c.id
		RETURNING d.id, d.account_id, d.endpoint_id, d.job_id, d.event, d.body, d.status, d.attempts, c.due, d.created_at,
		          d.traceparent, d.tracestate, d.event_id, d.origin, d.resend_of, d.coalesce_key, d.absorbing`,
		now, now.Add(lease), limit)
}

func (s *Store) RecordAttempt(ctx context.Context, deliveryID string, a jobs.Attempt) (disabled bool, err error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return false, storeErr("record attempt", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	d, err := scanDelivery(tx.QueryRow(ctx, `SELECT `+deliveryCols+` FROM deliveries WHERE id = $1 FOR UPDATE`, deliveryID))
	if err != nil {
		return false, storeErr("record attempt", err)
	}
	if d.Status != jobs.DeliveryPending {
		return false, nil
	}
	if !a.Abandoned {
		var nextAt *time.Time
		if !a.NextAttemptAt.IsZero() {
			nextAt = &a.NextAttemptAt
		}
		if _, err := tx.Exec(ctx, `INSERT INTO delivery_attempts (delivery_id, n, at, succeeded, status_code, failure, duration_us, next_attempt_at)
			VALUES ($1, $2, $3, $4, NULLIF($5, 0), NULLIF($6, ''), $7, $8) ON CONFLICT DO NOTHING`,
			deliveryID, d.Attempts+1, a.At, a.Succeeded, a.StatusCode, a.Failure, a.Duration.Microseconds(), nextAt); err != nil {
			return false, storeErr("record attempt", err)
		}
	}
	switch {
	case a.Abandoned:
		_, err = tx.Exec(ctx, `UPDATE deliveries SET status = 'abandoned' WHERE id = $1`, deliveryID)
	case a.Succeeded:
		if _, err = tx.Exec(ctx, `UPDATE deliveries SET status = 'succeeded', attempts = attempts + 1 WHERE id = $1`, deliveryID); err == nil {
			_, err = tx.Exec(ctx, `UPDATE endpoints SET consecutive_failures = 0 WHERE id = $1`, d.EndpointID)
		}
	case a.Exhausted:
		if _, err = tx.Exec(ctx, `UPDATE deliveries SET status = 'failed', attempts = attempts + 1 WHERE id = $1`, deliveryID); err == nil {
			// The old row (locked first) beside the new one tells whether
			// this update is the one that disabled the endpoint.
			err = tx.QueryRow(ctx, `WITH old AS (SELECT id, status FROM endpoints WHERE id = $1 FOR UPDATE)
				UPDATE endpoints e SET consecutive_failures = e.consecutive_failures + 1,
				status = CASE WHEN e.consecutive_failures + 1 >= $2 THEN 'disabled' ELSE e.status END
				FROM old WHERE e.id = old.id
				RETURNING old.status = 'active' AND e.status = 'disabled'`, d.EndpointID, jobs.DisableAfter).Scan(&disabled)
			if errors.Is(err, pgx.ErrNoRows) {
				err = nil // the endpoint was deleted meanwhile
			}
		}
	default:
		_, err = tx.Exec(ctx, `UPDATE deliveries SET attempts = attempts + 1, next_attempt_at = $2 WHERE id = $1`, deliveryID, a.NextAttemptAt)
	}
	if err != nil {
		return false, storeErr("record attempt", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, storeErr("record attempt", err)
	}
	if d.CoalesceKey != "" && !a.Abandoned && !a.Succeeded && !a.Exhausted {
		// Absorb again, unless a newer delivery took over the key. Best
		// effort, after the commit: a concurrent fan-out winning the
		// unique index only costs one more event.
		_, err := s.pool.Exec(ctx, `UPDATE deliveries SET absorbing = true WHERE id = $1 AND status = 'pending'
			AND NOT EXISTS (SELECT 1 FROM deliveries o WHERE o.endpoint_id = $2 AND o.coalesce_key = $3 AND o.status = 'pending' AND o.absorbing)`,
			deliveryID, d.EndpointID, d.CoalesceKey)
		if err := storeErr("record attempt", err); err != nil && !errors.Is(err, jobs.ErrConflict) {
			return disabled, err
		}
	}
	return disabled, nil
}

func (s *Store) CountDisabledEndpoints(ctx context.Context) (int, error) {
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM endpoints WHERE status = 'disabled'`).Scan(&n); err != nil {
		return 0, storeErr("count disabled endpoints", err)
	}
	return n, nil
}

func (s *Store) Delivery(ctx context.Context, id string) (jobs.Delivery, error) {
	d, err := scanDelivery(s.pool.QueryRow(ctx, `SELECT `+deliveryCols+` FROM deliveries WHERE id = $1`, id))
	if err != nil {
		return jobs.Delivery{}, storeErr("delivery", err)
	}
	return d, nil
}

func (s *Store) endpointRow(ctx context.Context, op, sql string, args ...any) (jobs.Endpoint, error) {
	e, err := scanEndpoint(s.pool.QueryRow(ctx, sql, args...))
	if err != nil {
		return jobs.Endpoint{}, storeErr(op, err)
	}
	return e, nil
}

func (s *Store) UpdateEndpoint(ctx context.Context, accountID, id string, u jobs.EndpointUpdate) (jobs.Endpoint, error) {
	// NULL keeps a column as it is.
	var types []string
	if u.EventTypes != nil {
		types = *u.EventTypes
		if types == nil {
			types = []string{}
		}
	}
	return s.endpointRow(ctx, "update endpoint", `UPDATE endpoints SET url = coalesce($3, url), description = coalesce($4, description),
		event_types = coalesce($5, event_types) WHERE id = $1 AND account_id = $2 RETURNING `+endpointCols,
		id, accountID, u.URL, u.Description, types)
}

func (s *Store) RotateSecret(ctx context.Context, accountID, id string, secret []byte, prevUntil time.Time) (jobs.Endpoint, error) {
	// In one UPDATE the right-hand side reads the row as it was: the old
	// secret becomes the previous one.
	return s.endpointRow(ctx, "rotate secret", `UPDATE endpoints SET prev_secret = secret, secret = $3, prev_secret_until = $4
		WHERE id = $1 AND account_id = $2 RETURNING `+endpointCols, id, accountID, secret, prevUntil)
}

func (s *Store) EnableEndpoint(ctx context.Context, accountID, id string) (jobs.Endpoint, error) {
	return s.endpointRow(ctx, "enable endpoint", `UPDATE endpoints SET status = 'active', consecutive_failures = 0
		WHERE id = $1 AND account_id = $2 RETURNING `+endpointCols, id, accountID)
}

func (s *Store) ListDeliveries(ctx context.Context, f jobs.DeliveryFilter, limit int) ([]jobs.Delivery, error) {
	var beforeAt *time.Time
	var beforeID *string
	if f.Before != nil {
		beforeAt, beforeID = &f.Before.CreatedAt, &f.Before.ID
	}
	return queryAll(ctx, s, "list deliveries", func(r pgx.CollectableRow) (jobs.Delivery, error) { return scanDelivery(r) },
		`SELECT `+deliveryCols+` FROM deliveries
		WHERE endpoint_id = $1 AND account_id = $2 AND ($3 = '' OR status = $3)
		  AND ($4::timestamptz IS NULL OR (created_at, id) < ($4, $5::uuid))
		ORDER BY created_at DESC, id DESC LIMIT $6`,
		f.EndpointID, f.AccountID, f.Status, beforeAt, beforeID, limit)
}

func (s *Store) DeliveryAttempts(ctx context.Context, deliveryID string) ([]jobs.AttemptRecord, error) {
	return queryAll(ctx, s, "delivery attempts", func(r pgx.CollectableRow) (jobs.AttemptRecord, error) {
		var a jobs.AttemptRecord
		var code *int
		var failure *string
		var nextAt *time.Time
		var us int64
		if err := r.Scan(&a.N, &a.At, &a.Succeeded, &code, &failure, &us, &nextAt); err != nil {
			return a, err
		}
		a.At, a.Duration = a.At.UTC(), time.Duration(us)*time.Microsecond
		if code != nil {
			a.StatusCode = *code
		}
		if failure != nil {
			a.Failure = *failure
		}
		if nextAt != nil {
			a.NextAttemptAt = nextAt.UTC()
		}
		return a, nil
	}, `SELECT n, at, succeeded, status_code, failure, duration_us, next_attempt_at FROM delivery_attempts
		WHERE delivery_id = $1 ORDER BY n`, deliveryID)
}

func (s *Store) CreateManualDelivery(ctx context.Context, d jobs.Delivery, maxPending int) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return storeErr("create manual delivery", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	// The endpoint's row lock makes count-then-insert atomic between
	// concurrent requests for one endpoint.
	var n int
	err = tx.QueryRow(ctx, `WITH e AS (SELECT id FROM endpoints WHERE id = $1 FOR UPDATE)
		SELECT count(*) FROM deliveries, e WHERE deliveries.endpoint_id = e.id AND origin <> 'event' AND status = 'pending'`,
		d.EndpointID).Scan(&n)
	if err != nil {
		return storeErr("create manual delivery", err)
	}
	if n >= maxPending {
		return jobs.ErrLimit
	}
	if _, err := tx.Exec(ctx, insertDelivery, deliveryArgs(d)...); err != nil {
		return storeErr("create manual delivery", err)
	}
	return storeErr0("create manual delivery", tx.Commit(ctx))
}

// Blobs returns every sealed blob in the schema (item inputs and results,
// endpoint secrets), so tests can prove a purge left nothing behind.
func (s *Store) Blobs(ctx context.Context) ([][]byte, error) {
	return queryAll(ctx, s, "blobs", pgx.RowTo[[]byte], `SELECT input FROM items WHERE input IS NOT NULL
		UNION ALL SELECT result FROM items WHERE result IS NOT NULL
		UNION ALL SELECT secret FROM endpoints
		UNION ALL SELECT prev_secret FROM endpoints WHERE prev_secret IS NOT NULL`)
}

package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ledgerlane/platform/pkg/problem"
	jobsv1 "github.com/ledgerlane/platform/proto/jobs/v1"
	"github.com/ledgerlane/platform/services/jobs/webhook"
)

// EventJobCompleted is the one event kind.
const EventJobCompleted = "job.completed"

// RetrySchedule holds when each delivery attempt is due, measured from the
// delivery's creation (the first attempt): 0 s, 1 m, 5 m, 30 m, 2 h. Five
// attempts at most; the fifth failure exhausts the delivery.
var RetrySchedule = []time.Duration{0, time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour}

// DeliveryTimeout bounds one attempt; running out counts as a failure.
const DeliveryTimeout = 10 * time.Second

// claimLease keeps a claimed delivery from being sent by another replica
// while this one is still trying it (well above DeliveryTimeout).
const claimLease = time.Minute

func ts(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

// eventBody is the job.completed delivery body: metadata only.
func eventBody(j Job) ([]byte, error) {
	return protojson.MarshalOptions{UseProtoNames: true, EmitDefaultValues: true}.Marshal(&jobsv1.JobCompletedEvent{
		Event: EventJobCompleted, Id: j.ID, Status: j.Status,
		ItemCount: int32(j.ItemCount), SucceededCount: int32(j.Succeeded), FailedCount: int32(j.Failed),
		CreatedAt: ts(j.CreatedAt), StartedAt: ts(j.StartedAt), CompletedAt: ts(j.CompletedAt), ExpiresAt: ts(j.ExpiresAt),
	})
}

// RunFanout consumes job.completed events until ctx ends and creates one
// delivery per active endpoint of the job's tenant.
func (s *Service) RunFanout(ctx context.Context) error {
	cons, err := s.js.CreateOrUpdateConsumer(ctx, s.names.EventStream, jetstream.ConsumerConfig{
		Durable: s.names.EventConsumer, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: 30 * time.Second, FilterSubject: s.names.EventSubject,
	})
	if err != nil {
		return fmt.Errorf("jobs: event consumer: %w", err)
	}
	for ctx.Err() == nil {
		fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		batch, err := cons.Fetch(10, jetstream.FetchContext(fctx))
		if err != nil {
			cancel()
			if ctx.Err() == nil {
				s.log.Warn("jobs: fetch events", "err", err)
				time.Sleep(200 * time.Millisecond)
			}
			continue
		}
		for msg := range batch.Messages() {
			var ev eventMsg
			if err := json.Unmarshal(msg.Data(), &ev); err != nil {
				_ = msg.Term()
				continue
			}
			if err := s.Fanout(ctx, ev.AccountID, ev.JobID, ev.Body); err != nil {
				s.log.Warn("jobs: fanout will be retried", "job_id", ev.JobID, "err", err)
				_ = msg.NakWithDelay(time.Second)
				continue
			}
			_ = msg.Ack()
		}
		cancel()
		// New deliveries are due now: send them without waiting for the tick.
		s.DeliverDue(ctx)
	}
	return nil
}

// Fanout creates the deliveries of one job.completed event. It is idempotent:
// a repeated event finds its deliveries already there.
func (s *Service) Fanout(ctx context.Context, accountID, jobID string, body []byte) error {
	es, err := s.store.ListEndpoints(ctx, accountID)
	if err != nil {
		return err
	}
	now := s.timestamp()
	for _, e := range es {
		if e.Status != EndpointActive {
			continue
		}
		_, err := s.store.CreateDelivery(ctx, Delivery{
			ID: uuid.NewString(), AccountID: accountID, EndpointID: e.ID, JobID: jobID,
			Event: EventJobCompleted, Body: body, Status: DeliveryPending, NextAttemptAt: now, CreatedAt: now,
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// RunDeliveries sends due deliveries every interval until ctx ends.
func (s *Service) RunDeliveries(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.DeliverDue(ctx)
		}
	}
}

// DeliverDue sends every delivery due at the clock's now, in parallel, and
// records each attempt. It returns how many attempts it made. Tests call it
// after moving the clock.
func (s *Service) DeliverDue(ctx context.Context) int {
	if s.keys == nil {
		return 0
	}
	// One pass at a time per process; replicas are kept apart by ClaimDue.
	s.deliverMu.Lock()
	defer s.deliverMu.Unlock()
	total := 0
	for ctx.Err() == nil {
		ds, err := s.store.ClaimDue(ctx, s.now(), claimLease, 50)
		if err != nil {
			s.log.Error("jobs: claim deliveries", "err", err)
			return total
		}
		if len(ds) == 0 {
			return total
		}
		var wg sync.WaitGroup
		for _, d := range ds {
			wg.Go(func() { s.attempt(ctx, d) })
		}
		wg.Wait()
		total += len(ds)
	}
	return total
}

func (s *Service) attempt(ctx context.Context, d Delivery) {
	e, err := s.store.EndpointByID(ctx, d.EndpointID)
	if errors.Is(err, ErrNotFound) || (err == nil && e.Status != EndpointActive) {
		s.record(ctx, d, Attempt{At: s.now(), Abandoned: true})
		return
	}
	if err != nil {
		s.log.Error("jobs: endpoint", "err", err)
		return // the lease expires and the delivery is claimed again
	}
	secret, err := s.keys.Open(e.Secret, secretAAD(e.ID))
	if err != nil {
		s.log.Error("jobs: open webhook secret", "endpoint_id", e.ID, "err", err)
		return
	}
	now := s.now()
	ok, why := s.post(ctx, e.URL, string(secret), d, now)
	a := Attempt{At: now, Succeeded: ok}
	if !ok {
		n := d.Attempts + 1
		if n >= len(RetrySchedule) {
			a.Exhausted = true
		} else {
			a.NextAttemptAt = d.CreatedAt.Add(RetrySchedule[n])
		}
		s.log.Info("jobs: delivery attempt failed", "delivery_id", d.ID, "endpoint_id", e.ID, "attempt", n, "reason", why)
	}
	observeAttempt(a)
	s.record(ctx, d, a)
}

func (s *Service) record(ctx context.Context, d Delivery, a Attempt) {
	if err := s.store.RecordAttempt(ctx, d.ID, a); err != nil {
		s.log.Error("jobs: record attempt", "delivery_id", d.ID, "err", err)
	}
}

// post sends one signed attempt. why describes a failure without content.
func (s *Service) post(ctx context.Context, target, secret string, d Delivery, now time.Time) (ok bool, why string) {
	ctx, cancel := context.WithTimeout(ctx, DeliveryTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(d.Body))
	if err != nil {
		return false, "bad request"
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "ledgerlane-webhooks/1")
	req.Header.Set(webhook.SignatureHeader, webhook.Sign(secret, now, d.Body))
	req.Header.Set(webhook.EventHeader, d.Event)
	req.Header.Set(webhook.DeliveryHeader, d.ID)
	resp, err := s.http.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return false, "timeout"
		}
		return false, "transport error"
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return false, fmt.Sprintf("status %d", resp.StatusCode)
	}
	return true, ""
}

// newDeliveryClient does not follow redirects (a 3xx is a failure: the
// redirect target was never checked) and, unless allowPrivate, refuses to
// connect to a non-public address: checking at dial time also defeats DNS
// answers that change after the endpoint was registered.
func newDeliveryClient(allowPrivate bool) *http.Client {
	d := &net.Dialer{Timeout: DeliveryTimeout}
	if !allowPrivate {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !publicAddr(ap.Addr()) {
				return errors.New("webhook target is not a public address")
			}
			return nil
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = d.DialContext
	tr.Proxy = nil
	return &http.Client{
		Timeout:       DeliveryTimeout,
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// publicAddr reports whether a is a routable unicast address outside the
// loopback, private, link-local and shared (CGNAT) ranges.
func publicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	if cgnat := netip.MustParsePrefix("100.64.0.0/10"); cgnat.Contains(a) {
		return false
	}
	return true
}

// checkURL validates a webhook URL: http or https with a host; without
// AllowPrivate, the host must be (or resolve only to) public addresses.
func (s *Service) checkURL(ctx context.Context, raw string) (string, error) {
	bad := func(detail string) error {
		return problem.Error(problem.InvalidInput, detail, problem.Field("url"))
	}
	if raw == "" {
		return "", bad("url is required")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return "", bad("url must be an absolute http or https URL")
	}
	if u.User != nil {
		return "", bad("url must not carry credentials")
	}
	if len(raw) > 2048 {
		return "", bad("url is longer than 2048 characters")
	}
	if s.cfg.AllowPrivate {
		return u.String(), nil
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		if !publicAddr(a) {
			return "", bad("url must not point at a loopback, private or link-local address")
		}
		return u.String(), nil
	}
	if host == "localhost" {
		return "", bad("url must not point at a loopback, private or link-local address")
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := s.resolver.LookupNetIP(rctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return "", bad("url host does not resolve")
	}
	for _, a := range addrs {
		if !publicAddr(a) {
			return "", bad("url host resolves to a loopback, private or link-local address")
		}
	}
	return u.String(), nil
}

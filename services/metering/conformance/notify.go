package conformance

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/identity"
	"github.com/ledgerlane/platform/services/metering/notify"
)

// runNotify is the behaviour of notify.Store.
func runNotify(t *testing.T, newStore func(t *testing.T) Store) {
	t.Run("Recipients", func(t *testing.T) { testRecipients(t, newStore) })
	t.Run("AlertsAndOutbox", func(t *testing.T) { testAlertsAndOutbox(t, newStore) })
}

// testRecipients: an account's mail goes to its portal users, oldest
// first; an unknown account has none.
func testRecipients(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := t.Context()
	s := newStore(t)
	a := newAccount("acme")
	mustCreateAccount(t, s, a)
	for i, name := range []string{"Bob", "Ann"} {
		u := identity.PortalUser{ID: uuid.NewString(), AccountID: a.ID, Email: "person" + string(rune('1'+i)) + "@example.com",
			Name: name, CreatedAt: t0.Add(time.Duration(i) * time.Second)}
		if err := s.AddPortalUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Recipients(ctx, a.ID)
	want := []notify.Recipient{{Email: "person1@example.com", Name: "Bob"}, {Email: "person2@example.com", Name: "Ann"}}
	if diff := cmp.Diff(want, got); err != nil || diff != "" {
		t.Fatalf("Recipients (-want +got), %v:\n%s", err, diff)
	}
	for _, id := range []string{unknownID, "not-a-uuid"} {
		if got, err := s.Recipients(ctx, id); err != nil || len(got) != 0 {
			t.Fatalf("Recipients(%s) = %v, %v", id, got, err)
		}
	}
}

func testAlertsAndOutbox(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := t.Context()
	s := newStore(t)
	a := newAccount("acme")
	mustCreateAccount(t, s, a)
	period := t0.Truncate(24 * time.Hour)
	mail := func(to string, at time.Time) notify.OutboxMail {
		return notify.OutboxMail{ID: uuid.NewString(), AccountID: a.ID, Milestone: notify.MilestoneUsage75, PeriodStart: period,
			To: to, Subject: "75%", Body: "body", CreatedAt: at, NextAttemptAt: at}
	}
	al := notify.Alert{AccountID: a.ID, PeriodStart: period, Milestone: notify.MilestoneUsage75, CreatedAt: t0}
	m1, m2 := mail("ann@example.com", t0), mail("bob@example.com", t0.Add(time.Microsecond))
	created, err := s.EnqueueAlert(ctx, al, []notify.OutboxMail{m1, m2})
	if err != nil || !created {
		t.Fatalf("EnqueueAlert = %v, %v", created, err)
	}
	// The same milestone in the same period adds nothing.
	created, err = s.EnqueueAlert(ctx, al, []notify.OutboxMail{mail("ann@example.com", t0)})
	if err != nil || created {
		t.Fatalf("second EnqueueAlert = %v, %v", created, err)
	}
	// Another period is another alert.
	next := al
	next.PeriodStart = period.AddDate(0, 1, 0)
	if created, err := s.EnqueueAlert(ctx, next, nil); err != nil || !created {
		t.Fatalf("next period EnqueueAlert = %v, %v", created, err)
	}
	alerts, _ := s.Alerts(ctx, a.ID)
	if len(alerts) != 2 {
		t.Fatalf("alerts %+v, want 2", alerts)
	}

	// Claim one, then the other; a claimed mail is leased.
	now := t0.Add(time.Minute)
	c1, err := s.ClaimMail(ctx, now, time.Minute, 1)
	if err != nil || len(c1) != 1 || c1[0].ID != m1.ID || c1[0].Attempts != 1 {
		t.Fatalf("ClaimMail = %+v, %v", c1, err)
	}
	c2, _ := s.ClaimMail(ctx, now, time.Minute, 10)
	if len(c2) != 1 || c2[0].ID != m2.ID {
		t.Fatalf("second ClaimMail = %+v", c2)
	}
	if c, _ := s.ClaimMail(ctx, now, time.Minute, 10); len(c) != 0 {
		t.Fatalf("leased mails claimed again: %+v", c)
	}
	if err := s.MarkMailSent(ctx, m1.ID, now); err != nil {
		t.Fatal(err)
	}
	if err := s.RetryMail(ctx, m2.ID, now.Add(30*time.Second), "connection refused"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.MarkMailSent(ctx, unknownID, now), metering.ErrNotFound)
	if c, _ := s.ClaimMail(ctx, now.Add(29*time.Second), time.Minute, 10); len(c) != 0 {
		t.Fatalf("mail retried early: %+v", c)
	}
	c3, _ := s.ClaimMail(ctx, now.Add(30*time.Second), time.Minute, 10)
	if len(c3) != 1 || c3[0].ID != m2.ID || c3[0].Attempts != 2 || c3[0].LastError != "connection refused" {
		t.Fatalf("retry ClaimMail = %+v", c3)
	}
	// A sender that died: the lease runs out and the mail is claimed again.
	c4, _ := s.ClaimMail(ctx, now.Add(30*time.Second+time.Minute), time.Minute, 10)
	if len(c4) != 1 || c4[0].Attempts != 3 {
		t.Fatalf("lease expiry ClaimMail = %+v", c4)
	}
	box, err := s.Outbox(ctx, a.ID)
	if err != nil || len(box) != 2 || box[0].SentAt == nil || !box[0].SentAt.Equal(now) || box[1].SentAt != nil {
		t.Fatalf("Outbox = %+v, %v", box, err)
	}
}

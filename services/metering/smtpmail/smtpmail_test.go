package smtpmail_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/metering/mailsink"
	"github.com/ledgerlane/platform/services/metering/notify"
	"github.com/ledgerlane/platform/services/metering/smtpmail"
)

// TestSendOverSMTP sends through the real client to the in-process server,
// then to a stopped one (an error the outbox retries), then again once the
// server is back on the same address.
func TestSendOverSMTP(t *testing.T) {
	dir := t.TempDir()
	sink, err := mailsink.Start("127.0.0.1:0", dir)
	if err != nil {
		t.Fatal(err)
	}
	addr := sink.Addr()
	m, err := smtpmail.New(smtpmail.Config{Addr: addr, From: "billing@ledgerlane.test", TLS: smtpmail.TLSNone, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	mail := notify.Mail{ID: "7f1c", To: "ann@example.com", Subject: "75% of your included conversions used", Body: "Hello Ann,\n\nbody\n"}
	if err := m.Send(t.Context(), mail); err != nil {
		t.Fatal(err)
	}
	msgs := sink.Messages()
	if len(msgs) != 1 || msgs[0].To[0] != "ann@example.com" || !strings.Contains(string(msgs[0].Data), "Subject: 75% of your included conversions used") ||
		!strings.Contains(string(msgs[0].Data), "Message-ID: <7f1c@ledgerlane>") || strings.Contains(string(msgs[0].Data), "http") {
		t.Fatalf("received %+v", msgs)
	}
	_ = sink.Close()
	if err := m.Send(t.Context(), mail); err == nil {
		t.Fatal("sent to a stopped server")
	}
	sink2, err := mailsink.Start(addr, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sink2.Close()
	if err := m.Send(t.Context(), mail); err != nil {
		t.Fatal(err)
	}
	if len(sink2.Messages()) != 1 {
		t.Fatal("not received after the restart")
	}
}

func TestConfig(t *testing.T) {
	for _, cfg := range []smtpmail.Config{
		{Addr: "nohost", From: "a@b.c"},
		{Addr: "h:x", From: "a@b.c"},
		{Addr: "h:25"},
		{Addr: "h:25", From: "a@b.c", TLS: "sometimes"},
	} {
		if _, err := smtpmail.New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

package webhook_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/jobs/webhook"
)

func TestVerify(t *testing.T) {
	const secret = "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA"
	body := []byte(`{"event":"job.completed","id":"8a0c"}`)
	at := time.Unix(1_790_000_000, 0)
	good := webhook.Sign(secret, at, body)
	sig := strings.SplitN(good, "v1=", 2)[1]
	for _, tc := range []struct {
		name   string
		secret string
		header string
		body   []byte
		now    time.Time
		want   error
	}{
		{"valid", secret, good, body, at, nil},
		{"valid at tolerance", secret, good, body, at.Add(webhook.Tolerance), nil},
		{"valid with a rotated second signature", secret, "t=1790000000,v1=00ff,v1=" + sig, body, at, nil},
		{"uppercase hex", secret, "t=1790000000,v1=" + strings.ToUpper(sig), body, at, nil},
		{"too old", secret, good, body, at.Add(webhook.Tolerance + time.Second), webhook.ErrTimestamp},
		{"from the future", secret, good, body, at.Add(-webhook.Tolerance - time.Second), webhook.ErrTimestamp},
		{"body changed", secret, good, append([]byte(" "), body...), at, webhook.ErrSignature},
		{"wrong secret", "whsec_other", good, body, at, webhook.ErrSignature},
		{"secret without prefix", strings.TrimPrefix(secret, "whsec_"), good, body, at, webhook.ErrSignature},
		{"timestamp changed", secret, "t=1790000001,v1=" + sig, body, at, webhook.ErrSignature},
		{"empty", secret, "", body, at, webhook.ErrMalformed},
		// Anyone can sign with an empty secret: a receiver that lost its
		// secret must not accept what it signs.
		{"empty secret", "", webhook.Sign("", at, body), body, at, webhook.ErrNoSecret},
		{"no v1", secret, "t=1790000000", body, at, webhook.ErrMalformed},
		{"no t", secret, "v1=" + sig, body, at, webhook.ErrMalformed},
		{"bad t", secret, "t=soon,v1=" + sig, body, at, webhook.ErrMalformed},
		{"garbage", secret, "nonsense", body, at, webhook.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := webhook.Verify(tc.secret, tc.header, tc.body, tc.now); !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestSignShape(t *testing.T) {
	h := webhook.Sign("whsec_x", time.Unix(1700000000, 0), []byte("{}"))
	if !strings.HasPrefix(h, "t=1700000000,v1=") || len(h) != len("t=1700000000,v1=")+64 || strings.ToLower(h) != h {
		t.Fatalf("header %q", h)
	}
}

// TestSignAll: during a rotation's overlap the header carries one v1 per
// secret, and a receiver holding either secret accepts it; one that holds
// neither does not.
func TestSignAll(t *testing.T) {
	at := time.Unix(1_790_000_000, 0)
	body := []byte(`{"event":"webhook.test"}`)
	newer, older := "whsec_new", "whsec_old"
	h := webhook.SignAll([]string{newer, older}, at, body)
	if strings.Count(h, ",v1=") != 2 || !strings.HasPrefix(h, webhook.Sign(newer, at, body)+",v1=") {
		t.Fatalf("header %q", h)
	}
	for _, sec := range []string{newer, older} {
		if err := webhook.Verify(sec, h, body, at); err != nil {
			t.Fatalf("%s: %v", sec, err)
		}
	}
	if err := webhook.Verify("whsec_other", h, body, at); !errors.Is(err, webhook.ErrSignature) {
		t.Fatalf("other secret: %v", err)
	}
	if one := webhook.SignAll([]string{newer}, at, body); one != webhook.Sign(newer, at, body) {
		t.Fatalf("one secret: %q", one)
	}
}

// FuzzVerify: no header, body or secret makes Verify panic, and only the
// header Sign made for that body verifies.
func FuzzVerify(f *testing.F) {
	at := time.Unix(1_790_000_000, 0)
	f.Add("whsec_x", "t=1790000000,v1=00,v1=ff", []byte("{}"))
	f.Add("whsec_x", webhook.SignAll([]string{"whsec_x", "whsec_y"}, at, []byte("{}")), []byte("{}"))
	f.Add("", ",,,=,t=", []byte{})
	f.Fuzz(func(t *testing.T, secret, header string, body []byte) {
		err := webhook.Verify(secret, header, body, at)
		if err == nil && secret == "" {
			t.Fatal("verified with an empty secret")
		}
		if secret != "" && webhook.Verify(secret, webhook.Sign(secret, at, body), body, at) != nil {
			t.Fatal("a fresh signature does not verify")
		}
	})
}

// Package webhook signs and verifies job.completed deliveries. Receivers
// import it alone: it depends on the standard library only. It also holds the
// sender's side, Client: the HTTP client with the dial-time address check that
// the jobs service delivers through.
//
// The X-Service-Signature header is "t=<unix seconds>,v1=<hex>", where hex is
// the lowercase hex HMAC-SHA256 of t + "." + the raw body, keyed with the full
// secret string including its "whsec_" prefix. While a rotated secret is in
// its overlap, the header carries one v1 per secret, the new one first
// ("t=…,v1=<new>,v1=<old>", as Stripe does): a receiver accepts the
// delivery when any v1 matches its secret, so it can switch secrets at any
// moment of the overlap.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Header names of a delivery.
const (
	SignatureHeader = "X-Service-Signature"
	EventHeader     = "X-Service-Event"
	DeliveryHeader  = "X-Service-Delivery"
	// EventIDHeader names the event: the same on every endpoint's delivery
	// of one event, on its retries and on its resends.
	EventIDHeader = "X-Service-Event-Id"
)

// Tolerance is how far the signed timestamp may be from the receiver's clock.
const Tolerance = 5 * time.Minute

// Errors returned by Verify. Receivers answer any of them with 400 and do not
// process the body.
var (
	ErrMalformed = errors.New("webhook: malformed signature header")
	ErrSignature = errors.New("webhook: signature does not match")
	ErrTimestamp = errors.New("webhook: timestamp outside tolerance")
	// ErrNoSecret: Verify was given an empty secret (a receiver whose
	// configuration lost it), against which anyone can sign.
	ErrNoSecret = errors.New("webhook: empty secret: refusing to verify")
)

// Sign returns the X-Service-Signature value for body sent at t.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

// SignAll returns the X-Service-Signature value for body sent at t with one
// v1 signature per secret, in the order given.
func SignAll(secrets []string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	var b strings.Builder
	b.WriteString("t=" + ts)
	for _, sec := range secrets {
		b.WriteString(",v1=" + mac(sec, ts, body))
	}
	return b.String()
}

func mac(secret, ts string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify checks header against body with secret at now. It compares in
// constant time, checks the signature before the timestamp's freshness, and
// never looks at the body beyond hashing it: parse the JSON only after Verify
// returns nil, from the same raw bytes.
//
// A header may carry several v1 signatures (a rotation's overlap): one
// matching is enough. The signature covers the timestamp and the body, not
// the X-Service-Delivery or X-Service-Event-Id header: deduplicate on what is signed (the body's job
// id and event, or the signature itself), since a captured delivery could be
// resent within Tolerance under another delivery id.
func Verify(secret, header string, body []byte, now time.Time) error {
	if secret == "" {
		return ErrNoSecret
	}
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return ErrMalformed
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	if ts == "" || len(sigs) == 0 {
		return ErrMalformed
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return ErrMalformed
	}
	want := []byte(mac(secret, ts, body))
	matched := false
	for _, s := range sigs {
		// hmac.Equal is constant time for equal lengths.
		if hmac.Equal(want, []byte(strings.ToLower(s))) {
			matched = true
		}
	}
	if !matched {
		return ErrSignature
	}
	d := now.Sub(time.Unix(unix, 0))
	if d > Tolerance || d < -Tolerance {
		return ErrTimestamp
	}
	return nil
}

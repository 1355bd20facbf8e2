package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/ledgerlane/platform/services/jobs/internal/ipaddr"
)

// Timeout bounds one delivery attempt: the client's own limit, and the
// connection's. The jobs service bounds each attempt the same way.
const Timeout = 10 * time.Second

// UserAgent identifies deliveries.
const UserAgent = "ledgerlane-webhooks/1"

// Client sends signed deliveries over HTTP: the sender side, which the jobs
// service uses (it implements jobs.WebhookSender).
type Client struct {
	// HTTP sends the requests. NewClient's does not follow redirects and,
	// unless private targets are allowed, refuses non-public addresses.
	HTTP *http.Client
}

// NewClient returns a Client whose HTTP client does not follow redirects (a
// 3xx is a failure: the redirect target was never checked) and, unless
// allowPrivate, refuses to connect to a loopback, private, link-local,
// CGNAT or multicast address: checking at dial time also defeats DNS answers
// that change after the endpoint was registered.
func NewClient(allowPrivate bool) *Client {
	d := &net.Dialer{Timeout: Timeout}
	if !allowPrivate {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !ipaddr.IsPublic(ap.Addr()) {
				return errNotPublic
			}
			return nil
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = d.DialContext
	tr.Proxy = nil
	return &Client{HTTP: &http.Client{
		Timeout:       Timeout,
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Send POSTs body to target with the delivery headers, signed at t with each
// of secrets. status is the receiver's HTTP status (0 when none came). Any
// 2xx answer is success; anything else is an error whose text says why
// without content: "status <code>" with a status, else the failure's class:
// "bad request", "timeout", "dns error", "connection refused", "tls error",
// "address not allowed" (the target is not public) or "transport error".
// The answer's body is read (at most 64 KiB, to reuse the connection) and
// dropped, never returned.
func (c *Client) Send(ctx context.Context, target string, secrets []string, event, eventID, deliveryID string, body []byte, at time.Time) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return 0, errors.New("bad request")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set(SignatureHeader, SignAll(secrets, at, body))
	req.Header.Set(EventHeader, event)
	if eventID != "" {
		req.Header.Set(EventIDHeader, eventID)
	}
	req.Header.Set(DeliveryHeader, deliveryID)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return 0, errors.New(failureClass(err))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("status %d", resp.StatusCode)
	}
	return resp.StatusCode, nil
}

// errNotPublic is the dial-time refusal of a non-public address.
var errNotPublic = errors.New("webhook target is not a public address")

// failureClass names why a request got no answer, without its details
// (which can hold addresses of the receiver's network).
func failureClass(err error) string {
	var dnsErr *net.DNSError
	var tlsErr *tls.CertificateVerificationError
	var recErr tls.RecordHeaderError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return "timeout"
	case errors.Is(err, errNotPublic):
		return "address not allowed"
	case errors.As(err, &dnsErr):
		return "dns error"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &tlsErr), errors.As(err, &recErr):
		return "tls error"
	}
	return "transport error"
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

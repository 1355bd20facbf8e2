package webhook

import (
	"bytes"
	"context"
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
				return errors.New("webhook target is not a public address")
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

// Send POSTs body to target with the delivery headers, signed with secret at
// t. Any 2xx answer is success; anything else is an error whose text says why
// without content: "bad request", "timeout", "transport error" or
// "status <code>".
func (c *Client) Send(ctx context.Context, target, secret, event, deliveryID string, body []byte, at time.Time) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return errors.New("bad request")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set(SignatureHeader, Sign(secret, at, body))
	req.Header.Set(EventHeader, event)
	req.Header.Set(DeliveryHeader, deliveryID)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return errors.New("timeout")
		}
		return errors.New("transport error")
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

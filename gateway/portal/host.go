package portal

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// The portal mails links (password reset, invitation, verification) that
// must lead to us whoever asked for them: their root is the configured
// public URL, never the request's Host, which the client chooses (a reset
// requested with "Host: attacker.example" would otherwise mail the victim
// a genuine link to the attacker). The Host of a portal request must also
// be the public URL's: a page asked for under another name is redirected to
// the public URL, anything else refused (docs/security.md).

// parsePublicURL checks that s is an absolute http(s) root: scheme, host,
// no user info, no path beyond "/", no query or fragment.
func parsePublicURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, errors.New("portal: the public URL is required (PORTAL_PUBLIC_URL): the links it mails start with it")
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return nil, fmt.Errorf("portal: public URL %q: %w", s, err)
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "", u.Hostname() == "":
		return nil, fmt.Errorf("portal: public URL %q: want an absolute http or https URL such as https://api.example.com", s)
	case u.User != nil, u.RawQuery != "", u.Fragment != "", strings.Trim(u.Path, "/") != "":
		return nil, fmt.Errorf("portal: public URL %q: want a root (scheme and host only), without user, path, query or fragment", s)
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host}, nil
}

// canonicalHost is host (a Host header or URL host) in lower case with the
// scheme's default port made explicit, so "API.example.com" and
// "api.example.com:443" are the same https host.
func canonicalHost(scheme, host string) string {
	host = strings.ToLower(host)
	if _, _, err := net.SplitHostPort(host); err != nil {
		port := "80"
		if scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(strings.Trim(host, "[]"), port)
	}
	return host
}

// link is the public URL of path (a path with the start of its query).
func (p *Portal) link(path string) string { return p.opts.PublicURL + path }

// hostGuard serves requests whose Host is the public URL's. A GET or HEAD
// for another host is redirected to the same path under the public URL (a
// person who typed another name for the gateway lands on the right one; the
// target comes from configuration, so the redirect cannot be pointed
// elsewhere); any other method is refused with 421 Misdirected Request and
// does nothing.
func (p *Portal) hostGuard(next http.Handler) http.Handler {
	scheme := strings.SplitN(p.opts.PublicURL, ":", 2)[0]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if canonicalHost(scheme, r.Host) == p.host {
			next.ServeHTTP(w, r)
			return
		}
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			target := p.link(r.URL.EscapedPath())
			if r.URL.RawQuery != "" {
				target += "?" + r.URL.RawQuery
			}
			http.Redirect(w, r, target, http.StatusPermanentRedirect)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusMisdirectedRequest)
		_, _ = fmt.Fprintf(w, "This portal is served at %s/portal/ only.\n", p.opts.PublicURL)
	})
}

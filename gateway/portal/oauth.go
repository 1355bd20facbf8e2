package portal

import (
	"net/http"
	"strings"
	"time"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
)

// The test OAuth clients page: an account's clients for the
// client-credentials grant at POST /v1/oauth/token (docs/portal.md). The
// rules (scopes, secrets, revocation of the client's tokens) are metering's.

type oauthView struct {
	Clients       []oauthClientView
	DefaultScopes []string
	OptInScopes   []string
	// TokenURL is where clients ask for tokens; APIRoot the gateway's root,
	// for the example call.
	TokenURL, APIRoot string
	// The client just created: its id and secret, shown this once.
	NewClientID, NewSecret, NewName string
	Name                            string // form value after a refusal
}

type oauthClientView struct {
	ID, Name, ClientID string
	Scopes             []string
	Created            time.Time
	Revoked            *time.Time
}

func (p *Portal) renderOAuth(w http.ResponseWriter, r *http.Request, s *session, status int, v view, fill func(*oauthView)) {
	res, err := p.api.oauth.ListOAuthClients(s.ctx, &meteringv1.ListOAuthClientsRequest{})
	if err != nil {
		p.failed(w, r, err)
		return
	}
	ov := &oauthView{DefaultScopes: res.GetDefaultScopes(), OptInScopes: res.GetOptInScopes(),
		TokenURL: p.link("/v1/oauth/token"), APIRoot: strings.TrimSuffix(p.opts.PublicURL, "/")}
	cs := res.GetClients()
	for i := len(cs) - 1; i >= 0; i-- { // newest first
		c := cs[i]
		cv := oauthClientView{ID: c.GetId(), Name: c.GetName(), ClientID: c.GetClientId(), Scopes: c.GetScopes(), Created: c.GetCreatedAt().AsTime()}
		if c.RevokedAt != nil {
			t := c.GetRevokedAt().AsTime()
			cv.Revoked = &t
		}
		ov.Clients = append(ov.Clients, cv)
	}
	if fill != nil {
		fill(ov)
	}
	v.Title, v.Session, v.CSRF, v.OAuth = "Test OAuth clients", s, s.GetCsrfToken(), ov
	p.render(w, r, status, "oauth", v)
}

func (p *Portal) oauthClients(w http.ResponseWriter, r *http.Request, s *session) {
	var v view
	if r.URL.Query().Get("revoked") == "1" {
		v.Notice = "The client is revoked, with every access token it obtained. Requests with them are refused within seconds."
	}
	p.renderOAuth(w, r, s, http.StatusOK, v, nil)
}

func (p *Portal) createOAuthClient(w http.ResponseWriter, r *http.Request, s *session) {
	name := r.PostFormValue("name")
	res, err := p.api.oauth.CreateOAuthClient(s.ctx, &meteringv1.CreateOAuthClientRequest{Name: name, Scopes: r.PostForm["scope"]})
	if err != nil {
		pr := rpc.Problem(err)
		if pr.Type != problem.InvalidInput {
			p.failed(w, r, err)
			return
		}
		p.renderOAuth(w, r, s, http.StatusBadRequest, view{Error: pr.Detail}, func(ov *oauthView) { ov.Name = name })
		return
	}
	// The secret is in this one answer (no-store) and nowhere else.
	p.renderOAuth(w, r, s, http.StatusOK, view{}, func(ov *oauthView) {
		ov.NewClientID, ov.NewSecret, ov.NewName = res.GetClient().GetClientId(), res.GetSecret(), res.GetClient().GetName()
	})
}

func (p *Portal) revokeOAuthClient(s *session, id string) error {
	_, err := p.api.oauth.RevokeOAuthClient(s.ctx, &meteringv1.RevokeOAuthClientRequest{ClientId: id})
	return err
}

package portal

import (
	"net/http"
	"time"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
)

// The finance credentials page: the other surface's credentials, issued for
// one of the account's finance users under one of that user's connection
// grants, by the same service method meteringctl's `key issue --surface
// finance` uses. The grant (the finance service's) decides what the
// credential sees and may change.

type financeView struct {
	Credentials   []financeCredView
	DefaultScopes []string
	OptInScopes   []string
	NewSecret     string
	NewName       string
	// Form values after a refusal.
	Name, UserID, GrantID string
}

type financeCredView struct {
	ID, Name, Prefix, Kind, Mode, UserID, GrantID string
	Scopes                                        []string
	Created                                       time.Time
	Revoked, LastUsed                             *time.Time
}

func (p *Portal) financeView(s *session) (*financeView, error) {
	res, err := p.api.creds.ListFinanceCredentials(s.ctx, &meteringv1.ListFinanceCredentialsRequest{})
	if err != nil {
		return nil, err
	}
	v := &financeView{DefaultScopes: res.GetDefaultScopes(), OptInScopes: res.GetOptInScopes()}
	cs := res.GetCredentials()
	for i := len(cs) - 1; i >= 0; i-- { // newest first
		v.Credentials = append(v.Credentials, toFinanceCredView(cs[i]))
	}
	return v, nil
}

func toFinanceCredView(c *meteringv1.FinanceCredential) financeCredView {
	out := financeCredView{ID: c.GetId(), Name: c.GetName(), Prefix: c.GetPrefix(), Kind: c.GetKind(), Mode: c.GetMode(),
		UserID: c.GetFinanceUserId(), GrantID: c.GetGrantId(), Scopes: c.GetScopes(), Created: c.GetCreatedAt().AsTime()}
	if c.RevokedAt != nil {
		t := c.GetRevokedAt().AsTime()
		out.Revoked = &t
	}
	if c.LastUsedAt != nil {
		t := c.GetLastUsedAt().AsTime()
		out.LastUsed = &t
	}
	return out
}

func (p *Portal) renderFinance(w http.ResponseWriter, r *http.Request, s *session, status int, v view, fill func(*financeView)) {
	fv, err := p.financeView(s)
	if err != nil {
		p.failed(w, r, err)
		return
	}
	if fill != nil {
		fill(fv)
	}
	v.Title, v.Session, v.CSRF, v.Finance = "Finance credentials", s, s.GetCsrfToken(), fv
	p.render(w, r, status, "finance", v)
}

func (p *Portal) finance(w http.ResponseWriter, r *http.Request, s *session) {
	var v view
	if r.URL.Query().Get("revoked") == "1" {
		v.Notice = "The credential is revoked. Requests with it are refused within seconds."
	}
	p.renderFinance(w, r, s, http.StatusOK, v, nil)
}

func (p *Portal) createFinanceCredential(w http.ResponseWriter, r *http.Request, s *session) {
	name, user, grant := r.PostFormValue("name"), r.PostFormValue("finance_user_id"), r.PostFormValue("grant_id")
	res, err := p.api.creds.CreateFinanceCredential(s.ctx, &meteringv1.CreateFinanceCredentialRequest{Name: name,
		Kind: r.PostFormValue("kind"), Mode: r.PostFormValue("mode"), Scopes: r.PostForm["scope"], FinanceUserId: user, GrantId: grant})
	if err != nil {
		pr := rpc.Problem(err)
		if pr.Type != problem.InvalidInput {
			p.failed(w, r, err)
			return
		}
		p.renderFinance(w, r, s, http.StatusBadRequest, view{Error: pr.Detail}, func(fv *financeView) {
			fv.Name, fv.UserID, fv.GrantID = name, user, grant
		})
		return
	}
	// The secret is in this one answer (no-store) and nowhere else.
	p.renderFinance(w, r, s, http.StatusOK, view{}, func(fv *financeView) {
		fv.NewSecret, fv.NewName = res.GetSecret(), res.GetCredential().GetName()
	})
}

// revoke is a revoke button: call revokes the id in the path. An unknown
// id, or another account's, is a 404 naming what; success goes back to the
// list, which says it is revoked.
func (p *Portal) revoke(call func(s *session, id string) error, what, back string) signedIn {
	return func(w http.ResponseWriter, r *http.Request, s *session) {
		if err := call(s, r.PathValue("id")); err != nil {
			if rpc.Problem(err).Type == problem.NotFound {
				p.render(w, r, http.StatusNotFound, "message", view{Title: "Not found", Error: "There is no such " + what + "."})
				return
			}
			p.failed(w, r, err)
			return
		}
		http.Redirect(w, r, back+"?revoked=1", http.StatusSeeOther)
	}
}

// revokeCredential revokes a key or a finance credential of the account.
func (p *Portal) revokeCredential(s *session, id string) error {
	_, err := p.api.creds.RevokeKey(s.ctx, &meteringv1.RevokeKeyRequest{KeyId: id})
	return err
}

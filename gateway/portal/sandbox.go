package portal

import (
	"net/http"
	"strings"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
)

// The Finance sandbox page (docs/finance-sandbox.md): the account holder
// makes test-mode finance users, links them to the sandbox's pretend
// institutions with their published test credentials (answering the MFA
// step when one is asked), sees each connection's accounts and issues a
// test finance credential on a link's grant, shown once with a ready
// GET /v1/transactions command. It calls finance's SandboxService with the
// session's principal (which the service serves in test mode) and the
// finance credentials page's own CreateFinanceCredential.

type sandboxView struct {
	Users        []*financev1.SandboxUser
	Institutions []*financev1.SandboxInstitution
	Links        []*financev1.SandboxLink
	// Names of the users, by id, for the links table.
	UserNames map[string]string
	// MFA is the link waiting for its code right now, if any.
	MFA *financev1.SandboxLink
	// The credential just issued: shown once.
	NewSecret string
	APIRoot   string
	// Form values after a refusal (never the password).
	UserID, InstitutionID, Username string
}

// sandboxRoutes adds the page's routes to the portal's mux.
func (p *Portal) sandboxRoutes() {
	p.mux.HandleFunc("GET /portal/sandbox", p.session(p.sandbox))
	p.mux.HandleFunc("POST /portal/sandbox/users", p.session(p.createSandboxUser))
	p.mux.HandleFunc("POST /portal/sandbox/links", p.session(p.createSandboxLink))
	p.mux.HandleFunc("POST /portal/sandbox/links/{id}/mfa", p.session(p.answerSandboxMFA))
	p.mux.HandleFunc("POST /portal/sandbox/credentials", p.session(p.createSandboxCredential))
}

func (p *Portal) sandboxView(s *session) (*sandboxView, error) {
	v := &sandboxView{UserNames: map[string]string{}, APIRoot: strings.TrimSuffix(p.opts.PublicURL, "/")}
	us, err := p.api.sandbox.ListSandboxUsers(s.ctx, &financev1.ListSandboxUsersRequest{})
	if err != nil {
		return nil, err
	}
	v.Users = us.GetData()
	for _, u := range v.Users {
		v.UserNames[u.GetId()] = u.GetName()
	}
	ins, err := p.api.sandbox.ListSandboxInstitutions(s.ctx, &financev1.ListSandboxInstitutionsRequest{})
	if err != nil {
		return nil, err
	}
	v.Institutions = ins.GetData()
	ls, err := p.api.sandbox.ListSandboxLinks(s.ctx, &financev1.ListSandboxLinksRequest{})
	if err != nil {
		return nil, err
	}
	links := ls.GetData()
	for i := len(links) - 1; i >= 0; i-- { // newest first
		v.Links = append(v.Links, links[i])
	}
	return v, nil
}

func (p *Portal) renderSandbox(w http.ResponseWriter, r *http.Request, s *session, status int, v view, fill func(*sandboxView)) {
	sv, err := p.sandboxView(s)
	if err != nil {
		p.failed(w, r, err)
		return
	}
	if fill != nil {
		fill(sv)
	}
	v.Title, v.Session, v.CSRF, v.Sandbox = "Finance sandbox", s, s.GetCsrfToken(), sv
	p.render(w, r, status, "sandbox", v)
}

func (p *Portal) sandbox(w http.ResponseWriter, r *http.Request, s *session) {
	p.renderSandbox(w, r, s, http.StatusOK, view{}, nil)
}

// sandboxRefused shows the page again with a refusal the person can act on
// (bad input, wrong credentials or code, an institution down, a limit, a
// link no longer waiting), at the problem's status; anything else fails.
func (p *Portal) sandboxRefused(w http.ResponseWriter, r *http.Request, s *session, err error, fill func(*sandboxView)) {
	pr := rpc.Problem(err)
	switch pr.Type {
	case problem.InvalidInput, problem.InvalidCredentials, problem.InvalidMFACode, problem.InstitutionDown,
		problem.SandboxLimitReached, problem.Conflict, problem.NotFound:
		p.renderSandbox(w, r, s, pr.Type.Status(), view{Error: pr.Detail}, fill)
	default:
		p.failed(w, r, err)
	}
}

func (p *Portal) createSandboxUser(w http.ResponseWriter, r *http.Request, s *session) {
	res, err := p.api.sandbox.CreateSandboxUser(s.ctx, &financev1.CreateSandboxUserRequest{Name: r.PostFormValue("name")})
	if err != nil {
		p.sandboxRefused(w, r, s, err, nil)
		return
	}
	u := res.GetUser()
	p.renderSandbox(w, r, s, http.StatusOK, view{Notice: "Sandbox user “" + u.GetName() + "” created: link it to an institution below."},
		func(sv *sandboxView) { sv.UserID = u.GetId() })
}

func (p *Portal) createSandboxLink(w http.ResponseWriter, r *http.Request, s *session) {
	in := &financev1.CreateSandboxLinkRequest{UserId: r.PostFormValue("user_id"), InstitutionId: r.PostFormValue("institution_id"),
		Username: r.PostFormValue("username"), Password: r.PostFormValue("password"), WritesEnabled: r.PostFormValue("writes_enabled") == "1"}
	keep := func(sv *sandboxView) {
		sv.UserID, sv.InstitutionID, sv.Username = in.GetUserId(), in.GetInstitutionId(), in.GetUsername()
	}
	res, err := p.api.sandbox.CreateSandboxLink(s.ctx, in)
	if err != nil {
		p.sandboxRefused(w, r, s, err, keep)
		return
	}
	p.linkAnswer(w, r, s, res.GetLink())
}

func (p *Portal) answerSandboxMFA(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	res, err := p.api.sandbox.AnswerSandboxLinkMfa(s.ctx, &financev1.AnswerSandboxLinkMfaRequest{Id: id, Code: r.PostFormValue("code")})
	if err != nil {
		// A wrong code with attempts left: ask again.
		p.sandboxRefused(w, r, s, err, func(sv *sandboxView) {
			for _, l := range sv.Links {
				if l.GetId() == id && l.GetStatus() == "mfa_required" {
					sv.MFA = l
				}
			}
		})
		return
	}
	p.linkAnswer(w, r, s, res.GetLink())
}

// linkAnswer shows a started or answered link: its MFA step, or that it is
// linked.
func (p *Portal) linkAnswer(w http.ResponseWriter, r *http.Request, s *session, l *financev1.SandboxLink) {
	if l.GetStatus() == "mfa_required" {
		p.renderSandbox(w, r, s, http.StatusOK, view{Notice: l.GetInstitutionName() + " asks for a code."},
			func(sv *sandboxView) { sv.MFA = l })
		return
	}
	p.renderSandbox(w, r, s, http.StatusOK, view{Notice: l.GetInstitutionName() + " is linked: issue a finance credential on it below."}, nil)
}

func (p *Portal) createSandboxCredential(w http.ResponseWriter, r *http.Request, s *session) {
	res, err := p.api.creds.CreateFinanceCredential(s.ctx, &meteringv1.CreateFinanceCredentialRequest{
		Name: "sandbox " + r.PostFormValue("institution"), Kind: r.PostFormValue("kind"), Mode: "test",
		FinanceUserId: r.PostFormValue("user_id"), GrantId: r.PostFormValue("grant_id")})
	if err != nil {
		p.sandboxRefused(w, r, s, err, nil)
		return
	}
	// The secret is in this one answer (no-store) and nowhere else.
	p.renderSandbox(w, r, s, http.StatusOK, view{}, func(sv *sandboxView) { sv.NewSecret = res.GetSecret() })
}

package portal

import (
	"net/http"
	"strings"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
)

func (p *Portal) renderPeople(w http.ResponseWriter, r *http.Request, s *session, status int, v view) {
	res, err := p.api.identity.ListPeople(s.ctx, &meteringv1.ListPeopleRequest{})
	if err != nil {
		p.failed(w, r, err)
		return
	}
	v.Title, v.Session, v.CSRF, v.People = "People", s, s.GetCsrfToken(), res.GetPeople()
	p.render(w, r, status, "people", v)
}

func (p *Portal) people(w http.ResponseWriter, r *http.Request, s *session) {
	p.renderPeople(w, r, s, http.StatusOK, view{})
}

func (p *Portal) invite(w http.ResponseWriter, r *http.Request, s *session) {
	email := r.PostFormValue("email")
	_, err := p.api.identity.InvitePerson(s.ctx, &meteringv1.InvitePersonRequest{Email: email, LinkBase: p.link("/portal/invite?t=")})
	if err != nil {
		pr := rpc.Problem(err)
		if pr.Type == problem.InvalidInput || pr.Type == problem.Conflict {
			p.renderPeople(w, r, s, http.StatusBadRequest, view{Error: pr.Detail, Email: email})
			return
		}
		p.failed(w, r, err)
		return
	}
	p.renderPeople(w, r, s, http.StatusOK, view{Notice: "An invitation is on its way to " + strings.TrimSpace(email) + "."})
}

func (p *Portal) invitationForm(w http.ResponseWriter, r *http.Request) {
	inv := r.URL.Query().Get("t")
	res, err := p.api.identity.GetInvitation(r.Context(), &meteringv1.GetInvitationRequest{Invitation: inv})
	if err != nil {
		p.invitationFailed(w, r, err)
		return
	}
	p.render(w, r, http.StatusOK, "invite", view{Title: "Join " + res.GetAccountName(), CSRF: p.preToken(w, r),
		Email: res.GetEmail(), AccountName: res.GetAccountName(), Invitation: inv})
}

func (p *Portal) invitationFailed(w http.ResponseWriter, r *http.Request, err error) {
	if pr := rpc.Problem(err); pr.Type == problem.NotFound {
		p.render(w, r, http.StatusNotFound, "message", view{Title: "Invitation", Error: pr.Detail})
		return
	}
	p.failed(w, r, err)
}

func (p *Portal) acceptInvitation(w http.ResponseWriter, r *http.Request) {
	if !checkPre(r) {
		p.csrfRefused(w, r)
		return
	}
	inv := r.PostFormValue("invitation")
	res, err := p.api.identity.AcceptInvitation(r.Context(), &meteringv1.AcceptInvitationRequest{Invitation: inv,
		Password: r.PostFormValue("password"), Name: r.PostFormValue("name")})
	if err != nil {
		pr := rpc.Problem(err)
		if pr.Type != problem.InvalidInput {
			p.invitationFailed(w, r, err)
			return
		}
		got, gerr := p.api.identity.GetInvitation(r.Context(), &meteringv1.GetInvitationRequest{Invitation: inv})
		if gerr != nil {
			p.invitationFailed(w, r, gerr)
			return
		}
		p.render(w, r, http.StatusBadRequest, "invite", view{Title: "Join " + got.GetAccountName(), CSRF: p.preToken(w, r),
			Email: got.GetEmail(), AccountName: got.GetAccountName(), Invitation: inv, Name: r.PostFormValue("name"), Error: pr.Detail})
		return
	}
	p.signedIn(w, r, res.GetToken(), res.GetSession())
}

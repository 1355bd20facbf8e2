package portal

import (
	"net/http"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
)

// Password reset (docs/portal.md): a form asks for the address, metering
// mails a single-use link to /portal/reset?t=… (the token in the query,
// never the path the access log records), and the reset form sets a new
// password, which signs the person out everywhere. Both forms are before
// sign-in, so they carry the double-submit CSRF token.

// resetSent is the one answer to a reset request, whether or not the
// address has a portal user.
const resetSent = "If a portal user has this address, a link to choose a new password is on its way to it. " +
	"It works once, for 30 minutes."

func (p *Portal) forgotForm(w http.ResponseWriter, r *http.Request) {
	p.render(w, r, http.StatusOK, "forgot", view{Title: "Reset your password", CSRF: p.preToken(w, r)})
}

func (p *Portal) forgot(w http.ResponseWriter, r *http.Request) {
	if !checkPre(r) {
		p.csrfRefused(w, r)
		return
	}
	email := r.PostFormValue("email")
	_, err := p.api.identity.RequestPasswordReset(r.Context(), &meteringv1.RequestPasswordResetRequest{Email: email,
		LinkBase: p.link("/portal/reset?t=")})
	if err != nil {
		p.refusedForm(w, r, err, "forgot", view{Title: "Reset your password", CSRF: p.preToken(w, r), Email: email}, problem.InvalidInput)
		return
	}
	p.render(w, r, http.StatusOK, "message", view{Title: "Check your e-mail", Notice: resetSent})
}

func (p *Portal) resetFailed(w http.ResponseWriter, r *http.Request, err error) {
	if pr := rpc.Problem(err); pr.Type == problem.NotFound {
		p.render(w, r, http.StatusNotFound, "message", view{Title: "Password reset", Error: pr.Detail})
		return
	}
	p.failed(w, r, err)
}

func (p *Portal) resetForm(w http.ResponseWriter, r *http.Request) {
	tok := r.URL.Query().Get("t")
	res, err := p.api.identity.GetPasswordReset(r.Context(), &meteringv1.GetPasswordResetRequest{ResetToken: tok})
	if err != nil {
		p.resetFailed(w, r, err)
		return
	}
	p.render(w, r, http.StatusOK, "reset", view{Title: "Choose a new password", CSRF: p.preToken(w, r), Email: res.GetEmail(), ResetToken: tok})
}

func (p *Portal) reset(w http.ResponseWriter, r *http.Request) {
	if !checkPre(r) {
		p.csrfRefused(w, r)
		return
	}
	tok := r.PostFormValue("reset")
	_, err := p.api.identity.ResetPassword(r.Context(), &meteringv1.ResetPasswordRequest{ResetToken: tok, Password: r.PostFormValue("password")})
	if err != nil {
		pr := rpc.Problem(err)
		if pr.Type != problem.InvalidInput {
			p.resetFailed(w, r, err)
			return
		}
		got, gerr := p.api.identity.GetPasswordReset(r.Context(), &meteringv1.GetPasswordResetRequest{ResetToken: tok})
		if gerr != nil {
			p.resetFailed(w, r, gerr)
			return
		}
		p.render(w, r, http.StatusBadRequest, "reset", view{Title: "Choose a new password", CSRF: p.preToken(w, r),
			Email: got.GetEmail(), ResetToken: tok, Error: pr.Detail})
		return
	}
	// The browser's own session, if any, ends too (metering ended the
	// person's; this one may be someone else's on a shared machine).
	p.endOld(r)
	p.clearSession(w, r)
	p.render(w, r, http.StatusOK, "signin", view{Title: "Sign in", CSRF: p.preToken(w, r),
		Notice: "Your password is changed and every session of yours is signed out. Sign in with the new password."})
}

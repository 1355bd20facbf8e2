package portal

import (
	"net/http"
	"strconv"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
)

// E-mail verification (docs/portal.md): sign-up mails a link to
// /portal/verify?t=…; its page confirms with a form, so only a person's
// click (not a mail scanner fetching the link) uses the token up. Signed-in
// people whose address is not verified see a notice with a button that
// sends the link again.

func (p *Portal) verifyLinkBase() string { return p.link("/portal/verify?t=") }

func (p *Portal) verifyForm(w http.ResponseWriter, r *http.Request) {
	p.render(w, r, http.StatusOK, "verify", view{Title: "Confirm your e-mail address", CSRF: p.preToken(w, r),
		ResetToken: r.URL.Query().Get("t")})
}

func (p *Portal) verify(w http.ResponseWriter, r *http.Request) {
	if !checkPre(r) {
		p.csrfRefused(w, r)
		return
	}
	_, err := p.api.identity.VerifyEmail(r.Context(), &meteringv1.VerifyEmailRequest{VerifyToken: r.PostFormValue("verify")})
	if err != nil {
		if pr := rpc.Problem(err); pr.Type == problem.NotFound {
			p.render(w, r, http.StatusNotFound, "message", view{Title: "E-mail verification", Error: pr.Detail})
			return
		}
		p.failed(w, r, err)
		return
	}
	p.render(w, r, http.StatusOK, "message", view{Title: "E-mail address confirmed",
		Notice: "Your e-mail address is confirmed: you can now create live keys."})
}

func (p *Portal) sendVerification(w http.ResponseWriter, r *http.Request, s *session) {
	_, err := p.api.identity.SendVerification(s.ctx, &meteringv1.SendVerificationRequest{LinkBase: p.verifyLinkBase()})
	if err != nil {
		pr := rpc.Problem(err)
		if pr.Type == problem.RateLimited {
			if pr.RetryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(pr.RetryAfter))
			}
			p.render(w, r, http.StatusTooManyRequests, "message", view{Title: "Confirm your e-mail address", Session: s, CSRF: s.GetCsrfToken(), Error: pr.Detail})
			return
		}
		p.failed(w, r, err)
		return
	}
	p.render(w, r, http.StatusOK, "message", view{Title: "Confirm your e-mail address", Session: s, CSRF: s.GetCsrfToken(),
		Notice: "A new link is on its way to " + s.GetEmail() + ". It works once, for 48 hours."})
}

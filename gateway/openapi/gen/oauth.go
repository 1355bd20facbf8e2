package main

import (
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
)

// oauthToken describes POST /v1/oauth/token as gateway/oauth.go serves it:
// RFC 6749's form body in, its JSON out, errors in its §5.2 shape (the
// OAuth spec fixes them; docs/errors.md), problem documents only for what
// is not an OAuth answer (throttling, size, an unavailable backend).
func (b *builder) oauthToken(op *openapi3.Operation) {
	str := func(desc string) *openapi3.SchemaRef { return stringSchema(desc, nil) }
	op.RequestBody = &openapi3.RequestBodyRef{Value: &openapi3.RequestBody{
		Description: "RFC 6749 §4.4.2. The client authenticates with HTTP Basic (client id and secret, each form-encoded, " +
			"RFC 6749 §2.3.1) or with client_id and client_secret in the body; not both.",
		Required: true,
		Content: openapi3.Content{"application/x-www-form-urlencoded": {Schema: &openapi3.SchemaRef{Value: &openapi3.Schema{
			Type:     &openapi3.Types{openapi3.TypeObject},
			Required: []string{"grant_type"},
			Properties: openapi3.Schemas{
				"grant_type":    stringSchema("Only client_credentials is granted.", func(s *openapi3.Schema) { s.Example = "client_credentials" }),
				"client_id":     str("The client id (oc_test_…), when not sent with HTTP Basic."),
				"client_secret": str("The client secret (cs_test_…), when not sent with HTTP Basic."),
				"scope":         str("Space-separated scopes, each one the client has; absent: all of them."),
			},
		}}}},
	}}
	noStore := header("Token answers are never cached (RFC 6749 §5.1).", true, stringSchema("", func(s *openapi3.Schema) { s.Enum = []any{"no-store"} }))
	okDesc := "An access token (RFC 6749 §5.1): an at_test_ conversion credential of test mode."
	op.Responses.Set("200", &openapi3.ResponseRef{Value: &openapi3.Response{
		Description: &okDesc,
		Headers:     openapi3.Headers{"X-Request-Id": {Ref: headers + "X-Request-Id"}, "Cache-Control": noStore},
		Content: openapi3.NewContentWithJSONSchema(&openapi3.Schema{
			Type:     &openapi3.Types{openapi3.TypeObject},
			Required: []string{"access_token", "token_type", "expires_in", "scope"},
			Properties: openapi3.Schemas{
				"access_token": str("Send it as Authorization: Bearer, like a key."),
				"token_type":   stringSchema("", func(s *openapi3.Schema) { s.Enum = []any{"Bearer"} }),
				"expires_in":   intSchema("Seconds from now until the token is refused.", nonNegative),
				"scope":        str("The granted scopes, space-separated."),
			},
			AdditionalProperties: openapi3.AdditionalProperties{Has: ptr(false)},
		}),
	}})
	oauthErr := func(desc string, codes ...any) *openapi3.Response {
		return &openapi3.Response{
			Description: &desc,
			Headers:     openapi3.Headers{"X-Request-Id": {Ref: headers + "X-Request-Id"}, "Cache-Control": noStore},
			Content: openapi3.NewContentWithJSONSchema(&openapi3.Schema{
				Type:        &openapi3.Types{openapi3.TypeObject},
				Description: "An RFC 6749 §5.2 error (not a problem document: the OAuth spec fixes this shape).",
				Required:    []string{"error"},
				Properties: openapi3.Schemas{
					"error":             stringSchema("", func(s *openapi3.Schema) { s.Enum = codes }),
					"error_description": str("For a human; never parse it."),
				},
				AdditionalProperties: openapi3.AdditionalProperties{Has: ptr(false)},
			}),
		}
	}
	op.Responses.Set("400", &openapi3.ResponseRef{Value: oauthErr("A refused grant request.",
		"invalid_request", "invalid_grant", "unauthorized_client", "unsupported_grant_type", "invalid_scope")})
	unauth := oauthErr("The client did not authenticate: unknown client, wrong secret or revoked client alike.", "invalid_client")
	unauth.Headers["WWW-Authenticate"] = header("Basic realm=\"ledgerlane\" (RFC 6749 §5.2).", true, stringSchema("", nil))
	op.Responses.Set("401", &openapi3.ResponseRef{Value: unauth})
	for _, s := range []int{413, 429, 503} {
		op.Responses.Set(strconv.Itoa(s), &openapi3.ResponseRef{Ref: responses + problemResponse(s)})
	}
}

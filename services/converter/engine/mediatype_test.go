package engine_test

import (
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// Every target carries its media type, in Formats and in each Result.
func TestRenderersCarryTheirMediaType(t *testing.T) {
	want := map[string]string{
		"MT940": "text/plain", "MT941": "text/plain", "MT942": "text/plain", "MT950": "text/plain",
		"camt.053": "application/xml", "camt.052": "application/xml",
		"csv": "text/csv", "ofx": "application/x-ofx", "qbo": "application/vnd.intu.qbo",
		"MT103": "text/plain", "pacs.008": "application/xml",
		"MT202": "text/plain", "MT202COV": "text/plain", "MT205": "text/plain", "MT205COV": "text/plain", "pacs.009": "application/xml",
		"MT900": "text/plain", "MT910": "text/plain", "camt.054": "application/xml",
		"MT199": "text/plain", "MT299": "text/plain", "pacs.002": "application/xml",
		"pacs.004": "application/xml",
		"MT210":    "text/plain", "MT920": "text/plain", "MT110": "text/plain", "MT111": "text/plain", "MT112": "text/plain",
		"camt.057": "application/xml", "camt.060": "application/xml", "camt.107": "application/xml", "camt.108": "application/xml", "camt.109": "application/xml",
		"MT190": "text/plain", "MT290": "text/plain", "MT191": "text/plain", "MT291": "text/plain", "MT192": "text/plain", "MT292": "text/plain",
		"MT195": "text/plain", "MT295": "text/plain", "MT196": "text/plain", "MT296": "text/plain",
		"camt.105": "application/xml", "camt.106": "application/xml", "camt.056": "application/xml", "camt.029": "application/xml",
		"MT101": "text/plain", "pain.001": "application/xml", "MT204": "text/plain", "pacs.010": "application/xml",
	}
	seen := map[string]bool{}
	for _, f := range eng.Formats() {
		if f.MediaType != want[f.To] {
			t.Errorf("%s>%s: media type %q, want %q", f.From, f.To, f.MediaType, want[f.To])
		}
		seen[f.To] = true
	}
	for to := range want {
		if !seen[to] {
			t.Errorf("no format has target %s", to)
		}
	}
	for _, to := range []string{"camt.053.001.02", "MT940", "csv"} {
		in := mt940
		if strings.HasPrefix(to, "MT") {
			res, err := eng.Convert(engine.Request{Input: []byte(mt940), To: "camt.053"})
			if err != nil {
				t.Fatal(err)
			}
			in = res.Pages[0]
		}
		res, err := eng.Convert(engine.Request{Input: []byte(in), To: to, Options: statement.Options{}})
		if err != nil {
			t.Fatalf("to %s: %v", to, err)
		}
		if res.MediaType != want[res.TargetType] {
			t.Errorf("to %s: media type %q, want %q", to, res.MediaType, want[res.TargetType])
		}
	}
}

// An engine has only the formats it was built from.
func TestEngineHasOnlyItsFormats(t *testing.T) {
	e := engine.New(engine.FormatSet{
		Parsers: []engine.Parser{{Type: "x", Parse: func([]byte, string, statement.Options) ([]*statement.Statement, []statement.Warning, error) {
			return []*statement.Statement{{}}, nil, nil
		}}},
		Renderers: []engine.Renderer{{Type: "y", MediaType: "text/y", Accepts: []string{"x"},
			Render: func([]*statement.Statement, string, statement.Options) ([]string, []statement.Warning, error) {
				return []string{"y"}, nil, nil
			}}},
	})
	if fs := e.Formats(); len(fs) != 1 || fs[0].From != "x" || fs[0].To != "y" || fs[0].MediaType != "text/y" {
		t.Fatalf("formats %+v", fs)
	}
	if res, err := e.Convert(engine.Request{Input: []byte("anything"), From: "X", To: "Y"}); err != nil || res.Pages[0] != "y" || res.MediaType != "text/y" {
		t.Fatalf("convert: %+v %v", res, err)
	}
	if _, err := e.Convert(engine.Request{Input: []byte(mt940), To: "camt.053"}); err == nil {
		t.Fatal("an engine without camt converted to camt.053")
	}
}

func TestNewRefusesWiringMistakes(t *testing.T) {
	r := engine.Renderer{Type: "y", MediaType: "text/y"}
	for name, sets := range map[string][]engine.FormatSet{
		"two renderers of one type":     {{Renderers: []engine.Renderer{r}}, {Renderers: []engine.Renderer{{Type: "Y", MediaType: "text/y"}}}},
		"two parsers of one type":       {{Parsers: []engine.Parser{{Type: "x"}, {Type: "x"}}}},
		"renderer without a media type": {{Renderers: []engine.Renderer{{Type: "z"}}}},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			engine.New(sets...)
		})
	}
}

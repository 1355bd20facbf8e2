package mt

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// FuzzParse: no input makes the parser or the renderers panic or hang, every
// failure is a ParseError, and whatever renders parses back.
func FuzzParse(f *testing.F) {
	f.Add([]byte(":20:A\n:25:1\n:28C:1\n:60F:C240101EUR1,\n:61:2401010101RC1,NMSCX//Y\nsupp\n:86:051?00T?20EREF+1 SVWZ+x?32N\n:62F:C240101EUR0,\n-"))
	f.Add([]byte("{1:F01AAAABBCCXXXX0000000000}{2:O9421200240102AAAABBCCXXXX00000000002401021200N}{4:\r\n:20:A\r\n:34F:EURD1,\r\n:13D:2401011200+0100\r\n:90D:1EUR1,\r\n-}{5:}"))
	f.Add([]byte(":\n86:x\n:61:1811261126CR\n30,00N062NONREF\n"))
	// MT941 (balance report): FIN, and bare text known by its fields.
	f.Add([]byte("{1:F01AAAABBCCXXXX0000000000}{2:O9411200240102AAAABBCCXXXX00000000002401021200N}{4:\r\n:20:B\r\n:21:R\r\n:25:1\r\n:28:1/1\r\n" +
		":13D:2401021200+0100\r\n:60F:C240101EUR1,\r\n:90D:2EUR3,\r\n:90C:1EUR5,\r\n:62F:C240102EUR3,\r\n:64:C240102EUR2,5\r\n:65:C240103EUR4,\r\n:86:x\r\n-}"))
	f.Add([]byte(":20:B\n:25:1\n:28:1\n:90C:1EUR5,\n:62F:D240102EUR3,\n-"))
	if b, err := os.ReadFile("testdata/mt941/balance_report.fin"); err == nil {
		f.Add(b)
	}
	// Seed with the shared samples when they are there. Large ones are left
	// out: minimising inputs grown from them stalls the fuzzer for long
	// stretches, and the small ones cover the same structures.
	for _, p := range sampleFilesQuiet() {
		if b, err := os.ReadFile(p); err == nil && len(b) < 4096 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, profile := range []string{"plain", "german"} {
			opts := statement.Options{Field86Profile: profile, TranslitProfile: "german"}
			typ, _, _ := Detect(in)
			hint := ""
			if typ == "MT941" {
				hint = "941" // as the engine's MT941 parser reads it
			}
			stmts, _, err := parse(in, opts, hint)
			if err != nil {
				var pe *statement.ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("not a ParseError: %v", err)
				}
				continue
			}
			for _, typ := range []string{"940", "941", "942", "950"} {
				pages, _, err := Render(typ, stmts, opts)
				if err != nil {
					continue
				}
				if typ == "941" && len(pages) != len(stmts) {
					t.Fatalf("MT941 of %d messages for %d statements", len(pages), len(stmts))
				}
				for _, p := range pages {
					if len(block4(p)) > MaxPage {
						t.Fatalf("page of %d characters", len(block4(p)))
					}
				}
				if _, _, err := Parse([]byte(strings.Join(pages, "\r\n")), opts); err != nil {
					t.Fatalf("rendered MT%s does not parse back: %v", typ, err)
				}
			}
		}
	})
}

// sampleFilesQuiet lists the shared samples without failing when absent.
func sampleFilesQuiet() []string {
	var files []string
	dir := sharedDirQuiet()
	if dir == "" {
		return nil
	}
	for _, sub := range []string{"php-mt940", "wolph_mt940"} {
		ents, _ := os.ReadDir(dir + "/samples/mt/" + sub)
		for _, e := range ents {
			if !strings.HasSuffix(e.Name(), ".yml") {
				files = append(files, dir+"/samples/mt/"+sub+"/"+e.Name())
			}
		}
	}
	return files
}

// TestHostileInputs: inputs built to hit quadratic paths parse and render
// in bounded time; the 2 MiB body limit makes 2 MiB the worst case.
func TestHostileInputs(t *testing.T) {
	size := 2 << 20
	if raceEnabled {
		size = 256 << 10
	}
	rep := func(s string) []byte {
		var b strings.Builder
		for b.Len() < size {
			b.WriteString(s)
		}
		return []byte(b.String())
	}
	inputs := map[string][]byte{
		"nested block 4":  rep("{4:"),
		"one long line":   rep("x"),
		"colons":          append([]byte(":20:A\n:25:1\n:28C:1\n:60F:C240101EUR1,\n:61:240101C1,NMSCX\n:86:"), rep(":")...),
		"many :86:":       append([]byte(":20:A\n:25:1\n:28C:1\n:60F:C240101EUR1,\n"), rep(":86:text\n")...),
		"german ?":        append([]byte(":20:A\n:25:1\n:28C:1\n:60F:C240101EUR1,\n:61:240101C1,NMSCX\n:86:051?"), rep("?20EREF+SVWZ+")...),
		"many entries":    append([]byte(":20:A\n:25:1\n:28C:1\n:60F:C240101EUR1,\n"), rep(":61:240101C1,NMSCX\n:86:a\n")...),
		"many :65:":       append([]byte(":20:A\n:25:1\n:28C:1\n:60F:C240101EUR1,\n:62F:C240101EUR1,\n"), rep(":65:C240101EUR1,\n")...),
		"huge amount":     append([]byte(":20:A\n:25:1\n:28C:1\n:60F:C240101EUR1"), rep("9")...),
		"many messages":   rep(":20:A\n:25:1\n:28C:1\n:60F:C240101EUR1,\n:62F:C240101EUR1,\n-\n"),
		"braces":          rep("{1:{{{{{{{{{{"),
		"blank lines":     append([]byte(":20:A\n"), rep("\n")...),
		"wrapped colon":   rep(":\n"),
		"header lines":    rep("0000 01INGBNL2AXXXX00001\n"),
		"unknown fields":  append([]byte(":20:A\n"), rep(":NS:x\n")...),
		"duplicate :60F:": append([]byte(":20:A\n"), rep(":60F:C240101EUR1,\n")...),
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			for _, profile := range []string{"plain", "german"} {
				opts := statement.Options{Field86Profile: profile}
				Detect(in)
				st, warns, err := Parse(in, opts)
				if len(warns) > 1000 {
					t.Errorf("%d warnings", len(warns))
				}
				if err == nil {
					for _, typ := range []string{"940", "942", "950"} {
						pages, _, err := Render(typ, st, opts)
						if err != nil {
							continue
						}
						for _, p := range pages {
							if len(block4(p)) > MaxPage {
								t.Fatalf("MT%s page of %d characters", typ, len(block4(p)))
							}
						}
					}
				}
			}
			if d := time.Since(start); d > 30*time.Second { // generous: CI machines are shared
				t.Errorf("took %v", d)
			}
		})
	}
}

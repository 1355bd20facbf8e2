package mx

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sharedDir is the workspace's shared test data (../shared beside the repo).
// Tests that need it skip when it is absent, e.g. in a bare clone.
func sharedDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "shared"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "samples")); err != nil {
		t.Skipf("shared test data not found at %s: %v", dir, err)
	}
	return dir
}

// mxSamples lists every camt.052/053 sample (and the other MX samples, which
// must fail with a ParseError).
func mxSamples(t testing.TB) []string {
	dir := sharedDir(t)
	var files []string
	for _, pattern := range []string{
		"samples/mx/*/*.xml",
		"samples/pairs/cbpr_mx_to_mt/*camt.05*.input.xml",
	} {
		m, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Skip("no MX samples found")
	}
	return files
}

// invalidOnPurpose are the samples SOURCES.md lists as invalid by design.
func invalidOnPurpose(path string) bool {
	base := filepath.Base(path)
	return base == "camt053.v2.wrong.xml" || strings.HasPrefix(base, "invalid_")
}

// xmllintSetup finds xmllint and the schemas, or says why validation
// cannot run.
func xmllintSetup() (bin, xsdDir, why string) {
	bin, err := exec.LookPath("xmllint")
	if err != nil {
		return "", "", "xmllint not installed (apt-get install -y libxml2-utils): schema validation skipped"
	}
	dir, _ := filepath.Abs(filepath.Join("..", "..", "..", "..", "shared", "iso20022", "xsd"))
	if _, err := os.Stat(dir); err != nil {
		return "", "", "official schemas not found at " + dir + ": schema validation skipped"
	}
	return bin, dir, ""
}

// TestXMLLintAvailable makes a missing validator visible as a skipped test;
// the other tests then log the same reason and check everything else.
func TestXMLLintAvailable(t *testing.T) {
	if _, _, why := xmllintSetup(); why != "" {
		t.Skip(why)
	}
}

// xmllint validates doc against the official schema of version and fails the
// test with xmllint's complaint. Without xmllint or the schemas it logs why
// and returns, so the caller's other checks still run.
func xmllint(t *testing.T, version, doc string) {
	t.Helper()
	if strings.Contains(doc, "<Envelope xmlns=\""+nsEnvelope+"\">") {
		// A statement with its AppHdr: each part against its own schema.
		xmllintPayment(t, version, doc)
		return
	}
	bin, dir, why := xmllintSetup()
	if why != "" {
		t.Log(why)
		return
	}
	xsd := filepath.Join(dir, version+".xsd")
	if _, err := os.Stat(xsd); err != nil {
		t.Fatalf("no schema for %s: %v", version, err)
	}
	f := filepath.Join(t.TempDir(), "doc.xml")
	if err := os.WriteFile(f, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--noout", "--schema", xsd, f).CombinedOutput()
	if err != nil {
		t.Fatalf("xmllint %s: %v\n%s\n--- document ---\n%s", version, err, out, head(doc, 4000))
	}
}

func head(s string, n int) string {
	if len(s) > n {
		return s[:n] + "\n…"
	}
	return s
}

package mailsink

import (
	"net/smtp"
	"os"
	"path/filepath"
	"testing"
)

// TestFilesAreOwnerOnly: the mails a sink writes hold reset and invitation
// links, so its folder and files are readable by their owner only.
func TestFilesAreOwnerOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mail")
	s, err := Start("127.0.0.1:0", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := smtp.SendMail(s.Addr(), nil, "billing@ledgerlane.local", []string{"ann@example.com"},
		[]byte("Subject: Reset\r\n\r\nhttps://api.example.com/portal/reset?t=pr_secret\r\n")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("folder: %v %v", fi.Mode(), err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.eml"))
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mail file: %v %v", fi.Mode(), err)
	}
}

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ledgerlane/platform/deploy/local"
	"github.com/ledgerlane/platform/deploy/local/load"
)

func TestParseFlags(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
		check   func(options) bool
	}{
		{args: nil, check: func(o options) bool {
			return o.rate == 200 && o.duration == 10*time.Second && o.accounts == 100 && o.plan == "growth" && o.target == ""
		}},
		{args: []string{"-rate", "0", "-duration", "1m", "-target", "http://h:8080"}, check: func(o options) bool {
			return o.rate == 0 && o.duration == time.Minute && o.target == "http://h:8080"
		}},
		{args: []string{"-rate", "-1"}, wantErr: "-rate"},
		{args: []string{"-accounts", "0"}, wantErr: "-accounts"},
		{args: []string{"-duration", "0s"}, wantErr: "-duration"},
		{args: []string{"-workers", "-3"}, wantErr: "-workers"},
		{args: []string{"extra"}, wantErr: "unexpected argument"},
		{args: []string{"-target", "http://h", "-cpuprofile", "p"}, wantErr: "-cpuprofile"},
		{args: []string{"-nope"}, wantErr: "not defined"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			o, err := parseFlags(tt.args, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseFlags(%q) = %v, want error with %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil || !tt.check(o) {
				t.Fatalf("parseFlags(%q) = %+v, %v", tt.args, o, err)
			}
		})
	}
}

func TestWithoutFinance(t *testing.T) {
	mix, err := load.ParseMix(load.DefaultMix)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range withoutFinance(mix) {
		if strings.HasPrefix(s.Scenario, "finance-") {
			t.Fatalf("%s left in", s.Scenario)
		}
	}
	if len(withoutFinance(mix)) != len(mix)-2 {
		t.Fatal("a conversion scenario was dropped")
	}
}

// TestRunAgainstTarget drives a stack started apart from the tool, as
// separately started binaries are: accounts are provisioned in its metering
// database (a throwaway schema) and the finance credentials come from the
// keys file `make run` writes.
func TestRunAgainstTarget(t *testing.T) {
	url := os.Getenv("TEST_DATABASE_URL")
	if url == "" {
		t.Skip("TEST_DATABASE_URL is not set: the target run provisions in PostgreSQL")
	}
	samples := filepath.Join("..", "..", "..", "..", "..", "shared", "samples")
	if _, err := os.Stat(samples); err != nil {
		t.Skipf("shared samples not found beside the repository: %v", err)
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	suffix := hex.EncodeToString(b[:])
	finSchema, metSchema := "load_finance_"+suffix, "load_metering_"+suffix
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), url)
		if err != nil {
			return
		}
		defer conn.Close(context.Background())
		for _, s := range []string{finSchema, metSchema} {
			_, _ = conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+s+" CASCADE")
		}
	})
	st, err := local.Start(context.Background(), local.Config{HTTPAddr: "127.0.0.1:0", DatabaseURL: url,
		FinanceSchema: finSchema, MeteringSchema: metSchema, RedisURL: os.Getenv("TEST_REDIS_URL"),
		DemoPlan: "scale", SandboxInterval: -1, Log: slog.New(slog.DiscardHandler), Now: local.TickingClock(local.TestInstant)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	keys := filepath.Join(t.TempDir(), "keys.json")
	if err := local.WriteKeysFile(keys, st.Keys); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	ok, err := run(context.Background(), []string{"-target", st.URL, "-database-url", url, "-metering-schema", metSchema,
		"-keys-file", keys, "-samples", samples, "-accounts", "3", "-rate", "40", "-duration", "2s", "-workers", "4"}, &out, &errOut)
	if err != nil || !ok {
		t.Fatalf("run: ok=%v err=%v\n%s\n%s", ok, err, out.String(), errOut.String())
	}
	t.Log("\n" + out.String())
	for _, want := range []string{"finance-write", "convert-pacs008-mt103", "usage: OK, all 3 accounts"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("report lacks %q:\n%s", want, out.String())
		}
	}
}

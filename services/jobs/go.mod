module github.com/ledgerlane/platform/services/jobs

go 1.26.7

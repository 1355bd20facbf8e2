module github.com/ledgerlane/platform/deploy/local

go 1.26.7

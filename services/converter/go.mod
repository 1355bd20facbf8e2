module github.com/ledgerlane/platform/services/converter

go 1.26.7

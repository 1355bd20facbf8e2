module github.com/ledgerlane/platform/services/finance

go 1.26.7

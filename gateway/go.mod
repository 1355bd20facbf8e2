module github.com/ledgerlane/platform/gateway

go 1.26.7

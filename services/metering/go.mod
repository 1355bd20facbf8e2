module github.com/ledgerlane/platform/services/metering

go 1.26.7

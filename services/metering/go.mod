module github.com/ledgerlane/platform/services/metering

go 1.26.7

require (
	github.com/ledgerlane/platform/pkg v0.0.0
	github.com/ledgerlane/platform/proto v0.0.0
)

replace (
	github.com/ledgerlane/platform/pkg => ../../pkg
	github.com/ledgerlane/platform/proto => ../../proto
)

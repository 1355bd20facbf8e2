// Package faults is the unattended fault suite behind `make faults`: it starts
// its own PostgreSQL, Redis and NATS on free loopback ports (never the shared
// servers), builds the service binaries and runs them as separate processes
// (gateway, metering, finance, two converters, two jobs replicas), then injects
// faults while work flows and asserts that nothing is lost, nothing doubled.
//
// The suite is a test (faults_test.go) that runs only when FAULTS is set
// (FAULTS=all or FAULTS=quick), so `make test` compiles it and skips it.
// docs/faults.md lists the scenarios, what each asserts and the figures.
package faults

# syntax=docker/dockerfile:1
#
# One Dockerfile for every binary of the go.work monorepo. Pick the binary with
# --build-arg SERVICE; run from the repository root (the build context must hold
# go.work). Needs BuildKit (the default builder of Docker >= 23, and buildx).
#
#   gateway:     docker build --build-arg SERVICE=gateway     --build-arg VERSION=1.2.3 --build-arg COMMIT=$(git rev-parse --short HEAD) -t REGISTRY/ledgerlane/gateway:1.2.3 .
#   finance:     docker build --build-arg SERVICE=finance     --build-arg VERSION=1.2.3 --build-arg COMMIT=$(git rev-parse --short HEAD) -t REGISTRY/ledgerlane/finance:1.2.3 .
#   converter:   docker build --build-arg SERVICE=converter   --build-arg VERSION=1.2.3 --build-arg COMMIT=$(git rev-parse --short HEAD) -t REGISTRY/ledgerlane/converter:1.2.3 .
#   metering:    docker build --build-arg SERVICE=metering    --build-arg VERSION=1.2.3 --build-arg COMMIT=$(git rev-parse --short HEAD) -t REGISTRY/ledgerlane/metering:1.2.3 .
#   jobs:        docker build --build-arg SERVICE=jobs        --build-arg VERSION=1.2.3 --build-arg COMMIT=$(git rev-parse --short HEAD) -t REGISTRY/ledgerlane/jobs:1.2.3 .
#   meteringctl: docker build --build-arg SERVICE=meteringctl --build-arg VERSION=1.2.3 --build-arg COMMIT=$(git rev-parse --short HEAD) -t REGISTRY/ledgerlane/meteringctl:1.2.3 .
#
# Optional: --build-arg BUILD_TIME=$(date -u +%Y-%m-%dT%H:%M:%SZ) (the gateway
# reports it on /v1/version), --build-arg CMD_PATH=./some/cmd/dir to build a
# main package the SERVICE table below does not know, and
# --platform linux/arm64 (or linux/amd64,linux/arm64 with buildx) to
# cross-compile: CGO is off, so no emulation is needed for the Go build.
#
# The entrypoint of every image is /usr/local/bin/app. The metering image also
# carries /usr/local/bin/meteringctl, so an operator can issue keys with
# `kubectl exec deploy/metering -- /usr/local/bin/meteringctl ...`
# (deploy/k8s/README.md).

# ---------------------------------------------------------------- build stage
# Runs on the build machine's own platform and cross-compiles for the target.
# The image's Go must be at least the `go` line of go.work (the golang images
# set GOTOOLCHAIN=local, so an older image fails instead of downloading).
FROM --platform=$BUILDPLATFORM golang:1.26 AS build

ARG SERVICE=gateway
ARG CMD_PATH=
ARG VERSION=dev
ARG COMMIT=unknown
ARG BUILD_TIME=
# Set by BuildKit from --platform.
ARG TARGETOS
ARG TARGETARCH

WORKDIR /src
ENV CGO_ENABLED=0 \
    GOFLAGS=-buildvcs=false

# Every module that go.work lists must be present, or the go command refuses
# the workspace: keep this list in step with go.work. Copying directories one
# by one keeps .git, .bin and the manifests out of the layers (they still
# travel in the build context; a .dockerignore listing them would trim that).
# deploy/k8s is a module (its manifest test) but no binary: only its go.mod.
COPY go.work go.work.sum ./
COPY proto/ proto/
COPY pkg/ pkg/
COPY services/ services/
COPY gateway/ gateway/
COPY deploy/local/ deploy/local/
COPY deploy/k8s/go.mod deploy/k8s/go.sum deploy/k8s/

# Modules and the build cache live in BuildKit cache mounts, reused across
# builds of all six images. -X for a variable that a main package does not
# declare (only the gateway has buildTime) is ignored by the linker.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    set -eu; \
    if [ -z "${CMD_PATH:-}" ]; then \
      case "$SERVICE" in \
        gateway)     CMD_PATH=./gateway/cmd/gateway ;; \
        finance)     CMD_PATH=./services/finance/cmd/finance ;; \
        converter)   CMD_PATH=./services/converter/cmd/converter ;; \
        metering)    CMD_PATH=./services/metering/cmd/metering ;; \
        jobs)        CMD_PATH=./services/jobs/cmd/jobs ;; \
        meteringctl) CMD_PATH=./services/metering/cmd/meteringctl ;; \
        *) echo "unknown SERVICE '$SERVICE': use gateway, finance, converter, metering, jobs or meteringctl (or set CMD_PATH)" >&2; exit 1 ;; \
      esac; \
    fi; \
    export GOOS="${TARGETOS:-linux}" GOARCH="${TARGETARCH:-$(go env GOARCH)}"; \
    mkdir -p /out; \
    go build -trimpath \
      -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT} -X main.buildTime=${BUILD_TIME}" \
      -o /out/app "$CMD_PATH"; \
    if [ "$SERVICE" = metering ]; then \
      go build -trimpath \
        -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
        -o /out/meteringctl ./services/metering/cmd/meteringctl; \
    fi

# ---------------------------------------------------------------- final stage
# Static binary on distroless: CA certificates, tzdata and /etc/passwd with the
# nonroot user, and nothing else (no shell, no package manager).
FROM gcr.io/distroless/static-debian12:nonroot

ARG SERVICE=gateway
ARG VERSION=dev
ARG COMMIT=unknown
LABEL org.opencontainers.image.title="ledgerlane-${SERVICE}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}"

COPY --from=build /out/ /usr/local/bin/

# The distroless "nonroot" user, given by number (65532:65532) so Kubernetes'
# runAsNonRoot can verify it without reading /etc/passwd.
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/app"]

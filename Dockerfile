# Images for hecate-api, hecate-mcp and hecate-controller: one build stage, one small
# runtime stage each. Without Docker, `cargo xtask images` assembles the same images
# from the binaries and Debian's packages; xtask's tests keep the two descriptions (and
# the Helm chart's ports) in agreement.
#   docker build --target hecate-api -t hecate-api .
#   docker build --target hecate-mcp -t hecate-mcp .
#   docker build --target hecate-controller -t hecate-controller .
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p hecate-api -p hecate-mcp -p hecate-controller

# The render steps run kustomize and helm: the releases the tests use (pinned in
# tests/src/tools.rs, which checks these lines), built from their published Go modules.
FROM golang:1.26-bookworm AS tools
ARG KUSTOMIZE_VERSION=v5.8.2
ARG HELM_VERSION=v4.3.1
ENV CGO_ENABLED=0 GOTOOLCHAIN=local GOBIN=/tools
RUN go install -trimpath \
        -ldflags "-s -w -X sigs.k8s.io/kustomize/api/provenance.version=${KUSTOMIZE_VERSION}" \
        "sigs.k8s.io/kustomize/kustomize/v5@${KUSTOMIZE_VERSION}" \
    && go install -trimpath \
        -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=${HELM_VERSION} -X helm.sh/helm/v4/internal/version.gitTreeState=clean" \
        "helm.sh/helm/v4/cmd/helm@${HELM_VERSION}"

# Distroless: no shell, no package manager; runs as nonroot (65532). The binaries
# use rustls and bundled time zones, so they need nothing from the image.
FROM gcr.io/distroless/cc-debian12:nonroot AS hecate-api
COPY --from=build /src/target/release/hecate-api /usr/local/bin/hecate-api
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/hecate-api"]

FROM gcr.io/distroless/cc-debian12:nonroot AS hecate-mcp
COPY --from=build /src/target/release/hecate-mcp /usr/local/bin/hecate-mcp
EXPOSE 8085
ENTRYPOINT ["/usr/local/bin/hecate-mcp"]

# The controller drives the git CLI (Beacons' ls-remote, the git steps), so its image
# carries git, ssh and a shell (git runs GIT_SSH_COMMAND with one): Debian slim, still
# non-root, with a passwd entry for that user (ssh refuses to run without one).
# kustomize and helm (the render steps) are on PATH, where --kustomize-path and
# --helm-path find them by default.
FROM debian:bookworm-slim AS hecate-controller
RUN apt-get update \
    && apt-get install -y --no-install-recommends git openssh-client ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --gid 65532 nonroot \
    && useradd --uid 65532 --gid 65532 --home-dir /home/nonroot --create-home --shell /usr/sbin/nologin nonroot
COPY --from=tools /tools/kustomize /tools/helm /usr/local/bin/
USER 65532:65532
COPY --from=build /src/target/release/hecate-controller /usr/local/bin/hecate-controller
EXPOSE 8080 8081
ENTRYPOINT ["/usr/local/bin/hecate-controller"]

# Images for hecate-api, hecate-mcp and hecate-controller: one build stage, one small
# runtime stage each.
#   docker build --target hecate-api -t hecate-api .
#   docker build --target hecate-mcp -t hecate-mcp .
#   docker build --target hecate-controller -t hecate-controller .
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p hecate-api -p hecate-mcp -p hecate-controller

# Distroless: no shell, no package manager; runs as nonroot (65532). The binaries
# use rustls and bundled time zones, so they need nothing from the image.
FROM gcr.io/distroless/cc-debian12:nonroot AS hecate-api
COPY --from=build /src/target/release/hecate-api /usr/local/bin/hecate-api
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/hecate-api"]

FROM gcr.io/distroless/cc-debian12:nonroot AS hecate-mcp
COPY --from=build /src/target/release/hecate-mcp /usr/local/bin/hecate-mcp
ENTRYPOINT ["/usr/local/bin/hecate-mcp"]

# The controller drives the git CLI (Beacons' ls-remote, the git steps), so its image
# carries git and ssh: Debian slim, still non-root.
FROM debian:bookworm-slim AS hecate-controller
RUN apt-get update \
    && apt-get install -y --no-install-recommends git openssh-client ca-certificates \
    && rm -rf /var/lib/apt/lists/*
USER 65532:65532
COPY --from=build /src/target/release/hecate-controller /usr/local/bin/hecate-controller
EXPOSE 8080 8081
ENTRYPOINT ["/usr/local/bin/hecate-controller"]

# The pmauthority image: the static binary of scripts/release on an empty
# base, run as an unprivileged user (65532), its documents in the /data
# volume (SQLite, serve --data /data), healthy while /healthz answers 200.
#
#   ./scripts/release --targets "linux/amd64 linux/arm64"
#   docker build -t pmauthority .
#   docker run -p 8080:8080 -v pmauthority-data:/data \
#     -v /etc/pmauthority/jwt.key:/run/secrets/jwt.key:ro \
#     pmauthority --jwt-secret-file /run/secrets/jwt.key --allowed-host docs.example.com
#
# The arguments after the image name are more flags of `pmauthority
# serve --addr :8080 --data /data` (a later flag overrides one of those).
# The server refuses to start without an auth flag (docs/auth.md) unless
# given --insecure-no-auth. Another command: docker run --entrypoint
# /pmauthority pmauthority version.
#
# The build context is dist/ as ./scripts/release leaves it (.dockerignore
# sends nothing else); --build-arg VERSION=V takes the binaries of
# ./scripts/release --version V. podman: podman build --format docker (the
# OCI format has no HEALTHCHECK). There are no CA certificates in the
# image: for --jwks-url, --auth-webhook or webhooks over https, mount the
# host's (-v /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro).
FROM scratch
# Set by the builder from --platform (linux/amd64, linux/arm64).
ARG TARGETARCH
ARG VERSION=dev
COPY dist/pmauthority-${VERSION}-linux-${TARGETARCH} /pmauthority
# Empty directories owned by the user: the volume's mount point (a new
# volume takes its owner) and SQLite's temporary files.
COPY --chown=65532:65532 dist/empty/ /data/
COPY --chown=65532:65532 dist/empty/ /tmp/
USER 65532:65532
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["/pmauthority", "healthcheck", "--url", "http://127.0.0.1:8080/healthz"]
ENTRYPOINT ["/pmauthority", "serve", "--addr", ":8080", "--data", "/data"]

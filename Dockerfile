# syntax=docker/dockerfile:1
# apply-hygiene: the webhook server (/apply-hygiene, the entrypoint) and the
# kubectl plugin (/kubectl-hygiene), static binaries on distroless.
# CI builds the same binaries with the same flags (make build), and also
# kubectl_complete-hygiene, the plugin's shell completion for workstations,
# which the image does not need.

FROM golang:1.26 AS build
WORKDIR /src
# Dependencies first, so source edits keep the module cache layer.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG TARGETOS=linux
ARG TARGETARCH
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags "-s -w" -o /out/ ./cmd/apply-hygiene ./cmd/kubectl-hygiene

FROM gcr.io/distroless/static:nonroot
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="apply-hygiene" \
      org.opencontainers.image.description="Admission webhook that keeps kubectl apply's last-applied configuration honest" \
      org.opencontainers.image.source="https://github.com/apply-hygiene/apply-hygiene" \
      org.opencontainers.image.url="https://github.com/apply-hygiene/apply-hygiene" \
      org.opencontainers.image.documentation="https://github.com/apply-hygiene/apply-hygiene/blob/main/docs/install.md" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY --from=build /out/apply-hygiene /apply-hygiene
COPY --from=build /out/kubectl-hygiene /kubectl-hygiene
USER 65532:65532
EXPOSE 9443 8080 8081
ENTRYPOINT ["/apply-hygiene"]

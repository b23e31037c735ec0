# syntax=docker/dockerfile:1
# The sidecarset admission webhook and upgrade controller, one process: `sidecarset serve`.
#   docker build -t sidecarset:0.1.0 .
# manifests/ runs it with a mounted serving certificate (SIDECARSET_CERT / SIDECARSET_KEY).

# Pinned by digest (the multi-arch index of node:24-bookworm-slim), so that a rebuild gets the same
# base until the digest is bumped on purpose: `docker buildx imagetools inspect node:24-bookworm-slim`
# prints the current one (or let Renovate/Dependabot bump it). Override with --build-arg NODE_IMAGE=.
# This one is Node 24.19.0 on bookworm, built 2026-08-25, as the official images' public record
# lists it (github.com/docker-library/repo-info, repos/node/remote/24-bookworm-slim.md, e2e9704).
ARG NODE_IMAGE=node:24-bookworm-slim@sha256:a9f5f7c91a432850b2a8a7797adf5eadb6c733ceed61167806cee7ea7fbc29df

# ---- build: all dependencies, bundle the TypeScript sources and the Kubernetes client into dist/ ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would compile before the sources are here; the build runs below.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/bundle.ts ./scripts/
COPY src ./src
# esbuild (scripts/bundle.ts, docs/adr/0029-bundled-kubernetes-client.md); the other packages stay
# imports from the production node_modules copied below.
RUN npm run build

# ---- deps: production dependencies only, installed with npm here so the runtime has no npm ----
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# No devDependencies (typescript, tsx, eslint, ...) and no lifecycle scripts (prepare needs tsc).
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# ---- runtime ----
# Node 24 LTS on Debian bookworm slim rather than distroless nodejs24: the image has `node` on PATH
# (the entrypoint below), a shell and coreutils for `kubectl exec` debugging and a preStop `sleep`,
# and the same Debian base as the build stage, so native modules (none today) would match. The
# package managers the Node image ships (npm, npx, corepack, yarn) are removed: the webhook never
# runs them, and they are most of what scanners report against the image.
FROM ${NODE_IMAGE} AS runtime
# Build with: --build-arg VERSION=$(node -p "require('./package.json').version")
#   --build-arg REVISION=$(git rev-parse HEAD) --build-arg CREATED=$(date -u +%Y-%m-%dT%H:%M:%SZ)
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=unknown
ARG NODE_IMAGE
LABEL org.opencontainers.image.title="sidecarset" \
      org.opencontainers.image.description="SidecarSet (apps.kruise.io) sidecar injection webhook and in-place upgrade controller" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.documentation="docs/deploy.md" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
      /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
      /usr/local/bin/yarn /usr/local/bin/yarnpkg /opt/yarn-*
ENV NODE_ENV=production
WORKDIR /app
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY bin ./bin
# Nothing is written at run time, so the root filesystem can be read-only: the serving certificate
# is always given (--cert/--key, or SIDECARSET_CERT/SIDECARSET_KEY from a mounted Secret); the
# development certificate, which would be written under certs/dev/, is for local runs only.
# Numeric user (the image's `node` user) so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 9443 8080
# V8's young generation capped at 4 MiB a semi-space: by default Node 24 lets it grow to 32 MiB and
# more, which nearly doubled the resident set for no measurable CPU (docs/adr/0027-young-generation-cap.md).
# Without the flag serve would start itself again with it (docs/adr/0030-heap-sized-by-the-process.md).
ENTRYPOINT ["node", "--max-semi-space-size=4", "/app/bin/sidecarset.js", "serve"]

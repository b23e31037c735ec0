# syntax=docker/dockerfile:1
# The sidecarset admission webhook and upgrade controller, one process: `sidecarset serve`.
#   docker build -t sidecarset:0.1.0 .
# manifests/ runs it with a mounted serving certificate (SIDECARSET_CERT / SIDECARSET_KEY).

ARG NODE_IMAGE=node:24-bookworm-slim

# ---- build: all dependencies, compile TypeScript to dist/ ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would compile before the sources are here; the build runs below.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# ---- runtime: production dependencies only ----
# Node 24 LTS on Debian bookworm slim rather than distroless nodejs24: the image has `node` on PATH
# (the entrypoint below), a shell and coreutils for `kubectl exec` debugging and a preStop `sleep`,
# and the same Debian base as the build stage, so native modules (none today) would match. The
# price is a larger image with more packages for scanners to report.
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# No devDependencies (typescript, tsx, eslint, ...) and no lifecycle scripts (prepare needs tsc).
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin
# Nothing is written at run time, so the root filesystem can be read-only: the serving certificate
# is always given (--cert/--key, or SIDECARSET_CERT/SIDECARSET_KEY from a mounted Secret); the
# development certificate, which would be written under certs/dev/, is for local runs only.
# Numeric user (the image's `node` user) so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 9443 8080
ENTRYPOINT ["node", "/app/bin/sidecarset.js", "serve"]

# syntax=docker/dockerfile:1
# One image for every role: `docker run IMAGE <role> --config FILE` (ENTRYPOINT is the filterd CLI).
# Without arguments it runs the local categorization service, configured by environment
# (docs/container.md). Build with scripts/image.
# Debian slim, not Alpine: lmdb and uWebSockets.js ship glibc builds. Node 24: the active LTS (uWebSockets.js 20.30
# has no build for it, nor for 22: every HTTP role serves with node:http, after one warning line).

FROM node:24-bookworm-slim AS build
WORKDIR /app
# The batched UDP addon (native/udp) is compiled by `npm run build` with node-gyp: C compiler,
# make, python3. The image's node ships its headers, so the build needs no download.
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev make python3 \
    && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build && test -f native/udp/build/Release/filterd_udp.node

FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force

FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    FILTERD_LISTEN=0.0.0.0:80 \
    FILTERD_DB=/var/lib/filterd/local
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/native/udp/build/Release/filterd_udp.node ./native/udp/build/Release/filterd_udp.node
COPY package.json ./
COPY conf ./conf
# What the roles read beside dist/ at run time: the default block page templates, the API's
# OpenAPI document, and the container's default config.
COPY blockpage/templates ./blockpage/templates
COPY docs/openapi.yaml ./docs/openapi.yaml
COPY local/container.yaml ./local/container.yaml
# The spec's folders, writable by the roles' user: data, pid files, log files.
RUN mkdir -p /var/lib/filterd/local /run/filterd /var/log/filterd && chown -R node:node /var/lib/filterd /run/filterd /var/log/filterd
# The image's `node` user (uid 1000). Ports 53 and 80 are bound thanks to the run option
# --sysctl net.ipv4.ip_unprivileged_port_start=0 (docs/container.md, "Port 80").
USER node
VOLUME /var/lib/filterd
EXPOSE 80
# The health check probes the local service; run other roles with --no-healthcheck, or your own
# --health-cmd (docs/container.md, "Other roles").
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "dist/local/healthcheck.js"]
ENTRYPOINT ["node", "dist/tools/filterd.js"]
CMD ["local", "--config", "/app/local/container.yaml"]

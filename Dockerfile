# syntax=docker/dockerfile:1
# The one image for every role of Observatory: the operator (what the Helm chart runs), the web and
# worker containers (`web`, `worker`) and the Jobs the operator creates (`migrate`, `backfill`,
# `preflight`, `producers`, `cleanup`, `backup`, `restore`, `create-project`). A role is the container's first argument
# to the ENTRYPOINT, the observatory CLI, which Node 24 runs from the TypeScript sources (type
# stripping, no compile step). The operator alone runs from a bundle built here,
# operator/dist/operator.mjs (scripts/build-operator.ts): one tree-shaken ES module instead of
# every module of @kubernetes/client-node, about 45 MB (a third) less resident memory for a process
# that runs all the time; the chart's operator container runs it with `node operator/dist/operator.mjs`
# (`observatory operator` from the sources still works and behaves the same).
#
#   docker build -t observatory:0.1.0 .
#
# chdb (the embedded ClickHouse engine) is used only by `dev`, `analytics-server` and chdb:// URLs;
# the roles a cluster runs talk to ClickHouse over HTTP and never load it. Its ~540 MB native
# library is an optional dependency of chdb (@chdb/lib-linux-x64-gnu), so `--omit=optional` keeps it
# out of the image; the only other optional package is pg's pg-cloudflare, unused on Node.

ARG NODE_IMAGE=node:24.21.0-bookworm-slim

# Production dependencies only, at the lockfile's versions. `npm install` rather than `npm ci`: the
# lockfile is written where only Linux packages are served, and `npm ci` refuses a lockfile that
# lacks other platforms' optional packages.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --omit=dev --omit=optional --no-audit --no-fund

# The two bundles: the web UI's (server/app/ui, React + Vite) and the operator's (rolldown), built with
# the full dependency tree, dev and optional included (the bundlers and the CSS minifier are native
# optional packages), in a stage of its own so none of it reaches the image; only server/app/ui/dist
# and operator/dist/operator.mjs do. The UI is built first, so a source edit elsewhere reuses its layer.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
RUN npm install --no-audit --no-fund --ignore-scripts
COPY scripts/build-ui.ts ./scripts/
COPY server/app/ui ./server/app/ui
# The server modules the UI bundles too (SHARED_MODULES in scripts/build-ui.ts).
COPY server/contract/duration.ts ./server/contract/
COPY server/features/dashboards/catalog.ts ./server/features/dashboards/
COPY server/features/reads/aggregations.ts ./server/features/reads/
RUN node scripts/build-ui.ts
COPY scripts/build-operator.ts ./scripts/
COPY server ./server
COPY operator ./operator
RUN node scripts/build-operator.ts

# What runs: the sources, the manifest, the production node_modules (which the operator's bundle
# does not need; the other roles do) and the two bundles. Everything belongs to root and is only
# readable by the user the process runs as.
FROM ${NODE_IMAGE}
# pg_dump and pg_restore for the backup and restore Jobs: PostgreSQL 15's client, Debian bookworm's
# own, the major the deployments run (a pg_dump refuses a server newer than itself). First, so a
# source edit reuses its layer.
RUN apt-get update \
 && apt-get install -y --no-install-recommends postgresql-client-15 \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt
ENV NODE_ENV=production \
    HOME=/tmp
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json ./
COPY server ./server
COPY operator ./operator
COPY --from=build /app/server/app/ui/dist ./server/app/ui/dist
COPY --from=build /app/operator/dist/operator.mjs ./operator/dist/operator.mjs
USER 10001:10001
# web 3000, worker 3030, operator metrics 8080 and health 8081.
EXPOSE 3000 3030 8080 8081
ENTRYPOINT ["node", "server/bin/observatory.ts"]

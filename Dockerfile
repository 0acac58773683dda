# syntax=docker/dockerfile:1
# The one image for every role of Observatory: the operator (`observatory operator`, what the Helm
# chart runs), the web and worker containers (`web`, `worker`) and the Jobs the operator creates
# (`migrate`, `backfill`, `preflight`, `producers`, `cleanup`, `create-project`). The role is the
# container's first argument; Node 24 runs the TypeScript sources directly (type stripping), so
# there is no compile step.
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

# The web UI's bundle (server/ui, React + Vite): built with the full dependency tree, dev and
# optional included (Vite's bundler and CSS minifier are native optional packages), in a stage of
# its own so none of it reaches the image; only server/ui/dist does.
FROM ${NODE_IMAGE} AS ui
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
RUN npm install --no-audit --no-fund --ignore-scripts
COPY scripts/build-ui.ts ./scripts/
COPY server/ui ./server/ui
RUN node scripts/build-ui.ts

# What runs: the sources, the manifest and the production node_modules. Everything belongs to root
# and is only readable by the user the process runs as.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOME=/tmp
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json ./
COPY server ./server
COPY operator ./operator
COPY --from=ui /app/server/ui/dist ./server/ui/dist
USER 10001:10001
# web 3000, worker 3030, operator metrics 8080 and health 8081.
EXPOSE 3000 3030 8080 8081
ENTRYPOINT ["node", "server/bin/observatory.ts"]

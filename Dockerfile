# Multi-stage build of the order-status service (used twice by docker-compose.yml).
# The Node base image; CI builds with a stand-in made offline (test/stack/stand-in-images).
ARG NODE_IMAGE=node:26-bookworm-slim

# 1. deps: the exact dependency tree of the lockfile.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

# 2. prod-deps: the production dependencies alone; like deps, rebuilt only when the
# lockfile changes, so a source change costs the bundle and nothing else.
FROM deps AS prod-deps
RUN npm prune --omit=dev

# 3. build: Rspack bundle of apps/order-status (with libs/*) into dist/.
FROM deps AS build
COPY . .
RUN npm run build

# 4. runtime: production dependencies, the bundle and the proto; runs as `node`.
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/proto ./proto
# The demo page and the client bundles it serves (found above dist/ at start).
COPY --from=build /app/apps/order-status/public ./apps/order-status/public
COPY --from=build /app/package.json ./
# The development certificate is written here (a volume shared with nginx).
RUN mkdir /certs && chown node:node /certs
USER node
EXPOSE 3001 3002 50061 50062
CMD ["node", "dist/apps/order-status/main.js"]

# The load test image keeps the dev tools (tsx) and the sources of the build stage.
FROM build AS loadtest

# Multi-stage build of the order-status service (used twice by docker-compose.yml).
# 1. deps: the exact dependency tree of the lockfile.
FROM node:26-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

# 2. build: Rspack bundle of apps/order-status (with libs/*) into dist/.
FROM deps AS build
COPY . .
RUN npm run build && npm prune --omit=dev

# 3. runtime: production dependencies, the bundle and the proto; runs as `node`.
FROM node:26-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/proto ./proto
COPY --from=build /app/package.json ./
# The development certificate is written here (a volume shared with nginx).
RUN mkdir /certs && chown node:node /certs
USER node
EXPOSE 3001 3002 50061 50062
CMD ["node", "dist/apps/order-status/main.js"]

# The load test image keeps the dev tools (tsx) and the sources.
FROM build AS loadtest
RUN npm ci --no-audit --no-fund

# The chemxref API, for docker-compose.yml (the engine is the official Elasticsearch image).
# Two stages: the build compiles the TypeScript (`npm run build` → dist/); the runtime holds the
# compiled code, the production dependencies and nothing else, and runs as the unprivileged `node`.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY loaders ./loaders
COPY scripts ./scripts
COPY mappings ./mappings
COPY kibana ./kibana
RUN npm run build

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
COPY patches ./patches
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# In a container the API must be reachable from outside it; docker-compose.yml publishes the port on 127.0.0.1 only.
ENV PORT=8080 HOST=0.0.0.0
EXPOSE 8080
USER node
# Ready: the engine answers and the indices exist (the image has no curl; node asks).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself is PID 1's command (not npm, not a shell), so the SIGTERM of `docker stop` reaches the
# server, which drains its requests and exits. Loads in the container:
# `node --max-semi-space-size=8 --wasm-tiering-budget=130000000 dist/loaders/cli.js <command> ...`;
# the Kibana saved objects: `node dist/src/kibana/cli.js` (docker-compose.yml's kibana-setup).
CMD ["node", "dist/src/server.js"]

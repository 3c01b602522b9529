# The chemxref API, for docker-compose.yml. The engine is the official Elasticsearch image.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
RUN npm ci --omit=dev --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY loaders ./loaders
COPY mappings ./mappings
# In a container the API must be reachable from outside it; docker-compose.yml publishes the port on 127.0.0.1 only.
ENV PORT=8080 HOST=0.0.0.0
EXPOSE 8080
USER node
# node itself is PID 1's command (not npm, not a shell), so the SIGTERM of `docker stop` reaches the
# server, which drains its requests and exits.
CMD ["node", "--import", "tsx", "src/server.ts"]

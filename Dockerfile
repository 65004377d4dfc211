# tea_agent_mini in a slim container: the wheel from dist/ plus its six runtime dependencies.
#
#   python build_mini.py                       # makes dist/tea_agent_mini-<version>-py3-none-any.whl
#   docker build -t tea-agent-mini .
#   docker run -d -p 8080:8080 -v tea-data:/data \
#       -e TEA_AGENT_API_KEY=change-me \
#       -e OPENAI_BASE_URL=http://llm:8000/v1 -e TEA_AGENT_MODEL=qwen3 -e OPENAI_API_KEY=sk-... \
#       tea-agent-mini
#
# Data (config.yaml, chat.db, tools/, skills/, the agent's workspace/) lives in the /data volume.
# The server listens on 0.0.0.0 and refuses to start there without an API key: set
# TEA_AGENT_API_KEY, or server.api_key in /data/config.yaml. A bind-mounted host directory must
# be writable by uid 10001. --build-arg EXTRAS=postgres adds pg8000, for a store.url naming a
# PostgreSQL database (several instances: scripts/deploy/compose.postgres.yaml).
FROM python:3.12-slim

ARG EXTRAS=""

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    TEA_AGENT_HOME=/data

# .dockerignore lets only dist/*.whl into the context; exactly one wheel is expected there.
COPY dist/ /tmp/dist/
RUN set -eu; \
    wheels="$(ls /tmp/dist/tea_agent_mini-*-py3-none-any.whl)"; \
    if [ "$(printf '%s\n' "$wheels" | wc -l)" -ne 1 ]; then \
        echo "expected exactly one tea_agent_mini wheel in dist/, found: $wheels" >&2; exit 1; \
    fi; \
    pip install --no-cache-dir "${wheels}${EXTRAS:+[$EXTRAS]}"; \
    rm -rf /tmp/dist; \
    useradd --system --uid 10001 --user-group --home-dir /data --no-create-home \
        --shell /usr/sbin/nologin tea; \
    mkdir -p /data/workspace; \
    chown -R tea:tea /data

USER tea
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8080

HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; r = urllib.request.urlopen('http://127.0.0.1:8080/health', timeout=4); sys.exit(0 if r.status == 200 else 1)"]

# TEA_AGENT_API_KEY (or server.api_key in /data/config.yaml) is the access token; without one the
# server refuses to listen on 0.0.0.0. The volume may be mounted empty, hence the mkdir.
CMD ["sh", "-c", "mkdir -p \"$TEA_AGENT_HOME/workspace\" && exec tea-agent-mini serve --host 0.0.0.0 --port 8080 --workspace \"$TEA_AGENT_HOME/workspace\""]

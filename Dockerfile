# Container image of `serve` (Docker or Podman): the project on Deno's
# official image, run as that image's non-root user `deno`, serving the
# bundle mounted read-only at /bundle on 0.0.0.0:8010 with the access token
# read from /run/secrets/token, under the README's locked-down permissions
# (tests/deploy_test.ts checks them against the README and runs this
# command locally).
#
#   docker build -t decision-tables .
#   docker run --rm -p 8010:8010 -v "$PWD/my-bundle:/bundle:ro" \
#     -v "$PWD/token:/run/secrets/token:ro" decision-tables
#
# The token file must be readable by the image's user (uid 1993), for
# example with mode 0444, as compose secrets are.
#
# To keep a feedback log and reload when the bundle folder is replaced
# (--feedback-log, --watch: it watches the folder holding the bundle, so
# that folder is mounted and readable), give the permissions they need in
# place of the entry point's (tests/deploy_test.ts runs this command too):
#
#   docker run --rm -p 8010:8010 -v "$PWD/bundles:/bundles:ro" \
#     -v "$PWD/logs:/logs" -v "$PWD/token:/run/secrets/token:ro" \
#     --entrypoint deno decision-tables run --cached-only --frozen --v8-flags=--max-semi-space-size=4,--expose-gc --allow-net=0.0.0.0:8010 --allow-read=/bundles,/run/secrets/token,/logs/feedback.jsonl,/logs/feedback.refused.jsonl --allow-write=/logs/feedback.jsonl,/logs/feedback.refused.jsonl --allow-env=SERVICE_PROXY_TOKEN main.ts serve --bundle /bundles/current --host 0.0.0.0 --port 8010 --token-file /run/secrets/token --feedback-log /logs/feedback.jsonl --watch
#
# (the logs folder writable by uid 1993; with --watch, retrain with
# train --out bundles/current, which swaps the link bundles/current
# points by in one rename).
FROM denoland/deno:2.9.6

WORKDIR /app
# What serve loads, and nothing else; deno.lock pins every package.
COPY deno.json deno.lock main.ts ./
COPY src/ src/
COPY static/ static/

USER deno
# Fill the Deno cache now: at run time nothing is downloaded (--cached-only).
RUN deno cache --frozen main.ts

EXPOSE 8010
ENTRYPOINT ["deno", "run", "--cached-only", "--frozen", "--v8-flags=--max-semi-space-size=4,--expose-gc", "--allow-net=0.0.0.0:8010", "--allow-read=/bundle,/run/secrets/token", "--allow-env=SERVICE_PROXY_TOKEN", "main.ts"]
CMD ["serve", "--bundle", "/bundle", "--host", "0.0.0.0", "--port", "8010", "--token-file", "/run/secrets/token"]

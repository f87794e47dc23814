#!/bin/sh
# What the official redis image's entrypoint does with a command.
set -e
# Options only (`--port 6390`) or a config file: they are redis-server's.
if [ "${1#-}" != "$1" ] || [ "${1%.conf}" != "$1" ]; then
  set -- redis-server "$@"
fi
if [ "$1" = 'redis-server' ]; then
  # The official image builds Redis with protected mode off (a container is reached from
  # other containers, never on loopback); Debian's binary has it on without a config file.
  case " $* " in *' --protected-mode '*) ;; *) set -- "$@" --protected-mode no ;; esac
  # Started as root: own the data folder and drop to the redis user.
  if [ "$(id -u)" = '0' ]; then
    find . \! -user redis -exec chown redis '{}' +
    exec setpriv --reuid=redis --regid=redis --init-groups "$@"
  fi
fi
exec "$@"

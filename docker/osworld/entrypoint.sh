#!/bin/bash
# vdesk osworld desktop: the home (a fresh tmpfs per desktop) gets the reference machine's
# settings first — VLC's HTTP interface, an empty keyring — then the apps desktop starts.
set -euo pipefail
cp -rn /etc/vdesk-osworld-home/. "$HOME"/
exec /usr/local/bin/vdesk-apps-entrypoint "$@"

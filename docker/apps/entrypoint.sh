#!/bin/bash
# vdesk apps desktop: a session D-Bus, then the lean desktop's supervisor, with the session
# (wallpaper, accessibility bus, taskbar) started beside it once the window manager runs.
set -euo pipefail
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
dbus-daemon --session --fork --nopidfile --address="$DBUS_SESSION_BUS_ADDRESS"
/usr/local/bin/vdesk-session &
exec /usr/local/bin/vdesk-entrypoint "$@"

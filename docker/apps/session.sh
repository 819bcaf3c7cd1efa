#!/bin/bash
# The apps desktop's session, started by its entrypoint beside the X server and window manager:
# a plain wallpaper, the AT-SPI bus, the taskbar (restarted if it dies). When the taskbar is
# shown it writes $XDG_RUNTIME_DIR/session-ready, which `Desktop.up` waits for.
set -uo pipefail
log() { echo "vdesk-session: $*" >&2; }

for _ in $(seq 1 3000); do   # 30 s: the supervisor gives up on X sooner than that
  xprop -root _NET_SUPPORTING_WM_CHECK 2>/dev/null | grep -q "window id" && break
  sleep 0.01
done

xsetroot -solid '#3b6e8f'
/usr/libexec/at-spi-bus-launcher --launch-immediately >/dev/null 2>&1 &
gsettings set org.gnome.desktop.interface toolkit-accessibility true 2>/dev/null || true

( while true; do tint2 >/dev/null 2>&1; sleep 1; done ) &
for _ in $(seq 1 1000); do
  if xdotool search --onlyvisible --class tint2 >/dev/null 2>&1; then
    touch "$XDG_RUNTIME_DIR/session-ready"; break
  fi
  sleep 0.01
done
[ -e "$XDG_RUNTIME_DIR/session-ready" ] || log "the taskbar did not show within 10 s"
wait

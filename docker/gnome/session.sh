#!/bin/bash
# The osworld desktop's session (replaces the apps image's vdesk-session), started by the apps
# entrypoint beside the X server and GNOME Shell: the accessibility bus, GNOME's settings daemons
# for keys (ctrl+alt+t opens a terminal through GNOME's own binding) and for the toolkits'
# settings (Yaru and the Ubuntu font in every GTK program, as gsettings say). Once the shell
# has drawn its desktop (the desktop icons are drawn) and the accessibility bus is
# announced, it writes $XDG_RUNTIME_DIR/session-ready, which `Desktop.up` waits for.
# VDESK_FAKETIME works as in the apps session (see there).
set -uo pipefail
log() { echo "vdesk-session: $*" >&2; }

. /usr/local/lib/vdesk/clock.sh  # the desktop's clock (VDESK_FAKETIME)

export DBUS_SYSTEM_BUS_ADDRESS=unix:path=/tmp/vdesk/system-bus  # see vdesk-gnome-shell
# These need the X server (the accessibility bus announces itself on its root window): wait for
# the window manager, which starts once X answers.
for _ in $(seq 1 3000); do  # 30 s: the supervisor gives up on X sooner than that
  [[ "$(xprop -root _NET_SUPPORTING_WM_CHECK 2>/dev/null)" == *"window id"* ]] && break
  sleep 0.01
done
/usr/libexec/at-spi-bus-launcher --launch-immediately >/dev/null 2>&1 &
/usr/libexec/gsd-xsettings >/dev/null 2>&1 &
/usr/libexec/gsd-media-keys >/dev/null 2>&1 &

for _ in $(seq 1 3000); do  # 30 s: the shell starts in 1-3 s on an idle machine
  if xdotool search --onlyvisible --classname '^gjs$' >/dev/null 2>&1 \
      && [[ "$(xprop -root AT_SPI_BUS 2>/dev/null)" == *" = "* ]]; then
    python3 /usr/local/lib/vdesk/icons-drawn.py 20 || log "the desktop icons were not drawn within 20 s"
    touch "$XDG_RUNTIME_DIR/session-ready"; break
  fi
  sleep 0.01
done
[ -e "$XDG_RUNTIME_DIR/session-ready" ] || log "GNOME Shell's desktop or the accessibility bus did not show within 30 s"
wait

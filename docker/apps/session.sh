#!/bin/bash
# The apps desktop's session, started by its entrypoint beside the X server and window manager:
# a plain wallpaper, the AT-SPI bus, the taskbar (restarted if it dies). Once the taskbar is
# shown and the accessibility bus announced, it writes $XDG_RUNTIME_DIR/session-ready, which
# `Desktop.up` waits for: the first frame an agent sees has the wallpaper and the taskbar.
# VDESK_FAKETIME (an offset in seconds, "+N" or "-N", from `Desktop.up(clock=...)`) gives the
# session's programs, and what is started from the taskbar, the desktop's clock.
# Everything here is on the path of `Desktop.up`: start what can run side by side at once, and
# start no process that is not needed (toolkit-accessibility is a schema default of the image,
# not a `gsettings set` that would start dconf on every desktop).
set -uo pipefail
log() { echo "vdesk-session: $*" >&2; }

. /usr/local/lib/vdesk/clock.sh  # the desktop's clock (VDESK_FAKETIME)

# tint2 looks each launcher's icon up through the icon themes (some thousand file tests, about
# 0.1 s) unless its cache names the file; the image ships that cache (an entry whose file is
# gone is looked up as usual).
mkdir -p "$HOME/.cache/tint2" && cp /etc/xdg/tint2/icon.cache "$HOME/.cache/tint2/icon.cache"

# Wait for the window manager's desktops, not only for its check window: openbox sets
# _NET_NUMBER_OF_DESKTOPS a little after _NET_SUPPORTING_WM_CHECK, and a tint2 started in
# between finds no desktops and sleeps a whole second before it looks again.
for _ in $(seq 1 3000); do   # 30 s: the supervisor gives up on X sooner than that
  [[ "$(xprop -root _NET_NUMBER_OF_DESKTOPS 2>/dev/null)" == *" = "* ]] && break
  sleep 0.01
done

( while true; do tint2 >/dev/null 2>&1; sleep 1; done ) &
xsetroot -solid '#3b6e8f'
/usr/libexec/at-spi-bus-launcher --launch-immediately >/dev/null 2>&1 &

# Ready once the taskbar is shown and the launcher has put the accessibility bus's address on
# the root window (AT_SPI_BUS), where accessibility clients look for it.
for _ in $(seq 1 1000); do
  if xdotool search --onlyvisible --class tint2 >/dev/null 2>&1 \
      && [[ "$(xprop -root AT_SPI_BUS 2>/dev/null)" == *" = "* ]]; then
    touch "$XDG_RUNTIME_DIR/session-ready"; break
  fi
  sleep 0.01
done
[ -e "$XDG_RUNTIME_DIR/session-ready" ] || log "the taskbar or the accessibility bus did not show within 10 s"
wait

#!/bin/bash
# The osworld desktop's session (replaces the apps image's vdesk-session), started by the apps
# entrypoint beside the X server and GNOME Shell: the accessibility bus, GNOME's settings daemons
# for keys (ctrl+alt+t opens a terminal through GNOME's own binding) and for the toolkits'
# settings (Yaru and the Ubuntu font in every GTK program, as gsettings say). Once the shell
# has drawn its desktop (the desktop icons are drawn), the accessibility bus is announced and
# the shell holds the keys gsd-media-keys asked it for, it writes $XDG_RUNTIME_DIR/session-ready,
# which `Desktop.up` waits for: an agent's first ctrl+alt+t, pressed the moment it gets its
# first frame, opens a terminal (on a loaded machine 3 desktops in 8 lost it before).
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
# gsd-media-keys asks the shell for its keys (ctrl+alt+t) once the shell is up: started earlier, its
# first request can meet the shell's bus name before its object ("Object does not exist at path
# /org/gnome/Shell") and wait a second to retry. It tells that the shell took its keys only in a debug message
# ("Grab call completed!", also printed before a retry it then announces): mark-lines marks the
# moment and drops the rest of its output.
KEYS_HELD="$XDG_RUNTIME_DIR/keys-held"

# Ready once the shell's start-up is complete (before, it takes no keys), its desktop (DING's
# window) shows and the accessibility bus is announced; then, once the desktop icons are drawn
# and the shell holds gsd-media-keys' keys. Four GNOME desktops starting at once on two cores
# take up to a minute: the bounds are generous, and the caller's timeout is the one that counts.
shell_up() {
  [ -e "$XDG_RUNTIME_DIR/shell-started" ] && xdotool search --onlyvisible --classname '^gjs$' >/dev/null 2>&1 \
    && [[ "$(xprop -root AT_SPI_BUS 2>/dev/null)" == *" = "* ]]
}
keys_held() { [ -e "$KEYS_HELD" ]; }
# Right after its start-up the shell still reloads its keymap and grabs its keys again, and a
# key pressed meanwhile is lost (1 desktop in 12 at a load of 8): the shell at rest (under 10 %
# of a core for 0.3 s) has done that.
shell_cpu_ticks() { local f; read -ra f < "/proc/$1/stat"; echo $(( f[13] + f[14] )); }
shell_at_rest() {
  local pid before; pid=$(pgrep -xo gnome-shell) || return 1
  before=$(shell_cpu_ticks "$pid"); sleep 0.3
  (( $(shell_cpu_ticks "$pid") - before <= 3 ))
}
wait_until() {  # SECONDS WHAT TEST: TEST every 10 ms until it holds, or say WHAT did not happen
  local bound=$1 what=$2; shift 2
  local deadline=$((SECONDS + bound))
  until "$@"; do
    (( SECONDS < deadline )) || { log "$what within $bound s"; return 1; }
    sleep 0.01
  done
}
if wait_until 120 "GNOME Shell's start-up, its desktop or the accessibility bus did not show" shell_up; then
  G_MESSAGES_DEBUG=media-keys-plugin /usr/libexec/gsd-media-keys 2>&1 \
    | /usr/local/lib/vdesk/mark-lines "$KEYS_HELD" "Grab call completed!" "Failed to grab accelerators:" &
  python3 /usr/local/lib/vdesk/icons-drawn.py 20 || log "the desktop icons were not drawn within 20 s"
  wait_until 20 "GNOME Shell did not take gsd-media-keys' keys (ctrl+alt+t)" keys_held
  wait_until 10 "GNOME Shell did not come to rest" shell_at_rest
  touch "$XDG_RUNTIME_DIR/session-ready"
fi
wait

#!/bin/bash
# vdesk desktop supervisor: Xvnc (an X server with its VNC server built in) -> openbox.
#
# Runs as the unprivileged desktop user under tini. It restarts the window manager when it
# dies, exits (stopping the container) when the X server dies, and
# stops the desktop when its time-to-live runs out. Configuration comes from environment
# variables only; nothing here is evaluated as shell code.
set -euo pipefail

: "${VDESK_WIDTH:=1280}" "${VDESK_HEIGHT:=800}" "${VDESK_DEPTH:=24}" "${VDESK_DPI:=96}"
: "${VDESK_EXPIRES_AT:=0}" "${VDESK_VNC_PASSWORD:=}" "${VDESK_LEASED:=0}" "${VDESK_LEASE_GRACE:=15}"
display_number=0
export DISPLAY=":${display_number}"
state_dir=/tmp/vdesk
log() { echo "vdesk-entrypoint: $*" >&2; }

for value in "$VDESK_WIDTH" "$VDESK_HEIGHT" "$VDESK_DEPTH" "$VDESK_DPI" "$VDESK_EXPIRES_AT" "$VDESK_LEASE_GRACE"; do
  [[ "$value" =~ ^[0-9]+$ ]] || { log "not a whole number: '$value'"; exit 2; }
done
if [ -z "$VDESK_VNC_PASSWORD" ]; then
  log "VDESK_VNC_PASSWORD is empty: refusing to serve VNC without a password"; exit 2
fi
# VNC authentication uses only a password's first 8 characters: a longer one would be cut
# without a word, and the viewer's longer password would then be refused.
if [ "${#VDESK_VNC_PASSWORD}" -gt 8 ]; then
  log "VDESK_VNC_PASSWORD has ${#VDESK_VNC_PASSWORD} characters: VNC uses at most 8; choose one of 8 or fewer"; exit 2
fi

# A desktop that was stopped and started again finds the previous X server's lock files.
rm -f "/tmp/.X${display_number}-lock" "/tmp/.X11-unix/X${display_number}"
mkdir -p /tmp/.X11-unix "$state_dir" && chmod 1777 /tmp/.X11-unix 2>/dev/null || true
chmod 700 "$state_dir"
umask 077
# The plain password is what `Desktop.attach` reads back (only this user can); Xvnc reads
# VNC's own obfuscated form.
printf '%s\n' "$VDESK_VNC_PASSWORD" > "$state_dir/vnc-password"
# A second, view-only password (random per desktop): Xvnc drops the keys and pointer events of
# a viewer that gave it. `vdesk view` hands this one out unless asked for control.
printf '%s\n' "$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')" > "$state_dir/vnc-view-password"
cat "$state_dir/vnc-password" "$state_dir/vnc-view-password" | vncpasswd -f > "$state_dir/vnc-password.rfb"
unset VDESK_VNC_PASSWORD

children=()
stop_all() {
  trap - TERM INT
  for pid in "${children[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  exit "${1:-0}"
}
trap 'stop_all 0' TERM INT

# The X server is also the VNC server, so it knows every change as it is drawn: no polling,
# and an idle desktop costs no CPU.
# -BlacklistThreshold: every VNC client arrives from 127.0.0.1 (the exec tunnel or the
# loopback-only published port), so blacklisting a host after failed passwords would only let a
# wrong guesser lock out the desktop's owner.
# -AcceptSetDesktopSize=0: a viewer must not resize the screen an agent's coordinates refer to.
# -nocursor: frames never show the pointer (Xvnc would otherwise paint it into them whenever a
# program, not the viewer, moved it), so a frame does not depend on where the pointer was left.
start_x() {
  Xvnc "$DISPLAY" -geometry "${VDESK_WIDTH}x${VDESK_HEIGHT}" -depth "$VDESK_DEPTH" -dpi "$VDESK_DPI" \
    -rfbport 5900 -rfbauth "$state_dir/vnc-password.rfb" -SecurityTypes VncAuth \
    -AlwaysShared -AcceptSetDesktopSize=0 -BlacklistThreshold=1000000 \
    -nocursor -nolisten tcp -noreset +extension XTEST >"$state_dir/xvnc.log" 2>&1 &
  x_pid=$!
  # It answers within a tenth of a second on an idle machine; the host's own timeout is what
  # bounds a start, so this one only catches an X server that will never answer.
  local deadline=$((SECONDS + 30))
  while [ "$SECONDS" -lt "$deadline" ]; do
    [ -S "/tmp/.X11-unix/X${display_number}" ] && xdpyinfo >/dev/null 2>&1 && return 0
    kill -0 "$x_pid" 2>/dev/null || { log "the X server exited while starting"; exit 1; }
    sleep 0.01
  done
  log "the X server did not answer within 30 s"; exit 1
}

# The window manager: openbox, or the command an image names in VDESK_WINDOW_MANAGER (words split
# on spaces, never evaluated: the osworld image's GNOME Shell).
read -ra window_manager <<< "${VDESK_WINDOW_MANAGER:-openbox}"
start_wm() { "${window_manager[@]}" >/dev/null 2>&1 & wm_pid=$!; }

# A window mapped before the window manager manages the screen stays unmanaged; wait for it
# to announce itself on the root window.
wait_for_wm() {
  for _ in $(seq 1 500); do
    xprop -root _NET_SUPPORTING_WM_CHECK 2>/dev/null | grep -q "window id" && return 0
    sleep 0.01
  done
  log "the window manager did not start within 5 s"
}

start_x
start_wm
wait_for_wm
children=("$wm_pid" "$x_pid")

if [ "$VDESK_EXPIRES_AT" -gt 0 ]; then
  remaining=$(( VDESK_EXPIRES_AT - $(date +%s) ))
  [ "$remaining" -gt 0 ] || { log "time-to-live already over"; stop_all 0; }
  ( sleep "$remaining"; log "time-to-live over: stopping"; kill -TERM $$ ) &
  children+=("$!")
fi

if [ "$VDESK_LEASED" = 1 ]; then
  # A leased desktop whose holder never shows up (it died right after `docker run`) stops.
  ( sleep "$VDESK_LEASE_GRACE"
    pgrep -f "vdesk-channel lease" >/dev/null || { log "no lease holder: stopping"; kill -TERM $$; } ) &
fi

log "ready: ${VDESK_WIDTH}x${VDESK_HEIGHT}x${VDESK_DEPTH} at ${VDESK_DPI} dpi"
while true; do
  wait -n || true
  if ! kill -0 "$x_pid" 2>/dev/null; then log "the X server died"; stop_all 1; fi
  if ! kill -0 "$wm_pid" 2>/dev/null; then log "restarting the window manager"; start_wm; fi
  children=("$wm_pid" "$x_pid")
done

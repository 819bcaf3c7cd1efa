#!/bin/bash
# The osworld desktop's window manager (VDESK_WINDOW_MANAGER): GNOME Shell as an X11 compositing
# manager on the desktop's own Xvnc, drawing with Mesa's llvmpipe, in Ubuntu's session mode
# (Yaru's shell theme, the dock, the desktop icons). The supervisor restarts it when it dies.
# GNOME Shell needs a system bus (see system-bus.conf); the first start makes it, a restart finds it.
set -u
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=/tmp/vdesk/system-bus XDG_SESSION_TYPE=x11 \
  XDG_CURRENT_DESKTOP=ubuntu:GNOME XDG_SESSION_DESKTOP=ubuntu GNOME_SHELL_SESSION_MODE=ubuntu
[ -S /tmp/vdesk/system-bus ] || dbus-daemon --config-file=/etc/vdesk/system-bus.conf --fork --nopidfile
# The shell takes no keybinding (ctrl+alt+t, Super) until its start-up is complete, which it tells
# only in a log line: a reader marks it in $XDG_RUNTIME_DIR/shell-started (the session waits for
# it) and drops the rest of the shell's output, as the supervisor did.
started="$XDG_RUNTIME_DIR/shell-started"
rm -f "$started"
exec gnome-shell --x11 --mode=ubuntu 2> >(/usr/local/lib/vdesk/mark-lines "$started" "GNOME Shell started at ") >/dev/null

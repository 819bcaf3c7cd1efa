#!/usr/bin/env bash
# The virtualenv of OSWorld's own harness (.venv-osworld), in two parts:
# - its packages (desktop-env 1.0.2 with --no-deps plus what it imports, from
#   integrations/osworld_provider/requirements-osworld.txt): 4-7 minutes to install, so they are
#   kept in ~/.cache/vdesk/ under the hash of the files that say what goes in, and reused by every
#   clone (a changed list is a new folder; nothing of a clone is in it);
# - .venv-osworld itself, made anew in seconds: the stubs and the vdesk provider from this clone,
#   and a .pth line that adds the kept packages' site-packages.
set -euo pipefail
PYTHON=${PYTHON:-python3}
VENV=$1
REQS=integrations/osworld_provider/requirements-osworld.txt
DESKTOP_ENV=desktop-env==1.0.2
key=$( (cat "$REQS"; echo "$DESKTOP_ENV"; "$PYTHON" -c 'import sys; print(sys.version)') | sha256sum | cut -c1-16)
cache=${VDESK_CACHE:-$HOME/.cache/vdesk}/osworld-packages-$key

if [ ! -f "$cache/.complete" ]; then
  echo "vdesk: installing OSWorld's desktop-env and its pins into $cache (a few minutes, once) ..."
  mkdir -p "$(dirname "$cache")"
  building=$(mktemp -d "${cache}.building.XXXX")
  "$PYTHON" -m venv "$building"
  "$building/bin/pip" install --quiet --upgrade pip
  "$building/bin/pip" install --quiet -r "$REQS"
  "$building/bin/pip" install --quiet --no-deps "$DESKTOP_ENV"
  touch "$building/.complete"
  rm -rf "$cache" && mv "$building" "$cache"
fi

rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
kept=$("$cache/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mine=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$kept" > "$mine/vdesk-osworld-packages.pth"
"$VENV/bin/pip" install --quiet --no-deps ./integrations/osworld_stubs -e ./integrations/osworld_provider
"$VENV/bin/python" -c "import vdesk_osworld_provider, mm_agents.agent; from desktop_env.evaluators import metrics, getters"
touch "$VENV/.installed"

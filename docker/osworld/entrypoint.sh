#!/bin/bash
# vdesk osworld desktop: the home (a fresh tmpfs per desktop) gets the reference machine's
# settings first — VLC's HTTP interface, an empty keyring, the browser's Preferences, the usual
# folders — and the zone its link, then the apps desktop starts.
set -euo pipefail
mkdir -p -m 700 "$(readlink -f /run/user/1000)"   # the runtime folder's link points into /tmp
cp -rn /etc/vdesk-osworld-home/. "$HOME"/
# The folders an Ubuntu user has (tasks upload into them and look for files there).
mkdir -p "$HOME"/{Desktop,Documents,Downloads,Music,Pictures,Public,Templates,Videos}
# The desktop's zone, where /etc/localtime, /etc/timezone and TZ point (see timedatectl). Not
# UTC: OSWorld's time-zone task asks the agent to set UTC+0, so its machine is not on it, and its
# tasks that date pages relative to "now" name America/New_York. The clock itself stays UTC.
zone=America/New_York
ln -sfn "/usr/share/zoneinfo/$zone" /run/user/1000/localtime && echo "$zone" > /run/user/1000/timezone
exec /usr/local/bin/vdesk-apps-entrypoint "$@"

#!/bin/bash
# mark-lines FILE MARK [UNMARK]: read a program's output on stdin; a line holding MARK creates
# FILE, one holding UNMARK removes it; every line is dropped. GNOME tells some moments only in a
# log line (the shell's start-up complete, gsd-media-keys' keys held): the session waits for FILE.
file=$1 mark=$2 unmark=${3:-}
while IFS= read -r line; do
  if [[ "$line" == *"$mark"* ]]; then touch "$file"
  elif [[ -n "$unmark" && "$line" == *"$unmark"* ]]; then rm -f "$file"
  fi
done

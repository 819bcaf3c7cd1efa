#!/bin/bash
# What a dock place of OSWorld's machine opens when this desktop has no such program: a window
# that says so (the place stays, so every other icon sits where agents click). $1: the program's
# name; $2: why it is missing.
exec zenity --info --title "$1" --width 420 \
  --text "$1 is not installed on this desktop.\n\n$2"

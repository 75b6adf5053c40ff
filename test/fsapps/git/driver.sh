#!/bin/sh
# git driver for the file-system corpus (docs/fs-mode.md, "Real applications"): Debian's git adds
# the changed a.txt and commits it, then prints "ack two" once the commit has returned 0: the
# checker then expects a.txt "two" at HEAD. Git's own configuration (core.fsync) is left as
# Debian ships it.
# usage: driver.sh (in the repository)
set -e
git add a.txt
git commit -q -m two
echo ack two

#!/bin/sh
# Mercurial driver for the file-system corpus (docs/fs-mode.md, "Real applications"): Debian's hg
# adds the new b.txt and commits it in one command (`hg commit --addremove`: `hg add` and
# `hg commit`, one Python start-up instead of two), then prints "ack two" once the commit has
# returned 0: the checker then expects b.txt "two" at tip.
# usage: driver.sh (in the repository)
set -e
hg commit -q --addremove -m two
echo ack two

#!/bin/sh
# Creates the Mercurial corpus's initial state in the current directory: a repository with one
# commit (a.txt) and a new file b.txt ("two") in the work tree, not yet added.
set -e
hg init .
printf '[ui]\nusername = corpus <corpus@example.com>\n' >>.hg/hgrc
echo one >a.txt
hg add -q a.txt
hg commit -q -m one
echo two >b.txt

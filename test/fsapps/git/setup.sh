#!/bin/sh
# Creates the git corpus's initial state in the current directory: a repository with one commit
# (a.txt "one") and a.txt changed to "two" in the work tree, not yet added.
set -e
git init -q .
git config user.email corpus@example.com
git config user.name corpus
echo one >a.txt
git add a.txt
git commit -q -m one
echo two >a.txt

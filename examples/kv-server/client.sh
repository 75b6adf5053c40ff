#!/bin/bash
# client.sh PORT: the kv-server example's client. It connects to 127.0.0.1:PORT, sends each line
# of standard input as one request and prints the server's one-line answer before sending the
# next.
exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
while IFS= read -r line; do
	printf '%s\n' "$line" >&3
	if ! IFS= read -r answer <&3; then
		echo "client: the server closed the connection" >&2
		exit 1
	fi
	printf '%s\n' "$answer"
done

#!/bin/sh
# memcached-server.sh MEMCACHED POOL PORT: starts memcached-pmem with its persistent slabs in POOL
# on 127.0.0.1:PORT, one worker thread, no UDP. A new pool (an absent or empty file) is created
# with 8 MiB of slabs, from which items are allocated (pslab_policy=pmem; the default allocates
# them in DRAM); an existing one is recovered (pslab_recover), as on a crash image. exec, so that
# scry's signals reach memcached itself.
mc=$1 pool=$2 port=$3
if [ -s "$pool" ]; then
	exec "$mc" -U 0 -l 127.0.0.1 -p "$port" -t 1 -u root -o "pslab_file=$pool,pslab_force,pslab_recover,pslab_policy=pmem"
fi
exec "$mc" -U 0 -l 127.0.0.1 -p "$port" -t 1 -u root -o "pslab_file=$pool,pslab_size=8,pslab_force,pslab_policy=pmem"

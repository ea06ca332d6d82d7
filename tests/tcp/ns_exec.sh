#!/bin/sh
# ns_exec.sh NS_LIST IFACES_LIST PROG [ARGS...]
# Runs this rank (PMI_RANK from locusrun or Hydra, OMPI_COMM_WORLD_RANK
# from Open MPI's mpirun) inside the network
# namespace NS_LIST[rank % n] (comma-separated) with LOCUS_NET_IFACES set to
# IFACES_LIST[rank % n] (';'-separated), so that one launcher on one host
# gives a job whose ranks sit on different emulated nodes. exec keeps the
# rank's pid (and its PMI socket, which is not network-namespaced).
set -eu
ns_list=$1
if_list=$2
shift 2
rank=${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-${LOCUS_RANK:-0}}}
pick() { # pick LIST SEP INDEX: entry INDEX % (number of entries), "" for ""
    [ -n "$1" ] || return 0
    n=$(printf '%s\n' "$1" | awk -F"$2" '{print NF}')
    printf '%s\n' "$1" | awk -F"$2" -v i=$(( $3 % n + 1 )) '{print $i}'
}
ns=$(pick "$ns_list" , "$rank")
ifs=$(pick "$if_list" ';' "$rank")
if [ -n "$ifs" ]; then
    export LOCUS_NET_IFACES="$ifs"
fi
exec ip netns exec "$ns" "$@"

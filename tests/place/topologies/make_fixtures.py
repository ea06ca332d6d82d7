#!/usr/bin/env python3
"""Writes the hand-made hwloc XML fixtures of this folder (see README.md).

They describe machines none of share/topologies has: more NICs than cores,
InfiniBand beside RoCE and a management port, NICs equally near to a NUMA
node that ranks of another node also use, a port that is down, and virtual
interfaces. Run it from anywhere; it rewrites the files next to itself.
hwloc's built-in XML reader (the one Locus uses) takes no comments, so the
descriptions live here and in README.md.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def mask(pus):
    v = 0
    for p in pus:
        v |= 1 << p
    return "0x%08x" % v


def sets(pus, nodes):
    c, n = mask(pus), mask(nodes)
    return f'cpuset="{c}" complete_cpuset="{c}" nodeset="{n}" complete_nodeset="{n}"'


def core(pu, node, ind):
    return (f'{ind}<object type="Core" os_index="{pu}" {sets([pu], [node])}>\n'
            f'{ind}  <object type="PU" os_index="{pu}" {sets([pu], [node])}/>\n'
            f'{ind}</object>\n')


def pcidev(busid, ids, cls, link, vendor, device, osdevs, ind):
    out = (f'{ind}<object type="PCIDev" pci_busid="{busid}" pci_type="{cls} [{ids}] [0000:0000] 00" '
           f'pci_link_speed="{link}">\n'
           f'{ind}  <info name="PCIVendor" value="{vendor}"/>\n'
           f'{ind}  <info name="PCIDevice" value="{device}"/>\n')
    for o in osdevs:
        out += o(ind + "  ")
    return out + f'{ind}</object>\n'


def netdev(name, addr, port=None):
    def f(ind):
        s = f'{ind}<object type="OSDev" name="{name}" osdev_type="2">\n'
        s += f'{ind}  <info name="Address" value="{addr}"/>\n'
        if port:
            s += f'{ind}  <info name="Port" value="{port}"/>\n'
        return s + f'{ind}</object>\n'
    return f


def verbs(name, state, lid):
    def f(ind):
        return (f'{ind}<object type="OSDev" name="{name}" osdev_type="3">\n'
                f'{ind}  <info name="Port1State" value="{state}"/>\n'
                f'{ind}  <info name="Port1LID" value="{lid}"/>\n'
                f'{ind}</object>\n')
    return f


def ipoib(n):
    return "00:00:10:87:fe:80:00:00:00:00:00:00:50:6b:4b:03:00:3c:ee:%02x" % n


def bridge(buses, devs, ind):
    lo, hi = buses.split("-") if "-" in buses else (buses, buses)
    return (f'{ind}<object type="Bridge" bridge_type="0-1" depth="0" bridge_pci="0000:[{lo}-{hi}]">\n'
            + "".join(devs) + f'{ind}</object>\n')


def numa(node, pus, mem, ind):
    return f'{ind}<object type="NUMANode" os_index="{node}" {sets(pus, [node])} local_memory="{mem}"/>\n'


def topology(host, npus, nnodes, body):
    allpus, allnodes = mask(range(npus)), mask(range(nnodes))
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE topology SYSTEM "hwloc2.dtd">\n'
            '<topology version="2.0">\n'
            f'  <object type="Machine" os_index="0" cpuset="{allpus}" complete_cpuset="{allpus}" '
            f'allowed_cpuset="{allpus}" nodeset="{allnodes}" complete_nodeset="{allnodes}" '
            f'allowed_nodeset="{allnodes}">\n'
            f'    <info name="HostName" value="{host}"/>\n' + body + '  </object>\n</topology>\n')


def vm_with_vfs():
    """2 cores, 8 SR-IOV virtual functions of one 40GbE port."""
    ind = "        "
    vfs = [pcidev(f"0000:3b:02.{i}", "8086:154c", "0200", "7.876923", "Intel Corporation",
                  "Ethernet Virtual Function 700 Series",
                  [netdev(f"eth{i + 1}", "02:00:00:00:00:%02x" % (i + 1))], ind) for i in range(8)]
    body = (f'    <object type="Package" os_index="0" {sets([0, 1], [0])}>\n'
            + numa(0, [0, 1], 8 << 30, "      ") + core(0, 0, "      ") + core(1, 0, "      ")
            + bridge("3b", vfs, "      ") + '    </object>\n')
    return topology("vf-guest", 2, 1, body)


def mixed_fabric():
    """2 packages x 2 NUMA nodes x 2 cores. NUMA 0: InfiniBand mlx5_0,
    RoCE mlx5_1 (same ConnectX card, Ethernet port), I350 management eno1.
    NUMA 1: InfiniBand mlx5_4 whose port is down. NUMA 2: InfiniBand
    mlx5_2 and mlx5_3. NUMA 3: no NIC (its ranks use package 1's)."""
    cx6 = ("15b3:101b", "Mellanox Technologies", "MT28908 Family [ConnectX-6]")
    ind = "          "

    def ib(bus, idx, net, lid, state=4):
        return pcidev(bus, cx6[0], "0207", "31.507692", cx6[1], cx6[2],
                      [netdev(net, ipoib(idx), "1"), verbs(f"mlx5_{idx}", state, lid)], ind)

    roce = pcidev("0000:17:00.1", cx6[0], "0200", "31.507692", cx6[1], cx6[2],
                  [netdev("ens1f1np1", "b8:ce:f6:00:00:01", "1"), verbs("mlx5_1", 4, "0x0")], ind)
    mgmt = pcidev("0000:18:00.0", "8086:1521", "0200", "0.250000", "Intel Corporation",
                  "I350 Gigabit Network Connection", [netdev("eno1", "3c:ec:ef:00:00:01")], ind)

    def group(node, pus, devs, bus):
        s = (f'      <object type="Group" {sets(pus, [node])}>\n'
             + numa(node, pus, 16 << 30, "        ")
             + "".join(core(p, node, "        ") for p in pus))
        if devs:
            s += bridge(bus, devs, "        ")
        return s + '      </object>\n'

    body = (f'    <object type="Package" os_index="0" {sets([0, 1, 2, 3], [0, 1])}>\n'
            + group(0, [0, 1], [ib("0000:17:00.0", 0, "ib0", "0x1a"), roce, mgmt], "17-18")
            + group(1, [2, 3], [ib("0000:3b:00.0", 4, "ib3", "0x0", state=1)], "3b")
            + '    </object>\n'
            f'    <object type="Package" os_index="1" {sets([4, 5, 6, 7], [2, 3])}>\n'
            + group(2, [4, 5], [ib("0000:af:00.0", 2, "ib1", "0x1b"),
                                ib("0000:b0:00.0", 3, "ib2", "0x1c")], "af-b0")
            + group(3, [6, 7], [], None)
            + '    </object>\n')
    return topology("mixed-fabric", 8, 4, body)


def virtual_nics():
    """2 packages x 2 cores, NICs only virtual (OS devices off PCI, on the
    Machine): bond0, bond0.10 and veth1, equally near every core."""
    body = ""
    for pkg in (0, 1):
        pus = [2 * pkg, 2 * pkg + 1]
        body += (f'    <object type="Package" os_index="{pkg}" {sets(pus, [pkg])}>\n'
                 + numa(pkg, pus, 4 << 30, "      ") + "".join(core(p, pkg, "      ") for p in pus)
                 + '    </object>\n')
    for i, name in enumerate(("bond0", "bond0.10", "veth1")):
        body += netdev(name, "02:00:00:00:01:%02x" % i)("    ")
    return topology("netns-guest", 4, 2, body)


for name, make in (("2c-8vfs.xml", vm_with_vfs), ("4n-mixed-fabric.xml", mixed_fabric),
                   ("2n-virtual-nics.xml", virtual_nics)):
    with open(os.path.join(HERE, name), "w") as f:
        f.write(make())

# SPDX-License-Identifier: GPL-2.0-or-later
"""The NDK device tree: a flattened device tree (FDT), XZ-compressed,
offered word by word through a vendor-specific extended capability.

parse_fdt() reads the FDT structure block (version 17 layout: header,
structure tokens, strings); find_block() finds the PCIE_TELEMETRY_MI
node and its offset in BAR0.
"""
import lzma
import struct

from .errors import CardError

FDT_MAGIC = 0xd00dfeed
FDT_BEGIN_NODE, FDT_END_NODE, FDT_PROP, FDT_NOP, FDT_END = 1, 2, 3, 4, 9


class FdtNode:
    """A node: name, props ({name: bytes}), children, parent."""

    def __init__(self, name, parent=None):
        self.name = name
        self.parent = parent
        self.props = {}
        self.children = []

    @property
    def path(self):
        if self.parent is None:
            return '/'
        up = self.parent.path
        return (up if up != '/' else '') + '/' + self.name

    def child(self, name):
        for c in self.children:
            if c.name == name:
                return c
        return None

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    def string(self, name):
        """A string property (the first of a string list), or None."""
        v = self.props.get(name)
        return None if v is None else v.split(b'\0')[0].decode('ascii',
                                                               'replace')

    def strings(self, name):
        v = self.props.get(name)
        if v is None:
            return []
        return [s.decode('ascii', 'replace') for s in v.split(b'\0') if s]

    def cells(self, name):
        """A property as big-endian 32-bit cells, or None."""
        v = self.props.get(name)
        if v is None:
            return None
        if len(v) % 4:
            raise CardError('device tree: %s of %s is %d bytes, not cells' %
                            (name, self.path, len(v)))
        return list(struct.unpack('>%dI' % (len(v) // 4), v))

    def u32(self, name):
        c = self.cells(name)
        return None if not c else c[0]

    def compatible(self, what):
        return what in self.strings('compatible')

    def __repr__(self):
        return 'FdtNode(%s)' % self.path


def parse_fdt(blob):
    """The root node of a flattened device tree."""
    if len(blob) < 40:
        raise CardError('device tree: %d bytes, shorter than a header' %
                        len(blob))
    (magic, total, off_struct, off_strings, _rsv, version, _last, _cpu,
     size_strings, size_struct) = struct.unpack('>10I', blob[:40])
    if magic != FDT_MAGIC:
        raise CardError('device tree: magic 0x%08x, not 0x%08x' %
                        (magic, FDT_MAGIC))
    if total > len(blob) or version < 16:
        raise CardError('device tree: totalsize %d of %d bytes, version %d' %
                        (total, len(blob), version))
    strings = blob[off_strings:off_strings + size_strings]
    pos, end = off_struct, off_struct + size_struct
    root = node = None
    while pos < end:
        token, = struct.unpack_from('>I', blob, pos)
        pos += 4
        if token == FDT_BEGIN_NODE:
            nul = blob.index(b'\0', pos)
            name = blob[pos:nul].decode('ascii', 'replace')
            pos = (nul + 4) & ~3
            new = FdtNode(name, node)
            if node is None:
                root = new
            else:
                node.children.append(new)
            node = new
        elif token == FDT_END_NODE:
            if node is None:
                raise CardError('device tree: END_NODE outside a node')
            node = node.parent
        elif token == FDT_PROP:
            length, nameoff = struct.unpack_from('>II', blob, pos)
            pos += 8
            name = strings[nameoff:strings.index(b'\0', nameoff)].decode()
            if node is None:
                raise CardError('device tree: property outside a node')
            node.props[name] = bytes(blob[pos:pos + length])
            pos = (pos + length + 3) & ~3
        elif token == FDT_NOP:
            continue
        elif token == FDT_END:
            break
        else:
            raise CardError('device tree: token %d at %d' % (token, pos - 4))
    if root is None:
        raise CardError('device tree: no root node')
    return root


def decompress(xz):
    """The FDT inside the XZ stream the VSEC offers."""
    try:
        return lzma.decompress(xz, format=lzma.FORMAT_XZ)
    except lzma.LZMAError as e:
        raise CardError('device tree: the XZ stream does not decompress: '
                        '%s' % e)


def find_block(root, block_compatible, bus_compatible, resource):
    """(node, offset in the BAR, size) of the block: the node compatible
    with block_compatible under a bus compatible with bus_compatible whose
    resource is `resource` (e.g. PCI0,BAR0); None if there is none."""
    for bus in root.walk():
        if not bus.compatible(bus_compatible):
            continue
        if bus.string('resource') != resource:
            continue
        acells = bus.u32('#address-cells') or 1
        scells = bus.u32('#size-cells') or 1
        for node in bus.walk():
            if node is bus or not node.compatible(block_compatible):
                continue
            reg = node.cells('reg') or []
            if len(reg) < acells + scells:
                raise CardError('device tree: %s has reg %r' %
                                (node.path, reg))
            offset = 0
            for c in reg[:acells]:
                offset = offset << 32 | c
            size = 0
            for c in reg[acells:acells + scells]:
                size = size << 32 | c
            return node, offset, size
    return None

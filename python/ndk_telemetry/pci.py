# SPDX-License-Identifier: GPL-2.0-or-later
"""PCI configuration access through qtest, enumeration and BAR
assignment: what firmware does before an OS runs, done here because
under -accel qtest no firmware runs.

Configuration access is CF8/CFC (the first 256 bytes of a function) or
ECAM (all 4 KiB); on q35 ECAM is enabled by writing the MCH's PCIEXBAR
(configuration offset 0x60 of 00:00.0) with a 256 MiB window at
0xb0000000.
"""
from .errors import CardError

Q35_PCIEXBAR = 0x60
ECAM_BASE = 0xb0000000
CF8, CFC = 0xcf8, 0xcfc

VENDOR_ID, DEVICE_ID, COMMAND, CLASS_REV = 0x00, 0x02, 0x04, 0x08
HEADER_TYPE, BAR0 = 0x0e, 0x10
BUS_NUMBERS, IO_BASE, MEM_BASE, PREF_BASE = 0x18, 0x1c, 0x20, 0x24
PREF_BASE_UPPER, PREF_LIMIT_UPPER = 0x28, 0x2c
CMD_MEMORY, CMD_MASTER = 0x2, 0x4
BRIDGE_WINDOW = 1 << 20


def align_up(x, a):
    return (x + a - 1) // a * a


class Cf8Config:
    """Configuration mechanism #1: the address in port 0xcf8, the data at
    0xcfc; offsets below 0x100 only."""

    extended = False

    def __init__(self, qtest):
        self.qt = qtest

    def _addr(self, bus, dev, fn, off):
        if not 0 <= off < 0x100:
            raise CardError('configuration offset 0x%x needs ECAM (q35)' %
                            off)
        return 0x80000000 | bus << 16 | dev << 11 | fn << 8 | (off & 0xfc)

    def read(self, bus, dev, fn, off, size=4):
        self.qt.outp(CF8, 4, self._addr(bus, dev, fn, off))
        return self.qt.inp(CFC + (off & 3), size)

    def write(self, bus, dev, fn, off, value, size=4):
        self.qt.outp(CF8, 4, self._addr(bus, dev, fn, off))
        self.qt.outp(CFC + (off & 3), size, value)


class EcamConfig:
    """Memory-mapped configuration: bus << 20 | dev << 15 | fn << 12 |
    offset from the window's base."""

    extended = True

    def __init__(self, qtest, base=ECAM_BASE):
        self.qt = qtest
        self.base = base

    def _addr(self, bus, dev, fn, off):
        if not 0 <= off < 0x1000:
            raise CardError('configuration offset 0x%x is past 4 KiB' % off)
        return self.base + (bus << 20 | dev << 15 | fn << 12 | off)

    def read(self, bus, dev, fn, off, size=4):
        return self.qt.read(self._addr(bus, dev, fn, off), size)

    def write(self, bus, dev, fn, off, value, size=4):
        self.qt.write(self._addr(bus, dev, fn, off), size, value)


def enable_q35_ecam(qtest, base=ECAM_BASE):
    """PCIEXBAR of the q35 MCH: base, length 256 MiB (bits 2:1 = 0),
    enable (bit 0); returns ECAM access."""
    cf8 = Cf8Config(qtest)
    if cf8.read(0, 0, 0, VENDOR_ID, 2) != 0x8086:
        raise CardError('00:00.0 is not the q35 MCH (vendor 0x%04x)' %
                        cf8.read(0, 0, 0, VENDOR_ID, 2))
    cf8.write(0, 0, 0, Q35_PCIEXBAR + 4, 0)
    cf8.write(0, 0, 0, Q35_PCIEXBAR, base | 1)
    return EcamConfig(qtest, base)


class Function:
    """One PCI function as enumeration found it."""

    def __init__(self, cfg, bus, dev, fn):
        self.cfg = cfg
        self.bus, self.dev, self.fn = bus, dev, fn
        self.vendor = self.read(VENDOR_ID, 2)
        self.device = self.read(DEVICE_ID, 2)
        self.header_type = self.read(HEADER_TYPE, 1) & 0x7f
        self.class_code = self.read(CLASS_REV) >> 8
        self.secondary = None           # a bridge's bus
        self.children = []              # functions on that bus

    @property
    def bdf(self):
        return '%02x:%02x.%x' % (self.bus, self.dev, self.fn)

    @property
    def is_bridge(self):
        return self.header_type == 1

    def read(self, off, size=4):
        return self.cfg.read(self.bus, self.dev, self.fn, off, size)

    def write(self, off, value, size=4):
        self.cfg.write(self.bus, self.dev, self.fn, off, value, size)

    def bars(self):
        """[(index, size, is_64)] of the memory BARs, sized by writing all
        ones (memory decoding must be off, as before assignment)."""
        out = []
        i = 0
        limit = 6 if self.header_type == 0 else 2
        while i < limit:
            off = BAR0 + 4 * i
            saved = self.read(off)
            if saved & 1:                   # an I/O BAR: not assigned here
                i += 1
                continue
            is_64 = (saved >> 1 & 3) == 2
            self.write(off, 0xffffffff)
            low = self.read(off)
            self.write(off, saved)
            high = 0xffffffff
            if is_64:
                saved_hi = self.read(off + 4)
                self.write(off + 4, 0xffffffff)
                high = self.read(off + 4)
                self.write(off + 4, saved_hi)
            mask = (high << 32 | (low & ~0xf)) if is_64 else low & ~0xf
            if mask:
                bits = 64 if is_64 else 32
                size = ((~mask) & ((1 << bits) - 1)) + 1
                out.append((i, size, is_64))
            i += 2 if is_64 else 1
        return out

    def bar_address(self, index):
        low = self.read(BAR0 + 4 * index)
        addr = low & ~0xf
        if (low >> 1 & 3) == 2:
            addr |= self.read(BAR0 + 4 * index + 4) << 32
        return addr

    def set_bar(self, index, addr, is_64):
        self.write(BAR0 + 4 * index, addr & 0xffffffff)
        if is_64:
            self.write(BAR0 + 4 * index + 4, addr >> 32)

    def enable(self, bits=CMD_MEMORY):
        self.write(COMMAND, self.read(COMMAND, 2) | bits, 2)

    def ext_capabilities(self):
        """[(id, version, offset)] of the extended capability list."""
        if not self.cfg.extended:
            return []
        out, off = [], 0x100
        while off and len(out) < 256:
            hdr = self.read(off)
            if hdr in (0, 0xffffffff):
                break
            out.append((hdr & 0xffff, hdr >> 16 & 0xf, off))
            off = hdr >> 20 & 0xffc
        return out

    def __repr__(self):
        return 'Function(%s %04x:%04x)' % (self.bdf, self.vendor,
                                           self.device)


class Enumeration:
    """Every function below the root bus; bridges get bus numbers in the
    order found, depth first, unless `assign_buses` is off (a machine
    whose configuration came with a migration keeps its own)."""

    def __init__(self, cfg, assign_buses=True):
        self.cfg = cfg
        self.assign_buses = assign_buses
        self.functions = []
        self.next_bus = 1
        self.root = self._scan(0)

    def _scan(self, bus):
        found = []
        for dev in range(32):
            if self.cfg.read(bus, dev, 0, VENDOR_ID, 2) == 0xffff:
                continue
            multi = self.cfg.read(bus, dev, 0, HEADER_TYPE, 1) & 0x80
            for fn in range(8 if multi else 1):
                if self.cfg.read(bus, dev, fn, VENDOR_ID, 2) == 0xffff:
                    continue
                f = Function(self.cfg, bus, dev, fn)
                found.append(f)
                self.functions.append(f)
                if f.is_bridge:
                    self._bridge(f)
        return found

    def _bridge(self, f):
        numbers = f.read(BUS_NUMBERS)
        if self.assign_buses:
            sec = self.next_bus
            self.next_bus += 1
            f.write(BUS_NUMBERS, (numbers & 0xff000000) | 0xff << 16 |
                    sec << 8 | f.bus)
            f.secondary = sec
            f.children = self._scan(sec)
            f.write(BUS_NUMBERS, (numbers & 0xff000000) |
                    (self.next_bus - 1) << 16 | sec << 8 | f.bus)
        else:
            sec = numbers >> 8 & 0xff
            if sec and sec > f.bus:
                f.secondary = sec
                f.children = self._scan(sec)

    def find(self, vendor, device):
        return [f for f in self.functions
                if f.vendor == vendor and f.device == device]

    def at(self, bus, dev, fn):
        for f in self.functions:
            if (f.bus, f.dev, f.fn) == (bus, dev, fn):
                return f
        return None

    def path_to(self, target):
        """The bridges from the root bus down to target's bus."""
        def walk(funcs, path):
            for f in funcs:
                if f is target:
                    return path
                if f.is_bridge:
                    p = walk(f.children, path + [f])
                    if p is not None:
                        return p
            return None
        return walk(self.root, [])


def assign_bars(enum, targets, hole_start, hole_end):
    """Give the memory BARs of `targets` addresses in [hole_start,
    hole_end), program the windows of the bridges above them and enable
    memory decoding (and bus mastering of the bridges). Returns
    {function: [(index, address, size)]}."""
    targets = list(targets)
    placed = {f: [] for f in targets}

    def need(funcs):
        """[(size, align, kind, obj)] of one bus: the targets' BARs and
        the windows of bridges with targets below."""
        items = []
        for f in funcs:
            if f in placed:
                for i, size, is_64 in f.bars():
                    items.append((size, size, 'bar', (f, i, is_64)))
            if f.is_bridge:
                sub = need(f.children)
                if sub:
                    end = pack(sub, 0, dry=True)
                    align = max([BRIDGE_WINDOW] + [a for _, a, _, _ in sub])
                    items.append((align_up(max(end, 1), BRIDGE_WINDOW),
                                  align, 'bridge', (f, sub)))
        return items

    def pack(items, base, dry=False):
        cursor = base
        for size, align, kind, obj in sorted(items, key=lambda x: -x[1]):
            cursor = align_up(cursor, align)
            if not dry:
                if kind == 'bar':
                    f, i, is_64 = obj
                    f.set_bar(i, cursor, is_64)
                    placed[f].append((i, cursor, size))
                else:
                    bridge, sub = obj
                    pack(sub, cursor)
                    limit = cursor + size - 1
                    bridge.write(MEM_BASE, (limit & 0xfff00000) |
                                 (cursor >> 16 & 0xfff0))
                    # prefetchable and I/O windows closed (base > limit)
                    bridge.write(PREF_BASE, 0x0000fff0)
                    bridge.write(PREF_BASE_UPPER, 0)
                    bridge.write(PREF_LIMIT_UPPER, 0)
                    bridge.write(IO_BASE, 0x00f0, 2)
                    bridge.enable(CMD_MEMORY | CMD_MASTER)
            cursor += size
        return cursor

    items = need(enum.root)
    end = pack(items, hole_start, dry=True)
    if end > hole_end:
        raise CardError('the BARs need 0x%x bytes from 0x%x, past the PCI '
                        'hole\'s end 0x%x' % (end - hole_start, hole_start,
                                              hole_end))
    pack(items, hole_start)
    for f in targets:
        f.enable(CMD_MEMORY)
    return placed

# SPDX-License-Identifier: GPL-2.0-or-later
"""A QEMU under -accel qtest with ndk-pcie-telemetry cards and their
traffic generators, and the cards as typed register files.

Virtual time moves only when the test steps it (Machine.clock_step,
clock_set); every access happens at the current virtual time.
"""
import os
import re
import shlex
import shutil
import tempfile
import time
import weakref

from . import devtree as dt
from . import pci
from .errors import (BusyTimeout, CardError, NdkError, QemuDied,
                     QemuNotFound, QemuStartError, QmpError)
from .layout import Counters, Layout
from .protocol import (LineChannel, Qmp, QemuProcess, QTest, accept,
                       describe_status, listen_unix)
from .regmap import load_regmap

ENV_QEMU = 'QTEST_QEMU_BINARY'
NS_PER_S = 10 ** 9
# qtest commands written at once: the answers of many more could fill the
# socket while QEMU still reads the commands
BATCH = 256


def resolve_qemu(qemu=None):
    """[binary, args...] of the QEMU to run: `qemu` (a path, or a command
    line as QTEST_QEMU_BINARY may hold), else QTEST_QEMU_BINARY."""
    source = 'qemu='
    if not qemu:
        qemu = os.environ.get(ENV_QEMU)
        source = ENV_QEMU + '='
        if not qemu:
            raise QemuNotFound(
                'no QEMU to run: set %s to the QEMU with ndk-pcie-telemetry '
                '(e.g. <clone>/build/qemu-system-x86_64) or pass qemu=' %
                ENV_QEMU)
    argv = shlex.split(qemu) if isinstance(qemu, str) else list(qemu)
    exe = shutil.which(argv[0]) if argv else None
    if not exe or not os.access(exe, os.X_OK):
        raise QemuNotFound('%s%s: %s is not an executable file%s' % (
            source, qemu, argv[0] if argv else '(empty)',
            '' if source == 'qemu=' else
            ' (set %s to the QEMU with ndk-pcie-telemetry)' % ENV_QEMU))
    return [exe] + argv[1:]


def qemu_error_line(stderr, binary='qemu-system-x86_64'):
    """QEMU's error in its stderr: the last line it wrote as
    '<program>: ...' that is not a warning; else the last line that is
    not a warning; None for an empty stderr."""
    prog = os.path.basename(binary)
    lines = [ln.rstrip() for ln in stderr.splitlines() if ln.strip()]
    plain = [ln for ln in lines if ': warning: ' not in ln]
    for ln in reversed(plain):
        if ln.startswith(prog + ': ') or re.match(r'qemu[\w.-]*: ', ln):
            return ln
    return plain[-1] if plain else None


def qemu_opts(opts):
    """k=v,k=v as QEMU's option syntax: booleans on/off, a comma doubled."""
    out = []
    for k, v in opts.items():
        if isinstance(v, bool):
            v = 'on' if v else 'off'
        out.append('%s=%s' % (k, str(v).replace(',', ',,')))
    return ','.join(out)


def _int(v):
    return v if isinstance(v, int) else int(str(v), 0)


def _ceil_div(a, b):
    return -(-a // b)


class Traffic:
    """A traffic generator: telemetry-traffic-<model> with its parameters
    (docs/traffic-generators.md). Once its machine runs, get() and set()
    are qom-get and qom-set of its properties (a set applies from the
    card's next PCIe drain window)."""

    def __init__(self, model, params=None, id=None):
        self.model = model
        self.params = dict(params or {})
        self.id = id
        self.machine = None

    @classmethod
    def parse(cls, text):
        """'pattern,rq-frame-bytes=256' (the -object syntax without its
        type prefix and id)."""
        model, _, rest = text.partition(',')
        params = {}
        for kv in [x for x in rest.split(',') if x]:
            k, _, v = kv.partition('=')
            params[k] = v
        return cls(model, params)

    @property
    def qom_type(self):
        return 'telemetry-traffic-' + self.model

    @property
    def path(self):
        return '/objects/' + self.id

    def object_arg(self):
        opts = {'id': self.id}
        opts.update(self.params)
        return '%s,%s' % (self.qom_type, qemu_opts(opts))

    def get(self, prop):
        self._need_machine()
        return self.machine.qom_get(self.path, prop)

    def set(self, prop, value):
        self._need_machine()
        self.machine.qom_set(self.path, prop, value)

    def copy(self):
        return Traffic(self.model, self.params, self.id)

    def _need_machine(self):
        if self.machine is None:
            raise CardError('traffic %s: its machine is not running' %
                            self.id)

    def __repr__(self):
        return 'Traffic(%r, %r, id=%r)' % (self.model, self.params, self.id)


class Card:
    """An ndk-pcie-telemetry card: before its machine starts, what to put
    on QEMU's command line (props, traffic); after, the card found on the
    bus with BAR0 assigned, its block located and its registers typed by
    the JSON register map.

    props: device properties ({'pcie-endpoints': 2, 'bus': 'rp0'});
    traffic: a Traffic, 'pattern,rq-frame-bytes=256', or the id of an
    -object given in extra_args; block_offset: where the block sits in
    BAR0 when the card has no device tree to say so (devtree=off, or no
    ECAM on the machine)."""

    def __init__(self, props=None, traffic=None, id=None, block_offset=None):
        self.props = dict(props or {})
        if isinstance(traffic, str) and (',' in traffic or
                                         traffic in _MODELS):
            traffic = Traffic.parse(traffic)
        elif isinstance(traffic, tuple):
            traffic = Traffic(*traffic)
        self.traffic = traffic
        self.id = id or self.props.pop('id', None)
        self.given_offset = block_offset
        self.machine = None
        self.function = None

    def copy(self):
        """The same command-line card, not bound to a machine."""
        return Card(self.props, self.traffic.copy() if isinstance(
            self.traffic, Traffic) else self.traffic, self.id,
            self.given_offset)

    # ---------------------------------------------------- command line
    def device_arg(self, device):
        opts = {'id': self.id}
        if isinstance(self.traffic, Traffic):
            opts['traffic'] = self.traffic.id
        elif self.traffic:
            opts['traffic'] = self.traffic
        opts.update(self.props)
        return '%s,%s' % (device, qemu_opts(opts))

    @property
    def path(self):
        return '/machine/peripheral/' + self.id

    # ------------------------------------------------------ binding
    def _bind(self, machine, function, bar0, bar0_size, t0):
        self.machine = machine
        self.function = function
        self.bar0 = bar0
        self.bar0_size = bar0_size
        self.t0 = t0
        self.regmap = machine.regmap
        self.devtree = None
        self.devtree_xz = None
        self.block_offset = self._find_block()
        self.base = bar0 + self.block_offset
        magic = self.read32(self.regmap.register('MAGIC').offset)
        want = self.regmap.block['magic']
        if magic != want:
            raise CardError('%s at %s: BAR0 + 0x%x reads 0x%08x, not MAGIC '
                            '0x%08x: no PCIE_TELEMETRY_MI block there' % (
                                self.id, function.bdf, self.block_offset,
                                magic, want))
        self.layout = Layout(self.regmap.counters, self.read('CFG_TOPOLOGY'),
                             self.read('CFG_LAYOUT'), self.read('CFG_PCIE'),
                             self.read('CFG_DMA'), self.read('CFG_HIST'))
        dp = self.read('CFG_DRAIN').drain_period
        self.drain_period = dp or 65536
        clocks = self.regmap.qemu['clocks_hz']
        self.hz = {d: _int(self.props.get('%s-clk-freq' % d, clocks[d]))
                   for d in ('pcie', 'dma', 'mi')}

    def _find_block(self):
        """The block's offset in BAR0: from the device tree where the card
        offers one, else the offset given, else the block-offset
        property, else 0."""
        found = self._read_devtree()
        prop = self.props.get('block-offset')
        if found is not None:
            off = found
            if self.given_offset is not None and self.given_offset != off:
                raise CardError('%s: block_offset=0x%x given, the device '
                                'tree says 0x%x' % (self.id,
                                                    self.given_offset, off))
            return off
        if self.given_offset is not None:
            return self.given_offset
        return _int(prop) if prop is not None else 0

    def _vsec(self):
        """Offset of the NDK device-tree VSEC, or None."""
        vs = self.regmap.vsec
        for cap_id, _ver, off in self.function.ext_capabilities():
            if cap_id == vs['cap_id'] and \
                    self.config_read(off + 4) & 0xffff == vs['vsec_id']:
                return off
        return None

    def _read_devtree(self):
        off = self._vsec() if self.function.cfg.extended else None
        if off is None:
            return None
        rm = self.regmap
        length = self.config_read(off + rm.vsec_register('LENGTH'))
        index_reg = off + rm.vsec_register('INDEX')
        data_reg = off + rm.vsec_register('DATA')
        saved = self.config_read(index_reg)
        words = []
        for i in range(_ceil_div(length, 4)):
            self.config_write(index_reg, i)
            words.append(self.config_read(data_reg))
        self.config_write(index_reg, saved)
        xz = b''.join(w.to_bytes(4, 'little') for w in words)[:length]
        self.devtree_xz = xz
        self.devtree = dt.parse_fdt(dt.decompress(xz))
        d = rm.vsec['devtree']
        hit = dt.find_block(self.devtree, d['block_compatible'],
                            d['bus_compatible'], d['bus_resource'])
        if hit is None:
            raise CardError('%s: the device tree has no node compatible '
                            'with %s on a %s bus of %s' % (
                                self.id, d['block_compatible'],
                                d['bus_compatible'], d['bus_resource']))
        self.devtree_node = hit[0]
        return hit[1]

    def _qt(self):
        if self.machine is None:
            raise CardError('card %s: its machine has not started' % self.id)
        if self.machine.closed:
            raise CardError('card %s: its machine was shut down' % self.id)
        return self.machine.qtest

    # ---------------------------------------------- configuration space
    @property
    def bdf(self):
        return self.function.bdf

    def config_read(self, off, size=4):
        self._qt()
        return self.function.read(off, size)

    def config_write(self, off, value, size=4):
        self._qt()
        self.function.write(off, value, size)

    # ----------------------------------------------- raw block access
    def read32(self, off):
        """32 bits at block offset off."""
        return self._qt().read(self.base + off, 4)

    def read64(self, off):
        return self._qt().read(self.base + off, 8)

    def write32(self, off, value):
        self._qt().write(self.base + off, 4, value)

    def write64(self, off, value):
        self._qt().write(self.base + off, 8, value)

    def bar_read(self, off, size=4):
        """size bytes at BAR0 offset off (outside the block too)."""
        return self._qt().read(self.bar0 + off, size)

    def bar_write(self, off, value, size=4):
        self._qt().write(self.bar0 + off, size, value)

    # ------------------------------------------------- typed registers
    def read(self, name, endpoint=None):
        """A register by its map name, decoded: card.read('STATUS').busy;
        per-endpoint registers take endpoint=."""
        reg = self.regmap.register(name)
        if reg.access == 'wo':
            raise CardError('%s is write-only (it reads 0)' % name)
        return reg.decode(self.read32(reg.address(endpoint)))

    reg = read

    def write(self, name, value=None, endpoint=None, **fields):
        """A register by its map name, from a value and/or fields:
        card.write('COMMAND', snapshot=1)."""
        reg = self.regmap.register(name)
        if reg.access == 'ro':
            raise CardError('%s is read-only' % name)
        if value is None and not fields:
            raise CardError('write %s: give a value or fields (%s)' % (
                name, ', '.join(reg.field_by_name)))
        self.write32(reg.address(endpoint), reg.encode(value or 0, **fields))

    def status(self):
        return self.read('STATUS')

    # ---------------------------------------------------- clocks, time
    @property
    def now(self):
        return self.machine.now

    def step(self, ns):
        """Advance the machine's virtual time by ns (Machine.clock_step)."""
        return self.machine.clock_step(ns)

    def cycle(self, domain, t=None):
        """The cycle of a clock ('pcie', 'dma', 'mi') running at virtual
        time t (now): floor(t f / 10^9)."""
        t = self.machine.now if t is None else t
        return t * self.hz[domain] // NS_PER_S

    def cycle_time(self, domain, c):
        """The first virtual time (whole ns) at which cycle c has begun."""
        return _ceil_div(c * NS_PER_S, self.hz[domain])

    def origin(self, domain):
        """The first cycle of a probe's clock at or after the card's
        creation: where its windows start (no reset since)."""
        return _ceil_div(self.t0 * self.hz[domain], NS_PER_S)

    def drain_cycle(self, domain, k):
        """The cycle whose end closes window k: o + (k + 1) DP - 1."""
        return self.origin(domain) + (k + 1) * self.drain_period - 1

    def settle_ns(self):
        """How long after a drain its deltas may still be on their way
        into the counters: 3 MI cycles per delta of every probe, and the
        FIFOs' latency; at least 3 us."""
        mi = (3 * self.layout.used + 64) * NS_PER_S // self.hz['mi']
        return max(3000, mi)

    def windows_counted(self, domain='pcie', t=None):
        """How many whole windows of a probe the counters hold at virtual
        time t (now); ValueError when t is too close to a drain for the
        answer to be sure (within settle_ns() after it or 1 us before)."""
        t = self.machine.now if t is None else t
        o, dp = self.origin(domain), self.drain_period
        c = self.cycle(domain, t)
        if c + 1 < o:
            return 0
        w = (c + 1 - o) // dp
        if w and t - self.cycle_time(domain, self.drain_cycle(domain, w - 1)) \
                < self.settle_ns():
            raise ValueError('%d ns is %d ns after the drain of %s window '
                             '%d: its deltas may be on their way' % (
                                 t, t - self.cycle_time(
                                     domain, self.drain_cycle(domain, w - 1)),
                                 domain, w - 1))
        if self.cycle_time(domain, self.drain_cycle(domain, w)) - t < 1000:
            raise ValueError('%d ns is within 1 us of the drain of %s window '
                             '%d' % (t, domain, w))
        return w

    def mid_window(self, k, domain='pcie'):
        """A virtual time half way between the drain that closes window
        k - 1 and the next one: the counters then hold k windows."""
        a = self.t0 if k == 0 else \
            self.cycle_time(domain, self.drain_cycle(domain, k - 1))
        b = self.cycle_time(domain, self.drain_cycle(domain, k))
        return (a + b) // 2

    def _step_to_mi(self, m):
        t = self.cycle_time('mi', m)
        if t > self.machine.now:
            self.machine.clock_set(t)

    # ---------------------------------------------------------- commands
    def command(self, wait=True, **bits):
        """Write COMMAND (snapshot=1, clear=1, clear_flags=1,
        clear_lowest=1); with wait, a SNAPSHOT or CLEAR is waited for
        (see wait_busy). Returns the MI cycles from the write to the cycle
        BUSY was seen low (0 when nothing was waited for)."""
        reg = self.regmap.register('COMMAND')
        value = reg.encode(0, **bits)
        w = self.cycle('mi')
        self.write32(reg.offset, value)
        sweeps = sum(1 for f in ('snapshot', 'clear') if bits.get(f))
        if not wait or not sweeps:
            return 0
        return self.wait_busy(w, sweeps)

    def snapshot(self, wait=True):
        """SNAPSHOT: the live copy into the snapshot copy."""
        return self.command(wait, snapshot=1)

    def clear(self, wait=True):
        """CLEAR: both copies to zero (the probes go on counting)."""
        return self.command(wait, clear=1)

    def clear_flags(self):
        self.command(False, clear_flags=1)

    def clear_lowest(self):
        self.command(False, clear_lowest=1)

    def wait_busy(self, w, sweeps=1):
        """Step virtual time until BUSY falls after a command written in
        MI cycle w. The request is seen from w + 2 (BUSY reads 1 from
        then, never before), and a sweep takes at least 1 + 2 ENTRIES MI
        cycles (4 ENTRIES + 2 for SNAPSHOT with CLEAR): the wait steps to
        w + 2, checks BUSY, jumps to the earliest fall, then polls one MI
        cycle at a time. Returns the MI cycles from w to the fall."""
        busy = self.regmap.register('STATUS').field('busy')
        status = self.regmap.register('STATUS').offset
        entries = self.layout.entries
        self._step_to_mi(w + 2)
        if not busy.extract(self.read32(status)):
            raise CardError('%s: BUSY is 0 two MI cycles after the command '
                            '(MI cycle %d)' % (self.id, w + 2))
        first = w + 3 + 2 * entries if sweeps == 1 else w + 4 + 4 * entries
        limit = first + 8 * entries + 1024
        self._step_to_mi(first)
        while busy.extract(self.read32(status)):
            m = self.cycle('mi')
            if m >= limit:
                raise BusyTimeout('%s: BUSY still 1 at MI cycle %d, %d '
                                  'after the command' % (self.id, m, m - w))
            self._step_to_mi(m + 1)
        return self.cycle('mi') - w

    def wait_idle(self):
        """Poll BUSY one MI cycle at a time until it reads 0 (for a
        command written by other means at least 2 MI cycles ago)."""
        w = self.cycle('mi')
        busy = self.regmap.register('STATUS').field('busy')
        limit = w + 12 * self.layout.entries + 1024
        while busy.extract(self.read32(
                self.regmap.register('STATUS').offset)):
            m = self.cycle('mi')
            if m >= limit:
                raise BusyTimeout('%s: BUSY still 1 after %d MI cycles' %
                                  (self.id, m - w))
            self._step_to_mi(m + 1)
        return self.cycle('mi') - w

    # ---------------------------------------------------------- counters
    def counter(self, *key, endpoint=0):
        """One counter of the copy READ_SEL shows: counter(5) (entry 5),
        counter('RQ.words'), counter('RQ.words', endpoint=1),
        counter(1, 'RQ', 'words'), counter(0, 'UP0', 'region', 1),
        counter(0, 'pcie', 'cycles')."""
        if len(key) == 1 and isinstance(key[0], int):
            e = key[0]
        elif len(key) == 1:
            e = self.layout.entry(key[0], endpoint)
        elif len(key) >= 3 and isinstance(key[0], int):
            name = '%s.%s' % (key[1], key[2])
            if key[2] == 'region':
                if len(key) != 4:
                    raise CardError('counter(%d, %r, \'region\', r): give '
                                    'the region' % (key[0], key[1]))
                name += str(key[3])
            e = self.layout.entry(name, key[0])
        else:
            raise CardError('counter%r: give an entry, a name, or '
                            '(endpoint, bus, quantity[, region])' % (key,))
        return self.read64(self.layout.address(e))

    def counters(self, live=None, entries=None):
        """Every counter of the card's endpoints (entries: how many from
        0), one 64-bit read each. live=True/False selects the live or the
        snapshot copy first (READ_SEL); None reads what READ_SEL shows."""
        if live is not None:
            self.write('READ_SEL', live=int(bool(live)))
        n = self.layout.used if entries is None else entries
        lines = ['readq 0x%x' % (self.base + self.layout.address(e))
                 for e in range(n)]
        values = [int(r[0], 16) for r in self.machine.batch(lines)]
        return Counters(self.layout, values, live, self.machine.now)

    def __repr__(self):
        if self.function is None:
            return 'Card(%r, traffic=%r, id=%r)' % (self.props, self.traffic,
                                                    self.id)
        return 'Card(%s at %s, BAR0 0x%x + 0x%x)' % (
            self.id, self.bdf, self.bar0, self.block_offset)


_MODELS = ('idle', 'pattern', 'random', 'ptc', 'replay', 'scenario',
           'plugin')


class Machine:
    """A QEMU under -accel qtest (qtest and QMP on Unix sockets) with the
    given cards, started at once (start=False: call start()); a context
    manager that shuts it down.

    machine: 'q35' (ECAM, the device tree) or 'pc' (CF8/CFC only);
    qemu: the binary (default: QTEST_QEMU_BINARY); extra_args: more of
    QEMU's command line; timeout: seconds any one answer may take (None:
    no limit; a QEMU that exits is noticed either way); incoming: start
    with -incoming defer for load()."""

    def __init__(self, cards=(), qemu=None, machine='q35', extra_args=(),
                 timeout=120.0, start_timeout=30.0, incoming=False,
                 regmap=None, pci_hole=None, start=True):
        self.cards = [c if isinstance(c, Card) else Card(**c) for c in cards]
        self.qemu_argv = resolve_qemu(qemu)
        self.machine = machine
        self.extra_args = list(extra_args)
        self.timeout = timeout
        self.start_timeout = start_timeout
        self.incoming = incoming
        self.regmap = load_regmap(regmap)
        kind = machine.split(',')[0]
        self.is_q35 = kind == 'q35' or kind.startswith('pc-q35')
        self.pci_hole = pci_hole or ((0xc0000000 if self.is_q35 else
                                      0xe0000000), 0xfec00000)
        self.process = None
        self.closed = False
        self.qtest = None
        self.qmp_client = None
        self.t0 = None
        self.enumeration = None
        self._tmp = None
        for i, c in enumerate(self.cards):
            c.id = c.id or 'ndk%d' % i
            if isinstance(c.traffic, Traffic):
                c.traffic.id = c.traffic.id or 't%d' % i
        if start:
            self.start()

    # ------------------------------------------------------------ life
    def argv(self):
        args = list(self.qemu_argv) + [
            '-machine', self.machine, '-nodefaults', '-display', 'none',
            '-accel', 'qtest']
        seen = set()
        for c in self.cards:
            if isinstance(c.traffic, Traffic) and id(c.traffic) not in seen:
                seen.add(id(c.traffic))
                args += ['-object', c.traffic.object_arg()]
        args += self.extra_args
        for c in self.cards:
            args += ['-device', c.device_arg(self.regmap.qemu['device'])]
        if self.incoming:
            args += ['-incoming', 'defer']
        return args

    def start(self):
        self._tmp = tempfile.mkdtemp(prefix='ndk-telemetry-')
        qtest_path = os.path.join(self._tmp, 'qtest.sock')
        qmp_path = os.path.join(self._tmp, 'qmp.sock')
        lq, lm = listen_unix(qtest_path), listen_unix(qmp_path)
        argv = self.argv()
        argv[len(self.qemu_argv):len(self.qemu_argv)] = [
            '-qtest', 'unix:' + qtest_path, '-qtest-log', '/dev/null',
            '-chardev', 'socket,path=%s,id=ndkqmp' % qmp_path,
            '-mon', 'chardev=ndkqmp,mode=control']
        self.command_line = argv
        self.process = QemuProcess(argv, os.path.join(self._tmp, 'qemu.log'))
        self._finalizer = weakref.finalize(self, _cleanup, self.process,
                                           self._tmp)
        try:
            conns = []
            for listener, what in ((lq, 'qtest'), (lm, 'QMP')):
                conn = accept(listener, self.process, self.start_timeout,
                              what)
                if conn is None:
                    self._start_failed(what)
                conns.append(conn)
            lq.close()
            lm.close()
            self.qtest = QTest(LineChannel(conns[0], self.process),
                               self.timeout)
            self.qmp_client = Qmp(LineChannel(conns[1], self.process),
                                  self.timeout)
            self.t0 = self.qtest.clock_now()
        except QemuDied as e:
            # a property QEMU refuses stops it after it has connected
            self.kill()
            raise self._start_error(
                'QEMU exited while starting (%s)' %
                describe_status(e.returncode), e.returncode, e.stderr_tail)
        except BaseException:
            self.kill()
            raise
        try:
            if not self.incoming:
                self._bind_cards(assign=True)
        except BaseException:
            self.kill()
            raise
        return self

    def _start_failed(self, what):
        rc = self.process.wait(2)
        if rc is None:
            self.process.kill()
            msg = 'QEMU did not connect its %s socket within %s s' % (
                what, self.start_timeout)
        else:
            msg = 'QEMU exited while starting (%s)' % describe_status(rc)
        raise self._start_error(msg, rc, self.process.stderr_tail())

    def _start_error(self, what, rc, tail):
        """QemuStartError whose first line is QEMU's own error, so that
        pytest --tb=line shows the cause; then what happened, the command
        line and the rest of QEMU's stderr."""
        tail = tail or ''
        first = qemu_error_line(tail, self.qemu_argv[0])
        lines = [first] if first else []
        lines.append(what)
        lines.append('command line: ' + ' '.join(shlex.quote(a)
                                                 for a in self.command_line))
        if not tail.strip():
            lines.append('its stderr: (empty)')
        elif tail.strip() != first:
            lines.append('its stderr:\n' + tail)
        return QemuStartError('\n'.join(lines), returncode=rc,
                              stderr_tail=tail)

    @property
    def pid(self):
        return self.process.pid

    @property
    def returncode(self):
        return self.process.returncode

    def alive(self):
        return self.process is not None and self.process.alive()

    def stderr(self):
        """What QEMU wrote to stdout and stderr so far."""
        return self.process.stderr_text() if self.process else ''

    def close(self, timeout=10.0):
        """quit over QMP, and kill QEMU if it has not exited after timeout
        seconds; then remove the sockets and the log."""
        if self.closed or self.process is None:
            return
        self.closed = True
        if self.process.alive() and self.qmp_client is not None:
            try:
                self.qmp_client.command('quit', timeout=timeout)
            except NdkError:
                pass
            if self.process.wait(timeout) is None:
                self.process.kill()
        self.kill()

    shutdown = close

    def kill(self):
        """Kill QEMU at once (SIGKILL) and clean up."""
        self.closed = True
        for ch in (self.qtest, self.qmp_client):
            if ch is not None:
                ch.ch.close()
        if self.process is not None:
            self.process.kill()
        if getattr(self, '_finalizer', None):
            self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ----------------------------------------------------- virtual time
    @property
    def now(self):
        """The virtual clock in ns."""
        return self.qtest.clock_now()

    def clock_step(self, ns):
        """Advance virtual time by ns; returns the new time."""
        return self.qtest.clock_step(ns)

    def clock_set(self, t):
        """Advance virtual time to t (not before now); returns it."""
        return self.qtest.clock_set(t)

    step_to = clock_set

    def batch(self, lines):
        """qtest commands written BATCH at a time; their answers."""
        out = []
        for i in range(0, len(lines), BATCH):
            out += self.qtest.batch(lines[i:i + BATCH])
        return out

    # -------------------------------------------------------------- QMP
    def qmp(self, name, timeout=False, **args):
        """Any QMP command; its return value, QmpError on an error."""
        return self.qmp_client.command(name, timeout=timeout, **args)

    def qom_get(self, path, prop):
        return self.qmp('qom-get', path=path, property=prop)

    def qom_set(self, path, prop, value):
        self.qmp('qom-set', path=path, property=prop, value=value)

    def hmp(self, line):
        """A human monitor command; its output."""
        return self.qmp('human-monitor-command', **{'command-line': line})

    def stop(self):
        self.qmp('stop')

    def cont(self):
        self.qmp('cont')

    def wait_migration(self, timeout=60.0):
        end = time.monotonic() + timeout
        while True:
            st = self.qmp('query-migrate').get('status', 'none')
            if st == 'completed':
                return
            if st in ('failed', 'cancelled'):
                raise QmpError('migrate', {'desc': 'migration %s' % st})
            if time.monotonic() > end:
                raise QmpError('migrate', {'desc': 'migration still %s '
                                           'after %s s' % (st, timeout)})
            time.sleep(0.002)

    def save(self, path):
        """Stop the VM and migrate its state into the file at path."""
        self.stop()
        self.qmp('migrate', uri='file:' + os.path.abspath(path))
        self.wait_migration()

    def load(self, path, now=None):
        """On a machine started with incoming=True: load the state saved
        at path, continue, bring the virtual clock to `now` (the qtest
        clock is not part of the stream) and find the cards, whose BARs
        and bus numbers came with the state."""
        if not self.incoming:
            raise CardError('load: start the machine with incoming=True')
        self.qmp('migrate-incoming', uri='file:' + os.path.abspath(path))
        self.wait_migration()
        self.cont()
        if now is not None:
            self.clock_set(now)
        self._bind_cards(assign=False)

    def twin(self, incoming=False, start=True):
        """A machine with the same command line (cards copied)."""
        return Machine([c.copy() for c in self.cards], qemu=self.qemu_argv,
                       machine=self.machine, extra_args=self.extra_args,
                       timeout=self.timeout, start_timeout=self.start_timeout,
                       incoming=incoming, regmap=self.regmap.path,
                       pci_hole=self.pci_hole, start=start)

    def migrate(self, path=None):
        """A round trip: save into a file (path, or one in a temporary
        directory), quit this QEMU, start a twin with -incoming defer,
        load the file and continue at this machine's virtual time. Returns
        the twin, whose cards count on from where these stopped."""
        t = self.now
        tmp = None
        if path is None:
            tmp = tempfile.mkdtemp(prefix='ndk-telemetry-mig-')
            path = os.path.join(tmp, 'state.mig')
        try:
            self.save(path)
            t0s = [c.t0 for c in self.cards]
            self.close()
            twin = self.twin(incoming=True)
            try:
                twin.load(path, now=t)
            except BaseException:
                twin.kill()
                raise
            for c, t0 in zip(twin.cards, t0s):
                c.t0 = t0
            return twin
        finally:
            if tmp:
                shutil.rmtree(tmp, ignore_errors=True)

    # -------------------------------------------------------------- PCI
    def _config_access(self):
        if not self.is_q35:
            return pci.Cf8Config(self.qtest)
        cf8 = pci.Cf8Config(self.qtest)
        bar = cf8.read(0, 0, 0, pci.Q35_PCIEXBAR)
        if bar & 1:
            return pci.EcamConfig(self.qtest, bar & 0xf0000000)
        return pci.enable_q35_ecam(self.qtest)

    def _qdev_bdfs(self):
        """{qdev id: (bus, slot, function)} from query-pci, {} if it
        fails."""
        out = {}

        def walk(devices):
            for d in devices:
                if d.get('qdev_id'):
                    out[d['qdev_id']] = (d['bus'], d['slot'], d['function'])
                br = d.get('pci_bridge')
                if br:
                    walk(br.get('devices', []))
        try:
            for bus in self.qmp('query-pci'):
                walk(bus.get('devices', []))
        except QmpError:
            return {}
        return out

    def _bind_cards(self, assign):
        cfg = self._config_access()
        enum = pci.Enumeration(cfg, assign_buses=assign)
        self.enumeration = enum
        where = self._qdev_bdfs()
        q = self.regmap.qemu
        chosen, used = [], set()
        for c in self.cards:
            ids = (_int(c.props.get('vendor-id', q['vendor_id'])),
                   _int(c.props.get('device-id', q['device_id'])))
            f = enum.at(*where[c.id]) if c.id in where else None
            if f is None:
                spare = [x for x in enum.find(*ids) if id(x) not in used]
                if not spare:
                    raise CardError('card %s (%04x:%04x) is not on the bus '
                                    '(found: %s)' % (c.id, ids[0], ids[1],
                                                     enum.functions))
                f = spare[0]
            if (f.vendor, f.device) != ids:
                raise CardError('card %s at %s is %04x:%04x, not %04x:%04x' %
                                (c.id, f.bdf, f.vendor, f.device, *ids))
            used.add(id(f))
            chosen.append(f)
        if assign:
            placed = pci.assign_bars(enum, chosen, *self.pci_hole)
            bars = []
            for f in chosen:
                bar = [p for p in placed[f] if p[0] == 0]
                if not bar:
                    raise CardError('%s has no memory BAR0' % f.bdf)
                bars.append(bar[0][1:])
        else:
            bars = [(f.bar_address(0), _live_bar_size(f, 0)) for f in chosen]
        for c, f, (addr, size) in zip(self.cards, chosen, bars):
            c._bind(self, f, addr, size, self.t0)
            if isinstance(c.traffic, Traffic):
                c.traffic.machine = self

    def card(self, key=0):
        """A card by index or id."""
        if isinstance(key, int):
            return self.cards[key]
        for c in self.cards:
            if c.id == key:
                return c
        raise CardError('no card %r (there are: %s)' % (
            key, ', '.join(c.id for c in self.cards)))

    def __repr__(self):
        return 'Machine(%s, %d cards, %s)' % (
            self.machine, len(self.cards),
            'pid %d' % self.pid if self.process else 'not started')


def _live_bar_size(f, index):
    """A BAR's size on a function that decodes it: decoding off, all
    ones, the address and decoding back."""
    cmd = f.read(pci.COMMAND, 2)
    f.write(pci.COMMAND, cmd & ~pci.CMD_MEMORY, 2)
    sizes = {i: s for i, s, _ in f.bars()}
    f.write(pci.COMMAND, cmd, 2)
    return sizes.get(index)


def _cleanup(process, tmp):
    if process is not None and process.alive():
        process.kill()
    shutil.rmtree(tmp, ignore_errors=True)

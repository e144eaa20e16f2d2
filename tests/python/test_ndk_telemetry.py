#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Unit tests of the ndk_telemetry package against the real QEMU.

usage: QTEST_QEMU_BINARY=build/qemu-system-x86_64 PYTHONPATH=python \
           tests/python/test_ndk_telemetry.py [--tap] [TestClass[.test]]

Expected values come from the documentation: the register values and
formulas of docs/ndk-pcie-telemetry.md and the pattern's closed forms
(pattern_model.py), never from a reading of the card. Without QEMU the
run fails (TAP: Bail out!).
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
if os.path.join(REPO, 'python') not in sys.path:
    sys.path.insert(0, os.path.join(REPO, 'python'))

import pattern_model as pm                                     # noqa: E402
import tap_unittest                                            # noqa: E402
from ndk_telemetry import (Card, CardError, Machine, QemuDied,  # noqa: E402
                           QemuNotFound, QemuStartError, QemuTimeout,
                           QmpError, RegmapNotFound, Traffic, find_regmap,
                           load_regmap, resolve_qemu)
from ndk_telemetry.machine import qemu_error_line               # noqa: E402

# docs/ndk-pcie-telemetry.md, "Register map": the configuration registers
# of a card with the defaults (0x08 to 0x3C without 0x20 to 0x28)
DOC_DEFAULTS = {
    'CFG_TOPOLOGY': 0x00020101, 'CFG_LAYOUT': 0x30300040,
    'CFG_PCIE': 0x0E02021F, 'CFG_DMA': 0x00020211, 'CFG_DRAIN': 0x00041000,
    'CNT_BASE': 0x00008000, 'CFG_REGIONS': 0x02020202,
    'CFG_WIDTH': 0x00200020, 'CFG_HIST': 0x00000204,
    'CFG_CAPACITY': 0x04000100, 'CFG_WIDTH_DMA': 0x00200020,
}
MAGIC, VERSION = 0x50544C4D, 0x00020000

# every bus busy, stalls and gaps, two MVB items a DMA frame, BRAKE bits
# at a 25 % duty, tags and storage FIFO in bands 1 and 2
RICH = {
    'rq-frame-bytes': 256, 'rc-frame-bytes': 96, 'rc-stall': 1, 'rc-gap': 2,
    'up-frame-bytes': 100, 'up-gap': 3, 'up-stall': 2, 'up-mvb-items': 2,
    'down-frame-bytes': 64, 'down-stall': 2, 'down-gap': 1,
    'brake': 0x15, 'brake-duty': 25, 'tags-free': 20, 'stfifo-free': 300,
}
# the C QTest's pattern (tests/qtest, PATTERN_ARGS)
SIMPLE = {'rq-frame-bytes': 256, 'up-frame-bytes': 100, 'up-gap': 3,
          'up-stall': 2, 'tags-free': 100, 'brake': 5}


def machine(*cards, **kw):
    return Machine(list(cards), **kw)


def pattern_card(params, props=None, **kw):
    return Card(props, traffic=Traffic('pattern', params), **kw)


class Registers(unittest.TestCase):

    def test_default_config_registers(self):
        rm = load_regmap()
        for name, want in DOC_DEFAULTS.items():
            self.assertEqual(rm.register(name).default, want,
                             'the JSON map\'s default of %s' % name)
        self.assertEqual(rm.register('MAGIC').value, MAGIC)
        with machine(Card()) as m:
            card = m.cards[0]
            for name, want in DOC_DEFAULTS.items():
                self.assertEqual(card.read(name), want, name)
            self.assertEqual(card.read('MAGIC'), MAGIC)
            version = card.read('VERSION')
            self.assertEqual(version, VERSION)
            self.assertEqual((version.major, version.minor), (2, 0))
            lay = card.reg('CFG_LAYOUT')
            self.assertEqual((lay.entries, lay.cnt_width, lay.per_endpoint),
                             (64, 48, 48))
            self.assertEqual(card.read('STATUS'), 0)
            self.assertEqual(card.read('READ_SEL'), 0)
            # the live registers before the first drain's word
            self.assertEqual(card.read('PCIE_TAGS', endpoint=0), 0x07FF0000)
            self.assertEqual(card.read('PCIE_STFIFO', endpoint=0), 0xFFFF0000)
            self.assertEqual(card.read('PCIE_TAGS', endpoint=1), 0)
            with self.assertRaises(CardError):
                card.read('COMMAND')
            with self.assertRaises(CardError):
                card.write('STATUS', 1)
            with self.assertRaises(CardError):
                card.write('COMMAND', snapshoot=1)
            card.write('READ_SEL', live=1)
            self.assertEqual(card.read('READ_SEL').live, 1)

    def test_fields_follow_properties(self):
        props = {'pcie-endpoints': 2, 'dma-ports': 2,
                 'pcie-rq-mfb-regions': 4, 'cnt-width': 40,
                 'drain-period': 8192, 'tag-capacity': 512,
                 'stfifo-capacity': 2048}
        # the docs' layout: PCIe probe 1 + 2 (6 + R) + 6 + 8 with R = 4,
        # DMA probe 1 + 2 ports x 2 buses x (6 + 2)
        pcie, dma = 1 + 2 * (6 + 4) + 14, 1 + 2 * 2 * (6 + 2)
        with machine(Card(props)) as m:
            card = m.cards[0]
            topo = card.read('CFG_TOPOLOGY')
            self.assertEqual((topo.endpoints, topo.dma_ports, topo.probes),
                             (2, 2, 4))
            lay = card.read('CFG_LAYOUT')
            self.assertEqual((lay.entries, lay.cnt_width, lay.per_endpoint),
                             (256, 40, pcie + dma))
            p = card.read('CFG_PCIE')
            self.assertEqual((p.channels, p.buses, p.regions, p.brakes),
                             (pcie, 2, 4, 14))
            d = card.read('CFG_DMA')
            self.assertEqual((d.channels, d.buses, d.regions, d.brakes),
                             (dma, 4, 2, 0))
            self.assertEqual(card.read('CFG_DRAIN').drain_period, 8192)
            r = card.read('CFG_REGIONS')
            self.assertEqual((r.rq, r.rc, r.up, r.down), (4, 2, 2, 2))
            cap = card.read('CFG_CAPACITY')
            self.assertEqual((cap.tags, cap.stfifo), (512, 2048))
            # counter names by the layout rule: endpoint e at e x 68, its
            # DMA probe after the PCIe probe's 35 channels, bus b's block
            # at 1 + b (6 + R)
            L = card.layout
            cpe = pcie + dma
            self.assertEqual(L.entry('pcie.cycles', endpoint=1), cpe)
            self.assertEqual(L.entry('RC.region3'), 1 + 10 + 6 + 3)
            self.assertEqual(L.entry('UP1.words', endpoint=1),
                             cpe + pcie + 1 + 2 * 8)
            self.assertEqual(L.entry('DOWN1.region1'), pcie + 1 + 3 * 8 + 7)
            self.assertEqual(L.entry('brake.no_completion_header_entry',
                                     endpoint=1), cpe + 1 + 20 + 3)
            self.assertEqual(L.entry('hist.stfifo.3'), 1 + 20 + 6 + 4 + 3)
            self.assertEqual(L.name(cpe + pcie), 'ep1.dma.cycles')
            with self.assertRaises(CardError):
                L.entry('RQ.words', endpoint=2)
            with self.assertRaises(CardError):
                L.entry('UP2.words')

    def test_live_registers(self):
        # PCIE_STATUS at the host's reset settings (MPS 128 B, MRRS 512 B,
        # extended tags on; 10-bit tags and RCB 128 off) and the source's
        # link; the free values of the pattern, now and at the lowest
        with machine(pattern_card({'tags-free': 100, 'stfifo-free': 300}),
                     pattern_card({'link-up': False})) as m:
            a, b = m.cards
            m.clock_set(a.mid_window(2))
            st = a.read('PCIE_STATUS', endpoint=0)
            self.assertEqual((st.mps, st.mrrs, st.ext_tag, st.tag_10bit,
                              st.rcb_128, st.link_up), (0, 2, 1, 0, 0, 1))
            tags = a.read('PCIE_TAGS', endpoint=0)
            self.assertEqual((tags.free, tags.lowest), (100, 100))
            fifo = a.read('PCIE_STFIFO', endpoint=0)
            self.assertEqual((fifo.free, fifo.lowest), (300, 300))
            self.assertEqual(b.read('PCIE_STATUS', endpoint=0).link_up, 0)
            # CLEAR_LOWEST: the lowest fields at their maximum from the
            # second MI cycle after the write
            a.clear_lowest()
            m.clock_step(20)
            self.assertEqual(a.read('PCIE_TAGS', endpoint=0).lowest, 0x7FF)
            self.assertEqual(a.read('PCIE_STFIFO', endpoint=0).lowest,
                             0xFFFF)


class Counting(unittest.TestCase):

    def check_all(self, got, exp, what):
        bad = [(i, got[i], exp[i]) for i in range(len(got))
               if got[i] != exp[i]]
        self.assertEqual(bad, [], '%s: (entry, counter, expected)' % what)

    def test_every_counter_of_a_pattern(self):
        geo = pm.Geometry()
        with machine(pattern_card(RICH)) as m:
            card = m.cards[0]
            t = card.mid_window(9)
            m.clock_set(t)
            w = card.cycle('mi')
            # SNAPSHOT of the default 64 entries: BUSY falls 3 + 2 x 64 MI
            # cycles after the write's
            self.assertEqual(card.snapshot(), 3 + 2 * 64)
            self.assertEqual(card.cycle('mi'), w + 131)
            exp = pm.expect_card(geo, [(None, RICH)], t)
            snap = card.counters(live=False)
            self.check_all(snap, exp, 'snapshot copy')
            self.check_all(card.counters(live=True), exp, 'live copy')
            # names against the layout's rule (PCIe probe: RQ bus 0, RC
            # bus 1, BRAKE at 17, bands at 23 and 27; DMA probe at 31)
            self.assertEqual(snap['pcie.cycles'], 9 * 4096 - 1)
            self.assertEqual(snap['RQ.words'], exp[1])
            self.assertEqual(snap['RC.stall'], exp[9 + 1])
            self.assertEqual(snap['RQ.region1'], exp[1 + 6 + 1])
            self.assertEqual(snap['ep0.UP0.mvb'], exp[31 + 1 + 3])
            self.assertEqual(snap.get('DOWN.mvb_stall'), exp[31 + 9 + 4])
            ep = snap.endpoint(0)
            self.assertEqual(ep.dma_cycles, 4 * 4096 - 1)
            self.assertEqual(ep.bus('UP0').items, exp[31 + 1 + 5])
            self.assertEqual(ep.bus('RC').region, exp[9 + 6:9 + 8])
            self.assertEqual(ep.brake['no_room_for_completions'], exp[19])
            self.assertEqual(ep.hist['tags'], exp[23:27])
            self.assertEqual(ep.hist['stfifo'], exp[27:31])
            # the 25 % duty: BRAKE bit 0 (channel 17, slot 1: its windows
            # end 5 cycles after the cycle counter's) counts cycles 1 ..
            # 36867, on in the first 16 of every 64: 576 whole periods,
            # cycles 36864 .. 36867, but not cycle 0
            self.assertEqual(ep.brake['no_free_pcie_tag'], 576 * 16 + 4 - 1)
            self.assertEqual(card.read('STATUS'), 0)

    def test_after_an_hour_unread(self):
        geo = pm.Geometry()
        with machine(pattern_card(RICH)) as m:
            card = m.cards[0]
            t = card.mid_window(3600 * 400000000 // 4096)
            m.clock_step(t)
            card.snapshot()
            self.check_all(card.counters(),
                           pm.expect_card(geo, [(None, RICH)], t), 'an hour')

    def test_two_endpoints_two_ports(self):
        props = {'pcie-endpoints': 2, 'dma-ports': 2}
        geo = pm.Geometry(props)
        with machine(pattern_card(RICH, props)) as m:
            card = m.cards[0]
            t = card.mid_window(7)
            m.clock_set(t)
            card.snapshot()
            got = card.counters()
            self.assertEqual(len(got), 2 * geo.per_endpoint)
            self.check_all(got, pm.expect_card(geo, [(None, RICH)], t),
                           '2 x 2')
            self.assertEqual(got.get('UP1.words', endpoint=1),
                             got.get('UP0.words'))

    def test_snapshot_holds_clear_zeroes(self):
        geo = pm.Geometry()
        with machine(pattern_card(SIMPLE)) as m:
            card = m.cards[0]
            t3 = card.mid_window(3)
            m.clock_set(t3)
            card.snapshot()
            t6 = card.mid_window(6)
            m.clock_set(t6)
            # the snapshot copy still holds the state of t3
            self.check_all(card.counters(live=False),
                           pm.expect_card(geo, [(None, SIMPLE)], t3), 'held')
            self.check_all(card.counters(live=True),
                           pm.expect_card(geo, [(None, SIMPLE)], t6), 'live')
            self.assertEqual(card.clear(), 3 + 2 * 64)
            self.assertEqual(card.counters(live=True).values, [0] * 48)
            self.assertEqual(card.counters(live=False).values, [0] * 48)
            # CLEAR does not reach the probes: the next delta holds its
            # whole window
            m.clock_set(card.mid_window(7))
            self.assertEqual(card.counters(live=True)['pcie.cycles'], 4096)

    def test_lost_flag(self):
        # load 3 x 3 x (31 x 400 + 17 x 200) / (1024 x 100) = 1.39
        with machine(Card({'pcie-endpoints': 3, 'drain-period': 1024}),
                     Card()) as m:
            lossy, fine = m.cards
            m.clock_step(1000000)
            self.assertEqual(lossy.read('STATUS').lost, 1)
            self.assertEqual(fine.read('STATUS').lost, 0)
            self.assertIn('accumulator load', m.stderr())


class Generators(unittest.TestCase):

    def test_qom_set_takes_effect(self):
        geo = pm.Geometry()
        v1 = dict(SIMPLE, **{'rq-frame-bytes': 100})
        v2 = dict(v1, brake=2)
        with machine(pattern_card(SIMPLE)) as m:
            card = m.cards[0]
            self.assertEqual(card.traffic.get('rq-frame-bytes'), 256)
            m.clock_set(15000)
            card.traffic.set('rq-frame-bytes', 100)
            self.assertEqual(m.qom_get('/objects/t0', 'rq-frame-bytes'), 100)
            m.clock_set(35000)
            m.qom_set(card.traffic.path, 'brake', 2)
            t = card.mid_window(9)
            m.clock_set(t)
            card.snapshot()
            got = card.counters().values
            exp = pm.expect_card(geo, [(None, SIMPLE), (15000, v1),
                                       (35000, v2)], t)[:48]
            old = pm.expect_card(geo, [(None, SIMPLE)], t)
            self.assertNotEqual(exp[6], old[6], 'the change moves RQ items')
            self.assertEqual(got, exp)

    def test_qom_set_refused(self):
        with machine(pattern_card(SIMPLE)) as m:
            card = m.cards[0]
            with self.assertRaises(QmpError) as cm:
                card.traffic.set('rq-frame-bytes', 70000)
            self.assertIn('rq-frame-bytes', cm.exception.desc)
            self.assertEqual(card.traffic.get('rq-frame-bytes'), 256)


class Migration(unittest.TestCase):

    def phase1(self, m, t1):
        card = m.cards[0]
        m.clock_set(3000)
        card.write('READ_SEL', live=1)
        m.clock_set(15000)
        card.snapshot()
        # a SNAPSHOT still running at T1
        m.clock_set(t1 - 200)
        card.snapshot(wait=False)
        m.clock_set(t1)

    def phase2(self, m, t2):
        card = m.cards[0]
        m.clock_set(t2)
        out = {'status': card.read('STATUS'),
               'read_sel': card.read('READ_SEL'),
               'tags': card.read('PCIE_TAGS', endpoint=0),
               'live': card.counters().values,
               'snap1': card.counters(live=False).values}
        card.snapshot()
        out['snap2'] = card.counters().values
        return out

    def test_round_trip(self):
        geo = pm.Geometry()
        t1 = 31000
        with tempfile.TemporaryDirectory() as tmp:
            a = machine(pattern_card(SIMPLE))
            try:
                t2 = a.cards[0].mid_window(24)
                self.phase1(a, t1)
                b = a.migrate(os.path.join(tmp, 'state.mig'))
            finally:
                a.close()
            with b:
                self.assertEqual(b.now, t1)
                self.assertEqual(b.cards[0].read('STATUS').busy, 1)
                rb = self.phase2(b, t2)
        with machine(pattern_card(SIMPLE)) as c:
            self.phase1(c, t1)
            rc = self.phase2(c, t2)
        self.assertEqual(rb, rc)
        self.assertEqual(rb['read_sel'], 1)
        exp = pm.expect_card(geo, [(None, SIMPLE)], t2)[:48]
        self.assertEqual(rb['live'], exp)
        self.assertEqual(rb['snap2'], exp)
        self.assertGreater(rb['snap1'][0], 0)


class Failures(unittest.TestCase):

    def test_killed_qemu(self):
        with machine(Card()) as m:
            card = m.cards[0]
            self.assertEqual(card.read('MAGIC'), MAGIC)
            os.kill(m.pid, signal.SIGKILL)
            start = time.monotonic()
            with self.assertRaises(QemuDied) as cm:
                card.read('MAGIC')
            self.assertLess(time.monotonic() - start, 10)
            self.assertEqual(cm.exception.returncode, -signal.SIGKILL)
            self.assertIn('killed by signal 9 (SIGKILL)', str(cm.exception))
            with self.assertRaises(QemuDied):
                m.qmp('query-status')

    def test_killed_during_a_long_step(self):
        # a card whose accumulator cannot keep up, stepped a minute: the
        # step takes host seconds, and QEMU is killed meanwhile
        with machine(Card({'pcie-endpoints': 16, 'dma-ports': 4},
                          traffic='random')) as m:
            killer = threading.Timer(0.5, os.kill, (m.pid, signal.SIGKILL))
            killer.start()
            start = time.monotonic()
            try:
                with self.assertRaises(QemuDied) as cm:
                    m.clock_step(60 * 10 ** 9)
                    m.cards[0].read('STATUS')
            finally:
                killer.cancel()
            self.assertLess(time.monotonic() - start, 15)
            self.assertIn('SIGKILL', str(cm.exception))

    def test_stopped_qemu_times_out(self):
        with machine(Card(), timeout=1.0) as m:
            os.kill(m.pid, signal.SIGSTOP)
            try:
                with self.assertRaises(QemuTimeout):
                    m.cards[0].read('MAGIC')
            finally:
                os.kill(m.pid, signal.SIGCONT)

    def test_bad_property(self):
        with self.assertRaises(QemuStartError) as cm:
            machine(Card({'drain-period': 1000}))
        self.assertIn("property 'drain-period' is 1000", str(cm.exception))
        self.assertEqual(cm.exception.returncode, 1)

    def test_start_error_names_qemus_error_first(self):
        # QEMU's own words for a property the device lacks (as it prints
        # them on its stderr), then what happened and the command line
        with self.assertRaises(QemuStartError) as cm:
            machine(Card({'no-such-prop': 1}))
        lines = str(cm.exception).splitlines()
        self.assertRegex(
            lines[0], r"^qemu-system-x86_64: -device ndk-pcie-telemetry,"
            r"id=ndk0,no-such-prop=1: Property "
            r"'ndk-pcie-telemetry\.no-such-prop' not found$")
        self.assertEqual(lines[1], 'QEMU exited while starting '
                                   '(exit status 1)')
        self.assertTrue(lines[2].startswith('command line: '), lines)
        self.assertIn('-accel qtest', lines[2])
        self.assertIn('no-such-prop', cm.exception.stderr_tail)
        self.assertEqual(cm.exception.returncode, 1)

    def test_qemu_error_line(self):
        # warnings and hints around the error are not the error
        err = ('qemu-system-x86_64: warning: a warning\n'
               'qemu-system-x86_64: -device x,y=1: the error\n'
               'a hint on a line of its own\n'
               'qemu-system-x86_64: warning: another warning\n')
        self.assertEqual(qemu_error_line(err, '/p/qemu-system-x86_64'),
                         'qemu-system-x86_64: -device x,y=1: the error')
        self.assertEqual(qemu_error_line('my-qemu: bad\n', 'bin/my-qemu'),
                         'my-qemu: bad')
        self.assertEqual(qemu_error_line('only words\n\n'), 'only words')
        self.assertIsNone(qemu_error_line('q: warning: w\n'))
        self.assertIsNone(qemu_error_line(''))

    def test_no_qemu(self):
        saved = os.environ.pop('QTEST_QEMU_BINARY', None)
        try:
            with self.assertRaises(QemuNotFound) as cm:
                machine(Card())
            self.assertIn('QTEST_QEMU_BINARY', str(cm.exception))
            os.environ['QTEST_QEMU_BINARY'] = '/nonexistent/qemu'
            with self.assertRaises(QemuNotFound) as cm:
                machine(Card())
            self.assertIn('QTEST_QEMU_BINARY=/nonexistent/qemu',
                          str(cm.exception))
        finally:
            if saved is None:
                os.environ.pop('QTEST_QEMU_BINARY', None)
            else:
                os.environ['QTEST_QEMU_BINARY'] = saved


class Placement(unittest.TestCase):

    def test_block_offset_from_the_device_tree(self):
        with machine(Card({'block-offset': 0x20000, 'pcie-endpoints': 2,
                           'devtree': True})) as m:
            card = m.cards[0]
            self.assertEqual(card.block_offset, 0x20000)
            # BAR0: the smallest power of two >= block-offset + 0x10000
            self.assertEqual(card.bar0_size, 0x40000)
            node = card.devtree_node
            self.assertEqual(node.cells('reg'), [0x20000, 0x10000])
            self.assertEqual(node.u32('version'), VERSION)
            self.assertEqual(node.u32('pcie-endpoints'), 2)
            fw = card.devtree.child('firmware')
            self.assertEqual(fw.string('card-name'), 'QEMU-NDK-TELEMETRY')
            self.assertEqual(card.read('CFG_TOPOLOGY').endpoints, 2)
            self.assertEqual(card.bar_read(0), 0)
            self.assertEqual(card.bar_read(0x20000), MAGIC)
            m.clock_set(15000)
            self.assertEqual(card.counters(live=True)['pcie.cycles'], 4095)

    def test_block_offset_given(self):
        with machine(Card({'block-offset': 0x1000, 'devtree': False},
                          block_offset=0x1000)) as m:
            card = m.cards[0]
            self.assertIsNone(card.devtree)
            self.assertEqual(card.bar0_size, 0x20000)
            self.assertEqual(card.read('MAGIC'), MAGIC)
        with self.assertRaises(CardError):
            machine(Card({'block-offset': 0x1000}, block_offset=0x2000))

    def test_pc_machine(self):
        with machine(pattern_card(SIMPLE), machine='pc') as m:
            card = m.cards[0]
            self.assertIsNone(card.devtree)
            self.assertEqual(card.read('MAGIC'), MAGIC)
            m.clock_set(card.mid_window(2))
            card.snapshot()
            self.assertEqual(card.counters()['pcie.cycles'], 2 * 4096 - 1)

    def test_cards_behind_a_root_port(self):
        with machine(Card({'bus': 'rp0'}), Card({'pcie-endpoints': 3}),
                     extra_args=['-device', 'pcie-root-port,id=rp0,'
                                 'chassis=1,slot=1']) as m:
            behind, root = m.cards
            self.assertEqual(behind.function.bus, 1)
            self.assertEqual(root.function.bus, 0)
            self.assertEqual(behind.read('CFG_TOPOLOGY').endpoints, 1)
            self.assertEqual(root.read('CFG_TOPOLOGY').endpoints, 3)
            self.assertNotEqual(behind.bar0, root.bar0)
            self.assertEqual(m.card('ndk1'), root)



def _has_pytest():
    return subprocess.run([sys.executable, '-c', 'import pytest'],
                          capture_output=True).returncode == 0


def _run_pytest(source, args=(), qemu=None, strict=None):
    """pytest (of sys.executable) on a test file of `source` with the
    plugin loaded by -p, in a directory of its own; QTEST_QEMU_BINARY is
    `qemu` (None: as in this process), NDK_TELEMETRY_STRICT `strict`
    (None: unset). Returns the CompletedProcess, stdout and stderr in
    one."""
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, 'test_one.py'), 'w') as f:
            f.write(source)
        env = {k: v for k, v in os.environ.items()
               if k not in ('NDK_TELEMETRY_STRICT', 'PYTEST_ADDOPTS')}
        env['PYTHONPATH'] = os.path.join(REPO, 'python')
        if qemu is not None:
            env['QTEST_QEMU_BINARY'] = qemu
        if strict is not None:
            env['NDK_TELEMETRY_STRICT'] = strict
        return subprocess.run(
            [sys.executable, '-m', 'pytest', '-q', '-rfEs',
             '-p', 'no:cacheprovider', '-p', 'ndk_telemetry.pytest_plugin']
            + list(args), cwd=d, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True)


class Packaging(unittest.TestCase):
    JSON = os.path.join(REPO, 'guest-tool', 'regmap',
                        'pcie-telemetry-regs.json')

    def test_regmap_of_the_clone_and_the_variable(self):
        saved = os.environ.pop('NDK_TELEMETRY_REGMAP', None)
        try:
            self.assertEqual(os.path.realpath(find_regmap()),
                             os.path.realpath(self.JSON))
            os.environ['NDK_TELEMETRY_REGMAP'] = '/nonexistent/regs.json'
            with self.assertRaises(RegmapNotFound) as cm:
                find_regmap()
            self.assertIn('NDK_TELEMETRY_REGMAP', str(cm.exception))
        finally:
            os.environ.pop('NDK_TELEMETRY_REGMAP', None)
            if saved is not None:
                os.environ['NDK_TELEMETRY_REGMAP'] = saved

    def test_regmap_of_an_installed_prefix(self):
        # the package and the map where an installation puts them, no
        # clone around: the map is found under the prefix
        with tempfile.TemporaryDirectory() as prefix:
            site = os.path.join(prefix, 'lib', 'python3', 'dist-packages')
            shutil.copytree(os.path.join(REPO, 'python', 'ndk_telemetry'),
                            os.path.join(site, 'ndk_telemetry'))
            share = os.path.join(prefix, 'share', 'pcie-telemetry')
            os.makedirs(share)
            shutil.copy(self.JSON, share)
            env = {k: v for k, v in os.environ.items()
                   if k not in ('NDK_TELEMETRY_REGMAP', 'PYTHONPATH')}
            env['PYTHONPATH'] = site
            r = subprocess.run(
                [sys.executable, '-S', '-c', 'import ndk_telemetry as n; '
                 'print(n.find_regmap()); '
                 'print(n.load_regmap().register("MAGIC").value)'],
                env=env, capture_output=True, text=True, cwd=prefix)
            self.assertEqual(r.returncode, 0, r.stderr)
            path, magic = r.stdout.split()
            self.assertEqual(path, os.path.join(share,
                                                'pcie-telemetry-regs.json'))
            self.assertEqual(int(magic), MAGIC)

    @unittest.skipUnless(_has_pytest(), 'pytest is not installed for %s' %
                         sys.executable)
    def test_plugin_from_a_conftest(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, 'conftest.py'), 'w') as f:
                f.write("pytest_plugins = ['ndk_telemetry.pytest_plugin']\n")
            with open(os.path.join(d, 'test_one.py'), 'w') as f:
                f.write('def test_magic(ndk_card):\n'
                        '    assert ndk_card().read("MAGIC") == %d\n' % MAGIC)
            env = dict(os.environ, PYTHONPATH=os.path.join(REPO, 'python'))
            env.pop('NDK_TELEMETRY_STRICT', None)
            cmd = [sys.executable, '-m', 'pytest', '-q', '-rs',
                   '-p', 'no:cacheprovider']
            r = subprocess.run(cmd, cwd=d, env=env, capture_output=True,
                               text=True)
            self.assertIn('1 passed', r.stdout, r.stdout + r.stderr)
            env.pop('QTEST_QEMU_BINARY', None)
            r = subprocess.run(cmd, cwd=d, env=env, capture_output=True,
                               text=True)
            self.assertIn('1 skipped', r.stdout)
            self.assertIn('QTEST_QEMU_BINARY', r.stdout)


@unittest.skipUnless(_has_pytest(), 'pytest is not installed for %s' %
                     sys.executable)
class PytestPlugin(unittest.TestCase):
    MAGIC_TEST = ('def test_magic(ndk_card):\n'
                  '    assert ndk_card().read("MAGIC") == %d\n' % MAGIC)
    MISSING = '/nonexistent/qemu-system-x86_64'
    REASON = 'QTEST_QEMU_BINARY=%s: %s is not an executable file' % (
        MISSING, MISSING)

    def test_no_qemu_skips_by_default(self):
        for strict in (None, '0', ''):
            r = _run_pytest(self.MAGIC_TEST, qemu=self.MISSING,
                            strict=strict)
            self.assertEqual(r.returncode, 0, r.stdout)
            self.assertRegex(r.stdout, r'(?m)^1 skipped in ', r.stdout)
            self.assertIn('SKIPPED', r.stdout)
            self.assertIn(self.REASON, r.stdout)
            self.assertNotIn('failed', r.stdout)

    def test_no_qemu_fails_in_strict_mode(self):
        for args, strict in (((), '1'), (('--ndk-strict',), None),
                             (('--ndk-strict',), '0')):
            r = _run_pytest(self.MAGIC_TEST, args, qemu=self.MISSING,
                            strict=strict)
            what = '%s NDK_TELEMETRY_STRICT=%r:\n%s' % (args, strict,
                                                         r.stdout)
            self.assertEqual(r.returncode, 1, what)
            self.assertRegex(r.stdout, r'(?m)^1 failed in ', what)
            self.assertNotIn('skipped', r.stdout, what)
            self.assertIn('FAILED test_one.py::test_magic', r.stdout, what)
            self.assertIn('Failed: ndk_telemetry: ' + self.REASON, r.stdout,
                          what)

    def test_strict_mode_passes_with_qemu(self):
        r = _run_pytest(self.MAGIC_TEST, ['--ndk-strict'], strict='1')
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertRegex(r.stdout, r'(?m)^1 passed in ', r.stdout)

    def test_start_error_in_tb_line(self):
        # pytest --tb=line prints one line a failure: QEMU's error
        r = _run_pytest('def test_bad(ndk_card):\n'
                        '    ndk_card({"no-such-prop": 1})\n',
                        ['--tb=line'])
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertRegex(
            r.stdout, r"(?m)^\S+machine\.py:\d+: ndk_telemetry\.errors\."
            r"QemuStartError: qemu-system-x86_64: -device "
            r"ndk-pcie-telemetry,id=ndk0,no-such-prop=1: Property "
            r"'ndk-pcie-telemetry\.no-such-prop' not found$", r.stdout)


if __name__ == '__main__':
    try:
        resolve_qemu()
    except QemuNotFound as e:
        print('1..0\nBail out! %s' % e)
        sys.exit(1)
    if '--tap' in sys.argv:
        sys.exit(tap_unittest.main(sys.modules[__name__]))
    unittest.main()

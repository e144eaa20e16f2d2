#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A soak run (a benchmark that prints figures, not a test): QEMU under
# -accel qtest with one default card and ptc traffic for --hours of virtual
# time, every counter read every virtual second (SNAPSHOT, BUSY polled in
# small steps, STATUS, every entry). Every access and the qtest clock it
# happened at goes into a schedule that build/tests/ptm-soak-ref replays
# on the QEMU-free core while QEMU runs: the model's results depend only on
# the (time, access) pairs, so the core must read exactly QEMU's values,
# and at interval 1 and every --sample'th interval a reference core
# (per cycle) loaded with the fast core's state must read them too.
# Checks:
#  (a) the sampled intervals agree with the reference, and all of them with
#      the fast core;
#  (b) no delta is lost (STATUS bit 1 never set);
#  (c) QEMU's VmRSS grows by at most 1 MiB after the first virtual hour
#      (after half the run when it is shorter than 2 h).
# Exits 1 when a check fails.
#
# usage: tests/bench/soak.py [--hours H] [--sample N] [--qemu PATH]
#                            [--schedule FILE]

import argparse
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
REF = os.path.join(REPO, 'build', 'tests', 'ptm-soak-ref')
sys.path.insert(0, os.path.join(REPO, 'python'))
from ndk_telemetry import Card as NdkCard, Machine  # noqa: E402
PCIE_CAP = 0x80                         # where the device puts it
REG_LAYOUT, REG_COMMAND, REG_STATUS, REG_READ_SEL = 0x0C, 0x20, 0x24, 0x28
CNT_BASE = 0x8000
STATUS_BUSY, STATUS_LOST = 1, 2
BUSY_STEP_NS = 500
SEC = 1000000000


def _qemu_table():
    """tests/bench/qemu-table.py as a module (its name has a hyphen)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        'qemu_table', os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                   'qemu-table.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# CPU time of all threads of a process (ns), as qemu-table.py measures it
cpu_ns = _qemu_table().cpu_ns


def rss_kib(pid):
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    raise RuntimeError('no VmRSS for %d' % pid)


class Card:
    """QEMU under qtest (through ndk_telemetry); every BAR access is
    logged with its clock."""

    def __init__(self, qemu, log):
        # no timeout: a step of a virtual second may take a while; a QEMU
        # that exits is reported either way
        self.m = Machine([NdkCard(traffic='ptc')], qemu=qemu, timeout=None)
        self.card = self.m.cards[0]
        self.pid = self.m.pid
        self.base = self.card.base
        self.log = log
        self.clock = self.m.now
        self.pending = []           # commands sent, replies not yet read

    def send(self, cmds):
        """
        Send commands (text, kind) in one write; replies come later. A
        command None is a line for the log in its place among the replies.
        """
        self.m.qtest.send([c for c, _ in cmds if c])
        self.pending += cmds

    def replies(self):
        """Read the replies of everything sent: (kind, value) each."""
        out = []
        for cmd, kind in self.pending:
            if cmd is None:
                self.log.append(kind)
                continue
            out.append(self.account(kind, self.m.qtest.reply()))
        self.pending = []
        return out

    def account(self, kind, words):
        """Log a reply's access at the clock it happened at."""
        if kind[0] == 'step':
            self.clock = self.m.qtest.now = int(words[0])
            return None
        if kind[0] == 'w':
            _, addr, size, val = kind
            self.log.append('w %d %x %d %x\n' % (self.clock, addr, size, val))
            return None
        if kind[0] == 'r':
            _, addr, size = kind
            val = int(words[0], 16)
            self.log.append('r %d %x %d %x\n' % (self.clock, addr, size, val))
            return val
        return int(words[0], 16) if words else None

    @staticmethod
    def step(ns):
        return ('clock_step %d' % ns, ('step',))

    def write(self, off, val):
        return ('writel 0x%x 0x%x' % (self.base + off, val),
                ('w', off, 4, val))

    def readl(self, off):
        return ('readl 0x%x' % (self.base + off), ('r', off, 4))

    def readq(self, off):
        return ('readq 0x%x' % (self.base + off), ('r', off, 8))

    def ask(self, cmds):
        self.send(cmds)
        return self.replies()

    def start(self):
        """What the device did to its core before the first access."""
        devctl = self.card.config_read(PCIE_CAP + 0x08) & 0xFFFF
        lnkctl = self.card.config_read(PCIE_CAP + 0x10) & 0xFFFF
        devctl2 = self.card.config_read(PCIE_CAP + 0x28) & 0xFFFF
        # mps mrrs ext_tag tag_10bit rcb_128, as ndk_telemetry_sync_settings
        settings = '%x %x %x %x %x' % (
            devctl >> 5 & 7, devctl >> 12 & 7, devctl >> 8 & 1,
            devctl2 >> 12 & 1, lnkctl >> 3 & 1)
        # realize (power-on, settings), the machine's reset, and the
        # configuration writes of enumeration and BAR assignment (each
        # syncs the settings, unchanged), all at 0
        self.log += ['power_on 0\n', 'settings 0 %s\n' % settings,
                     'reset 0\n', 'settings 0 %s\n' % settings,
                     'settings 0 %s\n' % settings]
        self.ask([self.step(1000)])
        return self.card.layout.entries

    def close(self):
        self.m.kill()


class Ref:
    """ptm-soak-ref reading the schedule as it is written."""

    def __init__(self, path, sample, copy):
        self.p = subprocess.Popen([path, '--sample', str(sample)],
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE)
        self.copy = open(copy, 'w') if copy else None

    def feed(self, log):
        text = ''.join(log)
        del log[:]
        if self.copy:
            self.copy.write(text)
        self.p.stdin.write(text.encode())

    def finish(self):
        self.p.stdin.close()
        out = self.p.stdout.read().decode()
        self.p.wait()
        if self.copy:
            self.copy.close()
        return dict(l.split('=', 1) for l in out.split('\n') if '=' in l)


def main():
    ap = argparse.ArgumentParser(
        description='QEMU with a default card and ptc traffic for hours of '
        'virtual time, every counter read every virtual second, replayed on '
        'the core and, sampled, on the reference; prints figures.')
    ap.add_argument('--hours', type=float, default=24,
                    help='virtual hours (default 24)')
    ap.add_argument('--sample', type=int, default=600,
                    help='check interval 1 and every Nth against the '
                    'reference (default 600)')
    ap.add_argument('--qemu', default=os.path.join(REPO, 'build',
                                                   'qemu-system-x86_64'))
    ap.add_argument('--schedule', help='keep a copy of the schedule here')
    a = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)

    intervals = int(round(a.hours * 3600))
    if intervals < 1:
        ap.error('--hours: at least one virtual second')
    # RSS growth is measured from 1 h on, or from half a shorter run
    base_k = 3600 if intervals >= 7200 else max(1, intervals // 2)
    log = []
    ref = Ref(REF, a.sample, a.schedule)
    card = Card(a.qemu, log)
    wall = time.monotonic()
    lost_at = []
    busy_steps = extra_polls = 0
    polls = 1
    ok = True
    try:
        entries = card.start()
        cpu0 = cpu_ns(card.pid)
        counters = [card.readq(CNT_BASE + 8 * e) for e in range(entries)]
        reads = []
        for k in range(1, intervals + 1):
            # the previous interval's counters, the step to this one and its
            # SNAPSHOT go in one write with the first BUSY poll; the log
            # still gets each access at its own clock
            poll = [card.step(BUSY_STEP_NS), card.readl(REG_STATUS)]
            card.send(reads + [(None, 'interval %d\n' % k),
                               card.step(k * SEC - card.clock),
                               card.write(REG_READ_SEL, 0),
                               card.write(REG_COMMAND, 1)] + poll * polls)
            reads = []
            statuses = card.replies()[-2 * polls + 1::2]
            while statuses[-1] & STATUS_BUSY:
                card.send(poll)
                statuses.append(card.replies()[-1])
            # as many polls in one write next time; any past the first
            # clear STATUS (BUSY shorter than the last time) are counted
            done = next(i for i, st in enumerate(statuses)
                        if not st & STATUS_BUSY)
            extra_polls += len(statuses) - done - 1
            polls = done + 1
            busy_steps += len(statuses)
            if any(st & STATUS_LOST for st in statuses):
                lost_at.append(k)
            if k == base_k or k % 3600 == 0 or k == intervals:
                card.ask(counters)
                rss = rss_kib(card.pid)
                if k == base_k:
                    rss_base = rss
                print('virtual %.2f h: wall %.0f s, QEMU CPU %.1f s, '
                      'RSS %d KiB' % (k / 3600, time.monotonic() - wall,
                                      (cpu_ns(card.pid) - cpu0) / 1e9,
                                      rss),
                      file=sys.stderr, flush=True)
            else:
                reads = counters
            ref.feed(log)
        if reads:
            card.ask(reads)
        log.append('end\n')
        ref.feed(log)
        rss_end = rss_kib(card.pid)
        cpu = (cpu_ns(card.pid) - cpu0) / 1e9
    except BaseException:
        ref.p.kill()
        raise
    finally:
        card.close()
    res = ref.finish()
    wall = time.monotonic() - wall

    def get(key):
        return int(res.get(key, -1))

    checked, ref_bad = get('checked'), get('ref_mismatches')
    fast_bad = get('fast_mismatches')
    growth = rss_end - rss_base
    print('virtual hours          %g (%d intervals of 1 s)' % (
        intervals / 3600, intervals))
    print('wall time              %.0f s' % wall)
    print('QEMU CPU               %.1f s (%.5f CPU s per virtual s)' % (
        cpu, cpu / intervals))
    print('replay CPU             %s s (reference %s s, at most %s s '
          'per interval)' % (res.get('cpu_s'), res.get('ref_cpu_s'),
                             res.get('ref_cpu_max_s')))
    print('reads                  %s in %s accesses; %d BUSY polls, %d '
          'past the first clear one' % (res.get('reads'), res.get('accesses'),
                                        busy_steps, extra_polls))
    print('fast core vs QEMU      %d reads differ' % fast_bad)
    print('reference checked      %d intervals (1 and every %d), %d reads '
          'differ' % (checked, a.sample, ref_bad))
    print('lost deltas            %d intervals with STATUS.lost, %s deltas '
          'lost in the core' % (len(lost_at), res.get('lost_deltas')))
    print('RSS                    %d KiB at %.2f h, %d KiB at the end, '
          'growth %d KiB' % (rss_base, base_k / 3600, rss_end, growth))

    if res.get('complete') != '1' or get('check_failures') != 0:
        print('FAIL replay: %s' % res)
        ok = False
    good = checked > 0 and ref_bad == 0 and fast_bad == 0
    print('%s (a) counts agree with the reference' % ('PASS' if good
                                                      else 'FAIL'))
    good_b = not lost_at and get('lost_deltas') == 0
    print('%s (b) no delta lost%s' % ('PASS' if good_b else 'FAIL',
                                       '' if not lost_at else
                                       ' (first at interval %d)' % lost_at[0]))
    good_c = growth <= 1024
    print('%s (c) RSS growth <= 1 MiB' % ('PASS' if good_c else 'FAIL'))
    return 0 if ok and good and good_b and good_c else 1


if __name__ == '__main__':
    sys.exit(main())
